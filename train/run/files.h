// Small file utilities for a run directory: SHA-256, whole-file reads, fsync,
// and atomic replace-by-rename writes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gradiens::train {

// The SHA-256 digest of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

// The whole file; throws gradiens::Error naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// fsync of a file or a directory (a directory's fsync makes renames and
// creations inside it durable).
void fsync_path(const std::filesystem::path& path);

// Creates or truncates `path`, writes `bytes` and fsyncs it. Not atomic: for
// files inside a directory that is itself renamed into place afterwards.
void write_file_synced(const std::filesystem::path& path, std::string_view bytes);

// Replaces `path` so that a crash leaves either the old or the new contents:
// writes a temporary file beside it, fsyncs it, renames it over `path` and
// fsyncs the directory.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace gradiens::train

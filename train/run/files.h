// Small file utilities for a run directory: SHA-256, whole-file reads, fsync,
// atomic replace-by-rename writes, and doubles in JSON (NaN and infinities too).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

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

// JSON has no NaN or infinity (nlohmann would write null, which does not read
// back as the value): they are written as "nan", "inf" and "-inf"; finite
// values as numbers, in the shortest text that reads back exactly.
nlohmann::json double_to_json(double value);
// The inverse; anything else is a gradiens::Error naming `what`.
double double_from_json(const nlohmann::json& value, std::string_view what);

}  // namespace gradiens::train

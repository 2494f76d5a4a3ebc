// c10::make_tempfile(): a uniquely named file, removed when the returned object
// is destroyed, as libtorch's <c10/util/tempfile.h>.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace c10 {

struct TempFile {
  explicit TempFile(std::string name) : name(std::move(name)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  TempFile(TempFile&& other) noexcept : name(std::move(other.name)) { other.name.clear(); }
  ~TempFile() {
    if (!name.empty()) std::remove(name.c_str());
  }
  std::string name;
};

// A new empty file under $TMPDIR (or /tmp) whose name starts with `name_prefix`.
inline TempFile make_tempfile(std::string name_prefix = "torch-file-") {
  const char* directory = std::getenv("TMPDIR");
  std::string path = std::string(directory && *directory ? directory : "/tmp") + "/" + name_prefix + "XXXXXX";
  std::vector<char> buffer(path.begin(), path.end());
  buffer.push_back('\0');
  const int fd = mkstemp(buffer.data());
  TORCH_CHECK(fd != -1, "Error generating temporary file: ", path);
  close(fd);
  return TempFile(std::string(buffer.data()));
}

}  // namespace c10

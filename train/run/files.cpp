// SHA-256 through OpenSSL's EVP interface, and POSIX file writes that check
// every call, because a silently short checkpoint is worse than a crash.
#include "train/run/files.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "kernels/error.h"

namespace gradiens::train {
namespace {

std::string errno_message(int error) { return std::error_code(error, std::generic_category()).message(); }

// Closes the descriptor on every path out, including exceptions.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Closes now so that a failing close (possible on NFS) is reported.
  int close() {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd);
  }

 private:
  int fd_;
};

void write_all(int fd, std::string_view bytes, const std::filesystem::path& shown) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, std::min<size_t>(left, size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("cannot write '{}': {}", shown.string(), n < 0 ? errno_message(errno) : "no progress"));
    data += n;
    left -= static_cast<size_t>(n);
  }
}

void fsync_and_close(FileDescriptor& file, const std::filesystem::path& shown) {
  if (::fsync(file.get()) != 0)
    throw Error(fmt::format("cannot write '{}': fsync failed: {}", shown.string(), errno_message(errno)));
  if (file.close() != 0)
    throw Error(fmt::format("cannot write '{}': close failed: {}", shown.string(), errno_message(errno)));
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length != 32)
    throw Error("sha256: OpenSSL EVP_Digest failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * length, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  return hex;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read '{}': {}", path.string(), errno_message(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(fmt::format("cannot read '{}': read failed", path.string()));
  return bytes;
}

void fsync_path(const std::filesystem::path& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) throw Error(fmt::format("cannot fsync '{}': {}", path.string(), errno_message(errno)));
  if (::fsync(file.get()) != 0) {
    int error = errno;
    // Some file systems cannot fsync a directory at all (EINVAL); the data
    // written through it was fsynced already, so that is not a failure.
    struct stat info {};
    if (error == EINVAL && ::fstat(file.get(), &info) == 0 && S_ISDIR(info.st_mode)) return;
    throw Error(fmt::format("cannot fsync '{}': {}", path.string(), errno_message(error)));
  }
}

void write_file_synced(const std::filesystem::path& path, std::string_view bytes) {
  FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (file.get() < 0) throw Error(fmt::format("cannot write '{}': {}", path.string(), errno_message(errno)));
  write_all(file.get(), bytes, path);
  fsync_and_close(file, path);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  // A name unique to this process and call, so that two writers never share
  // a temporary file; O_EXCL guards against a stale one of the same name.
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = path;
    temp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    throw Error(fmt::format("cannot write '{}': creating a temporary file failed: {}", path.string(),
                            errno_message(errno)));
  FileDescriptor file(fd);
  try {
    write_all(file.get(), bytes, path);
    fsync_and_close(file, path);
    if (::rename(temp.c_str(), path.c_str()) != 0)
      throw Error(fmt::format("cannot write '{}': renaming '{}' over it failed: {}", path.string(), temp.string(),
                              errno_message(errno)));
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  std::filesystem::path dir = path.parent_path();
  fsync_path(dir.empty() ? std::filesystem::path(".") : dir);
}

nlohmann::json double_to_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double double_from_json(const nlohmann::json& value, std::string_view what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "nan") return std::nan("");
    if (text == "inf") return HUGE_VAL;
    if (text == "-inf") return -HUGE_VAL;
  }
  throw Error(fmt::format("{} is {}, not a number, \"nan\", \"inf\" or \"-inf\"", what,
                          value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

}  // namespace gradiens::train

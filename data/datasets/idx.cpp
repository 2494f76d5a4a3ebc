// The IDX reader: the header is checked against the input before anything is
// allocated, and a gzip stream is inflated straight into the tensor's memory.
#include "data/datasets/idx.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/functions.h"

// Note [IDX layout]
// An IDX file (LeCun's MNIST page) is: a 4-byte magic number 0x0000TTNN, with
// TT the element type (0x08 ubyte, 0x09 signed byte, 0x0B short, 0x0C int,
// 0x0D float, 0x0E double) and NN the number of dimensions; NN big-endian
// 4-byte sizes; then the elements in row-major order, big-endian. Nothing
// else: the element bytes must end the file exactly.
//
// Note [IDX validation]
// A file is untrusted input. The reader checks, in order: the magic number
// (its first two bytes zero, a known type, 1 to kMaxDims dimensions), that the
// sizes are all there, that their product times the element size fits in
// int64, and then the data. Uncompressed, the data must fill the rest of the
// input exactly, checked before allocating. Gzipped, the length of the
// inflated stream is unknown until the end, but deflate cannot expand data
// more than kMaxDeflateRatio times, so a header claiming more than that of the
// compressed bytes is rejected as truncated before allocating; the stream is
// then inflated into the tensor and must end (crc and length verified by zlib)
// exactly where the data does.

namespace gradiens::data::datasets {

namespace {

constexpr size_t kMaxDims = 64;
// A deflate block can encode at most 258 bytes in about 2 bits: a ratio of
// 1032:1, the bound zlib's documentation gives.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct IdxType {
  uint8_t code;
  std::string_view name;  // as the IDX spec calls it
  size_t file_size;       // bytes per element in the file
  ScalarType dtype;       // what the tensor holds
};

constexpr IdxType kIdxTypes[] = {
    {0x08, "unsigned byte", 1, kUInt8}, {0x09, "signed byte", 1, kInt32}, {0x0B, "short", 2, kInt32},
    {0x0C, "int", 4, kInt32},           {0x0D, "float", 4, kFloat32},     {0x0E, "double", 8, kFloat64},
};

const IdxType* find_type(uint8_t code) {
  for (const IdxType& t : kIdxTypes)
    if (t.code == code) return &t;
  return nullptr;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f && static_cast<uint8_t>(bytes[1]) == 0x8b;
}

// The input, raw or inflated, read front to back.
class Source {
 public:
  virtual ~Source() = default;
  // Fills dst[0, n) and returns n, or fewer bytes where the input ends.
  virtual size_t read(uint8_t* dst, size_t n) = 0;
  // Throws unless the input is used up (for gzip: the stream ends and checks out).
  virtual void expect_end(std::string_view what) = 0;
};

class RawSource final : public Source {
 public:
  RawSource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(uint8_t* dst, size_t n) override {
    size_t count = std::min(n, bytes_.size() - position_);
    if (count > 0) std::memcpy(dst, bytes_.data() + position_, count);
    position_ += count;
    return count;
  }
  void expect_end(std::string_view) override {}  // the byte count was checked up front
  size_t remaining() const { return bytes_.size() - position_; }

 private:
  std::string_view bytes_;
  size_t position_ = 0;
};

// Inflates one gzip member after another, as gzip(1) and Python's gzip module
// do; zero bytes after the last member are padding, anything else an error.
class GzipSource final : public Source {
 public:
  GzipSource(std::string_view bytes, std::string_view name) : name_(name) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    // 16 + MAX_WBITS: a gzip wrapper, not zlib's own.
    int rc = inflateInit2(&stream_, 16 + MAX_WBITS);
    if (rc != Z_OK) throw Error(fmt::format("{}: cannot start gzip decompression (zlib error {})", name_, rc));
    remaining_input_ = bytes.size();
  }
  ~GzipSource() override { inflateEnd(&stream_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(uint8_t* dst, size_t n) override {
    size_t produced = 0;
    while (produced < n && !finished_) {
      if (member_ended_ && !start_next_member()) break;
      // avail_in and avail_out are 32-bit: feed and drain at most 1 GiB a call.
      constexpr size_t kChunk = size_t{1} << 30;
      uInt in_now = static_cast<uInt>(std::min(remaining_input_, kChunk));
      uInt out_now = static_cast<uInt>(std::min(n - produced, kChunk));
      stream_.avail_in = in_now;
      stream_.next_out = dst + produced;
      stream_.avail_out = out_now;
      int rc = inflate(&stream_, Z_NO_FLUSH);
      remaining_input_ -= in_now - stream_.avail_in;
      produced += out_now - stream_.avail_out;
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc == Z_DATA_ERROR) {
        throw Error(fmt::format("{}: corrupt gzip data ({})", name_, stream_.msg ? stream_.msg : "invalid stream"));
      } else if (rc == Z_MEM_ERROR) {
        throw Error(fmt::format("{}: out of memory while decompressing", name_));
      } else if (rc == Z_BUF_ERROR) {
        // No progress possible: the compressed input ran out mid-stream.
        throw Error(fmt::format("{}: truncated gzip file (the compressed stream ends early)", name_));
      } else if (rc != Z_OK) {
        throw Error(fmt::format("{}: gzip decompression failed (zlib error {})", name_, rc));
      }
    }
    return produced;
  }

  void expect_end(std::string_view what) override {
    uint8_t extra;
    if (read(&extra, 1) != 0)
      throw Error(fmt::format("{}: the decompressed file is longer than {}", name_, what));
  }

 private:
  // After a member's end: true when another member follows (and is started).
  bool start_next_member() {
    const uint8_t* rest = stream_.next_in;
    if (remaining_input_ >= 2 && rest[0] == 0x1f && rest[1] == 0x8b) {
      inflateReset(&stream_);
      member_ended_ = false;
      return true;
    }
    for (size_t i = 0; i < remaining_input_; ++i)
      if (rest[i] != 0)
        throw Error(fmt::format("{}: {} bytes of data that is not gzip follow the gzip stream", name_,
                                remaining_input_));
    finished_ = true;
    return false;
  }

  z_stream stream_{};
  std::string name_;
  size_t remaining_input_ = 0;
  bool member_ended_ = false;
  bool finished_ = false;
};

// Reverses the byte order of each `width`-byte element in place.
void swap_bytes(uint8_t* data, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

}  // namespace

Tensor read_idx_from_bytes(std::string_view bytes, std::string_view name) {
  const bool gzipped = is_gzip(bytes);
  std::unique_ptr<Source> source;
  RawSource* raw = nullptr;
  if (gzipped) {
    source = std::make_unique<GzipSource>(bytes, name);
  } else {
    auto owned = std::make_unique<RawSource>(bytes);
    raw = owned.get();
    source = std::move(owned);
  }
  // What "the file" means in messages about sizes: after decompression for gzip.
  const std::string_view file_kind = gzipped ? "the decompressed file" : "the file";

  std::array<uint8_t, 4> magic_bytes{};
  size_t got = source->read(magic_bytes.data(), 4);
  if (got < 4)
    throw Error(fmt::format("{}: not an IDX file: {} has {} bytes, fewer than the 4 of the magic number", name,
                            file_kind, got));
  const uint32_t magic = big_endian_u32(magic_bytes.data());
  if (magic_bytes[0] != 0 || magic_bytes[1] != 0)
    throw Error(fmt::format("{}: not an IDX file: bad magic number 0x{:08X} (its first two bytes must be zero)", name,
                            magic));
  const IdxType* type = find_type(magic_bytes[2]);
  if (type == nullptr)
    throw Error(fmt::format("{}: bad IDX magic number 0x{:08X}: unknown data type 0x{:02X} (expected 0x08, 0x09, "
                            "0x0B, 0x0C, 0x0D or 0x0E)",
                            name, magic, magic_bytes[2]));
  const size_t ndims = magic_bytes[3];
  if (ndims == 0 || ndims > kMaxDims)
    throw Error(fmt::format("{}: bad IDX magic number 0x{:08X}: {} dimensions (1 to {} are supported)", name, magic,
                            ndims, kMaxDims));

  std::vector<uint8_t> dim_bytes(4 * ndims);
  got = source->read(dim_bytes.data(), dim_bytes.size());
  if (got < dim_bytes.size())
    throw Error(fmt::format("{}: truncated IDX header: {} dimensions need {} bytes after the magic number, {} has {}",
                            name, ndims, dim_bytes.size(), file_kind, got));
  std::vector<int64_t> sizes(ndims);
  // The data's byte count, with overflow checks (every size < 2^32, so one
  // division per step is enough).
  uint64_t numel = 1;
  bool overflow = false;
  // An empty tensor's strides are still the products of its nonzero sizes.
  uint64_t span = 1;
  bool span_overflow = false;
  const uint64_t int64_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (size_t d = 0; d < ndims; ++d) {
    uint32_t size = big_endian_u32(dim_bytes.data() + 4 * d);
    sizes[d] = size;
    if (size != 0 && numel > int64_max / size) overflow = true;
    numel *= size;
    if (size != 0 && span > int64_max / size) span_overflow = true;
    if (size != 0) span *= size;
  }
  if (overflow || numel > int64_max / type->file_size)
    throw Error(fmt::format("{}: IDX dimensions [{}] overflow: more than 2^63 bytes of data", name,
                            fmt::join(sizes, ", ")));
  if (span_overflow)
    throw Error(fmt::format("{}: IDX dimensions [{}] are too large: a tensor of that shape has strides beyond 2^63",
                            name, fmt::join(sizes, ", ")));
  const uint64_t data_bytes = numel * type->file_size;
  const auto describe = [&] {
    return fmt::format("IDX dimensions [{}] of {} ({} bytes each) need {} bytes of data", fmt::join(sizes, ", "),
                       type->name, type->file_size, data_bytes);
  };
  if (raw != nullptr && raw->remaining() != data_bytes)
    throw Error(fmt::format("{}: {}: {}, but the file holds {}", name,
                            raw->remaining() < data_bytes ? "truncated IDX file" : "IDX file too long", describe(),
                            raw->remaining()));
  if (gzipped && data_bytes / kMaxDeflateRatio > bytes.size())
    throw Error(fmt::format("{}: truncated gzip IDX file: {}, more than {} compressed bytes can hold", name,
                            describe(), bytes.size()));

  Tensor result;
  try {
    result = empty(sizes, TensorOptions().dtype(type->dtype));
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format("{}: cannot allocate memory: {}", name, describe()));
  }
  // Narrow types are widened into int32: read them into a buffer first.
  const bool widen = element_size(type->dtype) != type->file_size;
  std::vector<uint8_t> narrow;
  uint8_t* target = static_cast<uint8_t*>(result.cpu_data_ptr());
  if (widen) {
    narrow.resize(data_bytes);
    target = narrow.data();
  }
  got = source->read(target, data_bytes);
  if (got < data_bytes)
    throw Error(fmt::format("{}: truncated IDX file: {}, but {} holds {}", name, describe(), file_kind, got));
  source->expect_end(fmt::format("its IDX header and data ({} bytes)", 4 + dim_bytes.size() + data_bytes));

  if (widen) {
    int32_t* out = result.cpu_data_ptr<int32_t>();
    if (type->file_size == 1) {
      for (uint64_t i = 0; i < numel; ++i) out[i] = static_cast<int8_t>(narrow[i]);
    } else {
      for (uint64_t i = 0; i < numel; ++i)
        out[i] = static_cast<int16_t>(static_cast<uint16_t>((narrow[2 * i] << 8) | narrow[2 * i + 1]));
    }
  } else if (type->file_size > 1 && std::endian::native == std::endian::little) {
    swap_bytes(target, numel, type->file_size);
  }
  return result;
}

Tensor read_idx(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string bytes;
  std::error_code ignored;  // the size is only a hint for the buffer
  if (auto size = std::filesystem::file_size(path, ignored); !ignored) bytes.reserve(size);
  std::array<char, 1 << 16> chunk;
  size_t n;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), file.get())) > 0) bytes.append(chunk.data(), n);
  if (std::ferror(file.get())) throw Error(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  return read_idx_from_bytes(bytes, path);
}

}  // namespace gradiens::data::datasets

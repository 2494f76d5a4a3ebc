// libFuzzer target for the IDX reader: any input must either load or throw
// gradiens::Error, and whatever loads must read back the same once rewritten.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "data/datasets/idx.h"

namespace {

// The IDX bytes of `t`: int32 tensors as IDX int (0x0C), whatever type they came from.
std::string to_idx(const gradiens::Tensor& t) {
  uint8_t type = 0;
  switch (t.dtype()) {
    case gradiens::kUInt8: type = 0x08; break;
    case gradiens::kInt32: type = 0x0C; break;
    case gradiens::kFloat32: type = 0x0D; break;
    case gradiens::kFloat64: type = 0x0E; break;
    default: std::abort();  // the reader makes no other dtype
  }
  std::string out = {0, 0, static_cast<char>(type), static_cast<char>(t.dim())};
  for (int64_t size : t.sizes())
    for (int shift : {24, 16, 8, 0}) out += static_cast<char>((static_cast<uint64_t>(size) >> shift) & 0xff);
  const size_t width = t.element_size();
  const auto* data = static_cast<const char*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i)
    for (size_t b = width; b-- > 0;) out += data[i * width + b];  // big-endian
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gradiens::Tensor loaded;
  try {
    loaded = gradiens::data::datasets::read_idx_from_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const gradiens::Error&) {
    return 0;  // a clear error is the right answer to a bad file
  }
  // A file that loads is valid, so its rewrite must load to the same tensor.
  gradiens::Tensor again = gradiens::data::datasets::read_idx_from_bytes(to_idx(loaded));
  const size_t bytes = static_cast<size_t>(loaded.numel()) * loaded.element_size();
  if (again.dtype() != loaded.dtype() || again.sizes() != loaded.sizes()) std::abort();
  if (bytes > 0 && std::memcmp(again.data_ptr(), loaded.data_ptr(), bytes) != 0) std::abort();
  return 0;
}

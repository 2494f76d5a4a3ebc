// libFuzzer target for the safetensors reader: any input must either load or
// throw gradiens::Error, and whatever loads must survive a save/load round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/io/safetensors.h"

namespace {

// The bytes of every tensor, in name order, with its dtype and shape.
bool same_contents(const gradiens::SafetensorsFile& a, const gradiens::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (auto ia = a.tensors.begin(), ib = b.tensors.begin(); ia != a.tensors.end(); ++ia, ++ib) {
    const gradiens::Tensor &x = ia->second, &y = ib->second;
    if (ia->first != ib->first || x.dtype() != y.dtype() || x.sizes() != y.sizes()) return false;
    size_t bytes = static_cast<size_t>(x.numel()) * x.element_size();
    if (bytes > 0 && std::memcmp(x.data_ptr(), y.data_ptr(), bytes) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gradiens::SafetensorsFile loaded;
  try {
    loaded = gradiens::load_from_bytes_with_metadata(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const gradiens::Error&) {
    return 0;  // a clear error is the right answer to a bad file
  }
  // A file that loads is valid, so writing it back must work and read back the same.
  std::string saved = gradiens::save_to_bytes(loaded.tensors, loaded.metadata);
  gradiens::SafetensorsFile again = gradiens::load_from_bytes_with_metadata(saved);
  if (!same_contents(loaded, again)) std::abort();
  if (gradiens::save_to_bytes(again.tensors, again.metadata) != saved) std::abort();
  return 0;
}

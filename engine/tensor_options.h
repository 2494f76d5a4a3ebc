// TensorOptions: dtype, device and requires_grad for factories, chained as in
// libtorch: TensorOptions().dtype(kFloat64).requires_grad(true).
#pragma once

#include <iosfwd>
#include <optional>

#include "engine/device.h"
#include "kernels/scalar_type.h"

namespace gradiens {

// How a dense 4-d (5-d) tensor lays its elements out in memory, as in PyTorch:
// Contiguous is NCHW row-major, ChannelsLast is NHWC (strides ordered
// C < W < H < N), Preserve keeps the layout of the tensor it is derived from.
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
constexpr MemoryFormat contiguous_format = MemoryFormat::Contiguous;
constexpr MemoryFormat preserve_format = MemoryFormat::Preserve;
constexpr MemoryFormat channels_last = MemoryFormat::ChannelsLast;
constexpr MemoryFormat channels_last_3d = MemoryFormat::ChannelsLast3d;

// How a tensor stores its elements, as PyTorch's torch.layout: Strided (dense,
// sizes and strides) or Sparse (COO indices and values, engine/sparse.h).
enum class Layout : int8_t { Strided, Sparse };
constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::Sparse;
// Prints "Strided" or "Sparse", as libtorch.
std::ostream& operator<<(std::ostream& out, Layout layout);

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(DeviceType device) : device_(Device(device)) {}
  TensorOptions(Layout layout) : layout_(layout) {}
  TensorOptions(MemoryFormat memory_format) : memory_format_(memory_format) {}
  // TensorOptions("cuda:1"); explicit, so that to("cuda") still means to(Device).
  explicit TensorOptions(const char* device) : device_(Device(device)) {}

  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType type, int index) const { return device(Device(type, index)); }
  // The cuda device of that index, as libtorch's device_index.
  TensorOptions device_index(int index) const { return device(Device(kCUDA, index)); }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  TensorOptions memory_format(MemoryFormat f) const { auto o = *this; o.memory_format_ = f; return o; }
  TensorOptions layout(Layout l) const { auto o = *this; o.layout_ = l; return o; }
  // The dtype of the C++ type T: TensorOptions().dtype<float>().
  template <class T>
  TensorOptions dtype() const { return dtype(scalar_type_of<T>()); }

  // get_default_dtype() when none was given.
  ScalarType dtype() const { return dtype_ ? *dtype_ : get_default_dtype(); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool has_requires_grad() const { return requires_grad_.has_value(); }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  MemoryFormat memory_format() const { return memory_format_.value_or(MemoryFormat::Contiguous); }
  bool has_memory_format() const { return memory_format_.has_value(); }
  Layout layout() const { return layout_.value_or(Layout::Strided); }
  bool has_layout() const { return layout_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<MemoryFormat> memory_format_;
  std::optional<Layout> layout_;
  std::optional<bool> requires_grad_;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device_index(int index) { return TensorOptions().device_index(index); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
template <class T>
TensorOptions dtype() {
  return TensorOptions().dtype<T>();
}

// libtorch's legacy pairing of a device type with a layout (Backend::SparseCPU
// is a sparse tensor on the CPU), for code written against it.
enum class Backend : int8_t { CPU, CUDA, SparseCPU, SparseCUDA };
// The options a (backend, dtype) pair stands for: its dtype, layout and device type.
inline TensorOptions backend_options(Backend backend, ScalarType dtype) {
  const bool sparse = backend == Backend::SparseCPU || backend == Backend::SparseCUDA;
  const bool cuda = backend == Backend::CUDA || backend == Backend::SparseCUDA;
  TensorOptions options = TensorOptions().dtype(dtype).layout(sparse ? Layout::Sparse : Layout::Strided);
  return cuda ? options.device(Device(kCUDA)) : options;
}

}  // namespace gradiens

// Tensor's metadata accessors that are not inline, typed data access and
// Device parsing.
#include "engine/tensor.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens {

// "cpu", "cuda", or either with ":N" (libtorch accepts "cpu:0" too).
Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(-1) {
  const std::string_view type = spec.substr(0, spec.find(':'));
  if (type == "cuda") type_ = DeviceType::CUDA;
  else if (type != "cpu")
    throw Error(fmt::format("Invalid device string: '{}' (expected 'cpu', 'cuda' or 'cuda:N')", spec));
  if (type.size() == spec.size()) return;
  const std::string_view digits = spec.substr(type.size() + 1);
  if (digits.empty() || digits.size() > 9) throw Error(fmt::format("Invalid device string: '{}'", spec));
  int idx = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') throw Error(fmt::format("Invalid device string: '{}'", spec));
    idx = idx * 10 + (c - '0');
  }
  index_ = idx;
}

std::string Device::str() const {
  if (type_ == DeviceType::CPU) return "cpu";
  return index_ < 0 ? "cuda" : fmt::format("cuda:{}", index_);
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.str(); }
std::ostream& operator<<(std::ostream& out, Layout layout) {
  return out << (layout == Layout::Sparse ? "Sparse" : "Strided");
}

void TensorImpl::throw_no_dense_data() {
  throw Error("this tensor has no dense data: it is a sparse COO tensor (or made from one), which dense ops do not "
              "support; use to_dense() or the functions of engine/sparse.h");
}

void Tensor::throw_undefined() { throw Error("the tensor is undefined (default-constructed Tensor)"); }

int64_t Tensor::size(int64_t d) const {
  const TensorImpl& impl = checked();
  GD_CHECK(!impl.sizes.empty(), "size(): dimension specified as " + std::to_string(d) + " but tensor has no dimensions");
  return impl.sizes[wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  const TensorImpl& impl = checked();
  GD_CHECK(!impl.strides.empty(), "stride(): dimension specified as " + std::to_string(d) + " but tensor has no dimensions");
  return impl.strides[wrap_dim(d, dim(), "stride")];
}

std::string Tensor::toString() const {
  return fmt::format("{} {}", legacy_tensor_type_name(dtype()), shape_to_string(sizes()));
}

template <class T>
T* Tensor::data_ptr() const {
  GD_CHECK(scalar_type_of<T>() == dtype(), fmt::format("data_ptr<{}>() called on a tensor of dtype {}",
                                                        dtype_name(scalar_type_of<T>()), dtype_name(dtype())));
  return static_cast<T*>(data_ptr());
}

void Tensor::throw_no_version_counter() { throw Error("Inference tensors do not track version counter."); }

void Tensor::throw_not_on_cpu() const {
  throw Error(fmt::format("this operation has no CUDA kernel yet and needs the tensor ({} on {}) in CPU memory: move "
                          "its inputs with .cpu() first",
                          toString(), device().str()));
}

template <class T>
T* Tensor::cpu_data_ptr() const {
  GD_CHECK(scalar_type_of<T>() == dtype(), fmt::format("data_ptr<{}>() called on a tensor of dtype {}",
                                                        dtype_name(scalar_type_of<T>()), dtype_name(dtype())));
  return static_cast<T*>(cpu_data_ptr());
}

template <class T>
T Tensor::item() const {
  GD_CHECK(numel() == 1, fmt::format("a Tensor with {} elements cannot be converted to Scalar", numel()));
  if (!device().is_cpu()) return to(Device(kCPU)).item<T>();  // waits for the device
  return dispatch_all(dtype(), "item", [&]<class S>() { return static_cast<T>(*static_cast<const S*>(data_ptr())); });
}

Scalar Tensor::item() const {
  if (is_floating_point()) return Scalar(item<double>());
  if (dtype() == kBool) return Scalar(item<bool>());
  return Scalar(item<int64_t>());
}

bool is_nonzero(const Tensor& t) {
  GD_CHECK(t.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  GD_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return t.item<double>() != 0;
}

#define GRADIENS_INSTANTIATE_DATA_ACCESS(T) \
  template T* Tensor::data_ptr<T>() const;  \
  template T* Tensor::cpu_data_ptr<T>() const;  \
  template T Tensor::item<T>() const;
GRADIENS_INSTANTIATE_DATA_ACCESS(float)
GRADIENS_INSTANTIATE_DATA_ACCESS(double)
GRADIENS_INSTANTIATE_DATA_ACCESS(int32_t)
GRADIENS_INSTANTIATE_DATA_ACCESS(int64_t)
GRADIENS_INSTANTIATE_DATA_ACCESS(uint8_t)
GRADIENS_INSTANTIATE_DATA_ACCESS(int8_t)
GRADIENS_INSTANTIATE_DATA_ACCESS(int16_t)
GRADIENS_INSTANTIATE_DATA_ACCESS(bool)
GRADIENS_INSTANTIATE_DATA_ACCESS(Half)
GRADIENS_INSTANTIATE_DATA_ACCESS(BFloat16)
#undef GRADIENS_INSTANTIATE_DATA_ACCESS

}  // namespace gradiens

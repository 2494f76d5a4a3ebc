// tensor(data, options): builds a tensor from a TensorDataContainer (numbers,
// nested braced lists, std::vectors), with torch.tensor's dtype inference.
#include "engine/tensor_data.h"

#include <fmt/format.h>

#include <cstring>
#include <ostream>
#include <sstream>

#include "engine/functions.h"

namespace gradiens {

namespace {

// The dtype a data kind implies on its own (floating data: the default dtype).
ScalarType natural_dtype(ScalarType stored) { return is_floating_point(stored) ? get_default_dtype() : stored; }

// Sizes as libtorch's messages print a std::vector: space-separated.
std::string sizes_string(const DimVector& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(sizes[i]);
  }
  return out;
}

}  // namespace

TensorDataContainer::TensorDataContainer() : kind_(Kind::List), sizes_{0} {}

TensorDataContainer::TensorDataContainer(Scalar value, ScalarType dtype, ScalarType element)
    : kind_(Kind::Scalar), scalar_(value), dtype_(dtype), element_(element) {}

TensorDataContainer::TensorDataContainer(Tensor values, ScalarType element)
    : kind_(Kind::Values),
      values_(std::move(values)),
      sizes_{values_.numel()},
      dtype_(natural_dtype(values_.dtype())),
      element_(element) {}

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : kind_(Kind::List), list_(list) {
  sizes_.push_back(static_cast<int64_t>(list.size()));
  if (list_.empty()) return;
  const TensorDataContainer& first = list_.front();
  for (const TensorDataContainer& element : list_) {
    if (element.sizes() != first.sizes()) {
      std::ostringstream message;
      message << "Expected all sub-lists to have sizes: " << sizes_string(first.sizes()) << " (e.g. " << first
              << "), but got sub-list " << element << " with sizes: " << sizes_string(element.sizes());
      throw Error(message.str());
    }
    if (element.element_ && first.element_ && element.element_ != first.element_)
      throw Error(fmt::format("Expected all elements of the tensor to have the same scalar type: {}, but got element "
                              "of scalar type: {}",
                              c10_type_name(*first.element_), c10_type_name(*element.element_)));
  }
  dtype_ = first.dtype_;
  element_ = first.element_;
  for (int64_t s : first.sizes()) sizes_.push_back(s);
}

const Scalar& TensorDataContainer::scalar() const {
  GD_CHECK(is_scalar(), "Can only call `scalar()` on a TensorDataContainer that has `is_scalar() == true`");
  return scalar_;
}

const std::vector<TensorDataContainer>& TensorDataContainer::init_list() const {
  GD_CHECK(is_init_list(), "Can only call `init_list()` on a TensorDataContainer that has `is_init_list() == true`");
  return list_;
}

const Tensor& TensorDataContainer::tensor() const {
  GD_CHECK(is_tensor(), "Can only call `tensor()` on a TensorDataContainer that has `is_tensor() == true`");
  return values_;
}

Tensor TensorDataContainer::values_tensor(const void* data, int64_t n, ScalarType stored) {
  Tensor t = empty({n}, TensorOptions().dtype(stored));
  if (n > 0) std::memcpy(t.cpu_data_ptr(), data, static_cast<size_t>(n) * element_size(stored));
  return t;
}

void TensorDataContainer::fill(void* out, ScalarType dtype) const { fill_at(static_cast<char*>(out), 0, dtype); }

// Writes this container's elements from element `position` on; returns the next position.
int64_t TensorDataContainer::fill_at(char* out, int64_t position, ScalarType dtype) const {
  switch (kind_) {
    case Kind::Scalar:
      dispatch_all(dtype, "tensor", [&]<class T>() { reinterpret_cast<T*>(out)[position] = scalar_.to<T>(); });
      return position + 1;
    case Kind::List:
      for (const TensorDataContainer& element : list_) position = element.fill_at(out, position, dtype);
      return position;
    case Kind::Values: {
      const int64_t n = values_.numel();
      dispatch_all(dtype, "tensor", [&]<class T>() {
        T* dst = reinterpret_cast<T*>(out) + position;
        dispatch_all(values_.dtype(), "tensor", [&]<class S>() {
          const S* src = values_.cpu_data_ptr<S>();
          for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
        });
      });
      return position + n;
    }
  }
  return position;
}

std::ostream& operator<<(std::ostream& out, const TensorDataContainer& data) {
  using Kind = TensorDataContainer::Kind;
  auto print_scalar = [&out](const Scalar& s) {
    if (s.is_floating_point()) out << s.to_double();
    else out << s.to_long();
  };
  switch (data.kind_) {
    case Kind::Scalar: print_scalar(data.scalar_); break;
    case Kind::List:
      out << "{";
      for (size_t i = 0; i < data.list_.size(); ++i) out << (i ? ", " : "") << data.list_[i];
      out << "}";
      break;
    case Kind::Values:
      out << "{";
      for (int64_t i = 0; i < data.values_.numel(); ++i) {
        if (i) out << ", ";
        print_scalar(data.values_[i].item());
      }
      out << "}";
      break;
  }
  return out;
}

Tensor tensor(const TensorDataContainer& data, const TensorOptions& options) {
  const ScalarType dtype = options.has_dtype() ? options.dtype() : data.inferred_dtype().value_or(get_default_dtype());
  // Filled on the host, then copied to the options' device (torch::tensor({1, 2}, kCUDA)).
  Tensor t = empty(data.sizes(), options.dtype(dtype).device(kCPU).requires_grad(false));
  if (t.numel() > 0) data.fill(t.cpu_data_ptr(), dtype);
  if (options.device() != t.device()) t = t.to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace gradiens

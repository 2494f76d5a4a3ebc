// Broadcasting, result types and operand preparation shared by every
// elementwise op.
#include "engine/ops/elementwise.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"

namespace gradiens {

namespace {
std::string shape_str(IntArrayRef s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return "[" + out + "]";
}
int category(ScalarType t) { return t == kBool ? 0 : is_floating_point(t) ? 2 : 1; }
}  // namespace

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n, 1);
  // From the last dimension, like PyTorch, so the reported mismatch is the same.
  for (size_t i = n; i-- > 0;) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(fmt::format("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
                              "dimension {}",
                              da, db, i));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector broadcast_strides(const Tensor& t, IntArrayRef shape) {
  DimVector strides(shape.size(), 0);
  size_t offset = shape.size() - static_cast<size_t>(t.dim());
  for (size_t i = 0; i < static_cast<size_t>(t.dim()); ++i)
    strides[i + offset] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return strides;
}

ScalarType result_type(const Tensor& a, const Tensor& b, std::string_view op) {
  ScalarType ta = a.dtype(), tb = b.dtype();
  bool a_dims = a.dim() > 0, b_dims = b.dim() > 0;
  if (a_dims == b_dims) {
    // Only this pair is refused: float16/bfloat16 promote as in PyTorch (half + float32 is float32).
    const bool float32_and_float64 = (ta == kFloat32 && tb == kFloat64) || (ta == kFloat64 && tb == kFloat32);
    GD_CHECK(!(a_dims && float32_and_float64),
             fmt::format("{}: expected both tensors to have the same floating dtype, got {} and {}; convert one with "
                         ".to() (gradiens does not promote float32 and float64 tensors silently)",
                         op, dtype_name(ta), dtype_name(tb)));
    return promote_types(ta, tb);
  }
  // One side is 0-dim: it can lift the category but not widen within it.
  ScalarType dim_type = a_dims ? ta : tb, zero_type = a_dims ? tb : ta;
  if (category(zero_type) > category(dim_type)) return zero_type;
  return dim_type;
}

ScalarType result_type(const Tensor& a, const Scalar& b, std::string_view) {
  ScalarType ta = a.dtype();
  int scalar_category = b.is_floating_point() ? 2 : b.is_integral() ? 1 : 0;
  if (scalar_category > category(ta)) return b.is_floating_point() ? get_default_dtype() : kInt64;
  return ta;
}

void check_same_device(const Tensor& a, const Tensor& b, std::string_view op) {
  (void)op;
  GD_CHECK(a.device() == b.device(),
           fmt::format("Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                       a.device().str(), b.device().str()));
}

Device common_device(const Tensor& a, const Tensor& b, std::string_view op) {
  // As in PyTorch, a 0-dim CPU tensor is a scalar that may meet a tensor on any device.
  if (a.device() != b.device()) {
    if (a.dim() == 0 && a.device().is_cpu()) return b.device();
    if (b.dim() == 0 && b.device().is_cpu()) return a.device();
  }
  check_same_device(a, b, op);
  return a.device();
}

Tensor scalar_to_tensor(const Scalar& value, ScalarType dtype) {
  Tensor t = empty({}, TensorOptions().dtype(dtype));
  dispatch_all(dtype, "scalar_to_tensor", [&]<class T>() { *t.cpu_data_ptr<T>() = value.to<T>(); });
  return t;
}

void check_inplace_output(const Tensor& out, IntArrayRef broadcast_shape, ScalarType result, std::string_view op) {
  GD_CHECK(out.sizes() == broadcast_shape,
           fmt::format("{}: output with shape {} doesn't match the broadcast shape {}", op, shape_str(out.sizes()),
                       shape_str(broadcast_shape)));
  GD_CHECK(category(result) <= category(out.dtype()),
           fmt::format("{}: result type {} can't be cast to the desired output type {}", op, c10_type_name(result),
                       c10_type_name(out.dtype())));
}

void check_no_internal_overlap(const Tensor& out) {
  for (int64_t d = 0; d < out.dim(); ++d)
    GD_CHECK(!(out.strides()[d] == 0 && out.sizes()[d] > 1),
             "unsupported operation: more than one element of the written-to tensor refers to a single memory "
             "location. Please clone() the tensor before performing the operation.");
}

Tensor copy_if_overlapping(const Tensor& input, const Tensor& out) {
  if (input.storage() != out.storage()) return input;
  if (input.storage_offset() == out.storage_offset() && input.sizes() == out.sizes() &&
      input.strides() == out.strides())
    return input;  // the same elements: each is read before it is written
  NoGradGuard no_grad;
  return input.clone();
}

MemoryFormat elementwise_format(IntArrayRef shape, std::initializer_list<const Tensor*> operands) {
  if (shape.size() != 4) return MemoryFormat::Contiguous;
  for (const Tensor* t : operands) {
    if (!t->defined() || t->sizes() != shape) continue;
    const bool rows = t->is_contiguous(), channels_last = t->is_contiguous(MemoryFormat::ChannelsLast);
    if (rows && channels_last) continue;
    return channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  }
  return MemoryFormat::Contiguous;
}

BinaryOperands prepare_binary(const Tensor& a, const Tensor& b, ScalarType compute_dtype, ScalarType out_dtype,
                              std::string_view op, const Tensor& inplace_out) {
  const Device device = common_device(a, b, op);
  BinaryOperands ops;
  if (inplace_out.defined()) {
    check_inplace_output(inplace_out, broadcast_shapes(a.sizes(), b.sizes()), out_dtype, op);
    check_no_internal_overlap(inplace_out);
    // In place, the arithmetic runs in the output's dtype (a lossless choice
    // once the cast check above has passed for float outputs).
    if (compute_dtype == out_dtype) compute_dtype = inplace_out.dtype();
    ops.out = inplace_out;
  } else {
    const DimVector shape = broadcast_shapes(a.sizes(), b.sizes());
    ops.out = empty(shape, TensorOptions().dtype(out_dtype).device(device).memory_format(
                               elementwise_format(shape, {&a, &b})));
  }
  ops.a = a.dtype() == compute_dtype ? a : a.to(compute_dtype);
  ops.b = b.dtype() == compute_dtype ? b : b.to(compute_dtype);
  if (inplace_out.defined()) {
    ops.a = copy_if_overlapping(ops.a, inplace_out);
    ops.b = copy_if_overlapping(ops.b, inplace_out);
  }
  return ops;
}

}  // namespace gradiens

// Shared machinery of the elementwise ops: broadcasting, PyTorch's result
// type, and preparing the operands of a kernel.
#pragma once

#include <string_view>

#include "engine/functions.h"

namespace gradiens {

// Broadcast shape of two shapes, or PyTorch's error naming the bad dimension.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
// Strides (elements) that view `t` as `shape` (0 on broadcast dimensions).
DimVector broadcast_strides(const Tensor& t, IntArrayRef shape);

// PyTorch's result type: dimensioned tensors decide within a category, 0-dim
// tensors and scalars only lift the category (bool < integer < floating).
// float32 and float64 tensors with dims mixed in one op are an error.
ScalarType result_type(const Tensor& a, const Tensor& b, std::string_view op);
ScalarType result_type(const Tensor& a, const Scalar& b, std::string_view op);

// PyTorch's error when a and b are on different devices.
void check_same_device(const Tensor& a, const Tensor& b, std::string_view op);
// The device an op on a and b runs on: theirs, or the other one's when one is
// a 0-dim CPU tensor (a scalar); otherwise check_same_device's error.
Device common_device(const Tensor& a, const Tensor& b, std::string_view op);

// A 0-dim tensor holding `value` in `dtype`.
Tensor scalar_to_tensor(const Scalar& value, ScalarType dtype);

// For in-place forms: the output `out` must already have the broadcast shape
// and a dtype the result can be cast to, with PyTorch's errors.
void check_inplace_output(const Tensor& out, IntArrayRef broadcast_shape, ScalarType result, std::string_view op);

// The operands of a binary kernel: `a` and `b` converted to the compute dtype,
// and the output (new, or `inplace_out` after checking it can hold the result).
struct BinaryOperands {
  Tensor out, a, b;
};
// PyTorch's error for writing into a tensor whose elements alias each other
// (an expanded tensor): the result would depend on the order of the writes.
void check_no_internal_overlap(const Tensor& out);
// `input` itself, or a copy of it when it shares memory with `out` through a
// different layout (x.add_(x.t())): an elementwise write into `out` would
// otherwise read values it already overwrote.
Tensor copy_if_overlapping(const Tensor& input, const Tensor& out);

// The layout of a new elementwise result of `shape`, by PyTorch's rule
// (TensorIterator's): the first operand of the full shape whose strides say one
// layout decides, a channels_last one (4-d) giving channels_last; an ambiguous
// operand (C == 1, or H == W == 1) leaves it to the next; row-major otherwise.
MemoryFormat elementwise_format(IntArrayRef shape, std::initializer_list<const Tensor*> operands);

BinaryOperands prepare_binary(const Tensor& a, const Tensor& b, ScalarType compute_dtype, ScalarType out_dtype,
                              std::string_view op, const Tensor& inplace_out = Tensor());

}  // namespace gradiens

// The rules every in-place op follows (see Note [In-place ops and autograd]).
#pragma once

#include <initializer_list>
#include <string_view>

#include "engine/tensor.h"

namespace gradiens {

// Note [In-place ops and autograd]
// Under grad mode an in-place op on a leaf that requires grad is an error, as in
// PyTorch. On a non-leaf it rebases history: the op is recorded out of place on
// a clone of self (so the saved value is the one before the write), the result
// is written into self's storage, and self's grad_fn becomes the new node.
// Recording on a clone also means `y.exp_(); y.add_(a)` works where PyTorch
// raises the saved-version error. fill_/zero_/copy_ are recorded too (the
// overwritten values get a zero gradient), and retain_grad follows the new value.
// Views taken from a base before it was rebased rebuild their history on first
// use (Note [Views of a rebased base] in engine/autograd/node.cpp).
// An in-place op *through* a view rebases the view's base, as PyTorch's
// CopySlices: the base's new history is "the old base with the view's region
// replaced by the op's result", whose backward sends the region's gradient
// through the op (and on to the old view) and the rest to the old base; the
// view itself then rebuilds its history from the base's on first use. Only the
// view's region is written. A base that is not contiguous is refused with a
// clear error (write to the base, or clone() the view first). libtorch's own
// errors come first: for a view taken under NoGradGuard or InferenceMode (Note
// [View creation meta] in engine/tensor_impl.h) and for a view of a leaf that
// requires grad.
// Returns true when the op must be recorded (grad mode on and self or an
// operand requires grad).
bool check_inplace(const Tensor& self, std::initializer_list<Tensor> operands, std::string_view op);

// Writes `result` into self, bumps the version, and (when `record`) makes
// result's history self's.
Tensor& commit_inplace(Tensor& self, const Tensor& result, bool record);

// Writes src (broadcast, cast) into dst without autograd, bumping nothing. dst
// and src may be on different devices.
void copy_data(const Tensor& dst, const Tensor& src, bool non_blocking = false);

}  // namespace gradiens

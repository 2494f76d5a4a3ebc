// Views and autograd: how a new view records its base and its creation meta
// (Note [View creation meta]), the errors libtorch raises for in-place writes
// through such views, and libtorch's TensorImpl accessors for the view record
// and the version counter.
#include <fmt/format.h>

#include "engine/autograd/function.h"

namespace gradiens {

using autograd::CreationMeta;

namespace detail {

thread_local bool in_recorded_forward = false;

namespace {

// The creation meta of a view taken now, in the mode the caller of the op is
// in: apply<Op> runs a recorded forward with grad mode off, which does not
// make its views no-grad ones.
CreationMeta creation_meta_now() {
  if (InferenceMode::is_enabled()) return CreationMeta::INFERENCE_MODE;
  if (!GradMode::is_enabled() && !in_recorded_forward) return CreationMeta::NO_GRAD_MODE;
  return CreationMeta::DEFAULT;
}

// A view of a view keeps the older meta unless the new one is stricter; an
// inference-mode one is never replaced (libtorch's propagate_creation_meta).
CreationMeta propagate(CreationMeta previous, CreationMeta made) {
  if (made == CreationMeta::DEFAULT) return previous;
  return previous == CreationMeta::INFERENCE_MODE ? previous : made;
}

// libtorch's handle_view_on_rebase message: `indirect` when the base (or
// another view of it) was written, not this view.
std::string rebase_message(const TensorImpl& impl, bool indirect) {
  const CreationMeta meta = impl.view.creation_meta;
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (impl.grad_fn)
    msg = fmt::format("Output {} of {} is a view and {} modified inplace.", impl.output_nr, impl.grad_fn->name(),
                      modified);
  else if (meta == CreationMeta::INFERENCE_MODE)
    msg = fmt::format("A view was created in inference mode and {} modified inplace in normal mode.", modified);
  else
    msg = fmt::format("A view was created in no_grad mode and {} modified inplace with grad mode enabled.", modified);
  switch (meta) {
    case CreationMeta::MULTI_OUTPUT_NODE:
      return msg + " This view is the output of a function that returns multiple views. Such functions do not allow "
                   "the output views to be modified inplace. You should replace the inplace operation by an "
                   "out-of-place one.";
    case CreationMeta::NO_GRAD_MODE:
      return msg + " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                   "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                   "the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
    case CreationMeta::INFERENCE_MODE:
      return msg + " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                   "by moving both the view and the inplace either both inside the inference_mode block (if you "
                   "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
    case CreationMeta::IN_CUSTOM_FUNCTION:
      return msg + " This view was created inside a custom Function (or because an input was returned as-is) and the "
                   "autograd logic to handle view+inplace would override the custom backward associated with the "
                   "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
                   "cloning the output of the custom Function.";
    case CreationMeta::DEFAULT:
      break;
  }
  GD_INTERNAL_ASSERT(false, "rebase_message: a view with the default creation meta may be modified");
  return msg;
}

}  // namespace

void mark_as_view(TensorImpl& view, const Tensor& base) {
  const TensorImpl& from = *base.impl();
  view.is_inference = from.is_inference;
  // A view of an inference tensor is a plain inference tensor: autograd never sees it.
  if (from.is_inference) return;
  view.view.is_view = true;
  view.view.base = from.view.is_view ? from.view.base : base.impl_ptr();
  const CreationMeta made = creation_meta_now();
  view.view.creation_meta = from.view.is_view ? propagate(from.view.creation_meta, made) : made;
  view.view.attr_version = from.storage->version();
}

void check_inplace_on_view(const TensorImpl& impl) {
  if (!impl.view.is_view) return;
  if (impl.view.creation_meta != CreationMeta::DEFAULT) throw Error(rebase_message(impl, /*indirect=*/false));
  const TensorImpl& base = *impl.view.base;
  GD_CHECK(!(base.grad_fn == nullptr && base.requires_grad),
           "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

void check_view_not_rebased(const TensorImpl& impl) {
  if (impl.view.creation_meta == CreationMeta::DEFAULT) return;
  if (!impl.grad_fn && !impl.view.base->requires_grad) return;
  if (impl.storage->version() == impl.view.attr_version) return;
  throw Error(rebase_message(impl, /*indirect=*/true));
}

}  // namespace detail

void Tensor::check_view_not_rebased() const { detail::check_view_not_rebased(checked()); }

Tensor Tensor::_base() const {
  const TensorImpl& impl = checked();
  GD_CHECK(impl.view.is_view, "Can't get base of non-view Tensor");
  return Tensor(impl.view.base);
}

autograd::AutogradMeta* TensorImpl::autograd_meta() const {
  if (!view.is_view && !requires_grad && !grad_fn) return nullptr;
  return const_cast<autograd::DifferentiableViewMeta*>(&view);
}

void TensorImpl::bump_version() const {
  if (!is_inference) {
    storage->bump_version();
    return;
  }
  GD_CHECK(InferenceMode::is_enabled(),
           "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
           "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
}

uint32_t VersionCounter::current_version() const {
  GD_CHECK(!impl_.is_inference, "Inference tensors do not track version counter.");
  return impl_.storage->version();
}

}  // namespace gradiens

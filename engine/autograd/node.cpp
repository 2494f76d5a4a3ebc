// Node bookkeeping (sequence numbers, iterative teardown of long graphs, hooks),
// AccumulateGrad, SavedVariable and the helpers apply<Op> uses to record history.
#include "engine/autograd/node.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "engine/autograd/function.h"
#include "engine/autograd/saved_variable.h"
#include "engine/autograd/thread_state.h"
#include "engine/functions.h"
#include "engine/warning.h"

namespace gradiens {

// Note [Thread-local state in a shared library]
// Every op reads the grad mode and the inference mode, and every recorded one the
// sequence number: with the shared library's default TLS model each read is a call
// to __tls_get_addr (3% of op_overhead_5000). These few variables take the
// initial-exec model (an offset from the thread pointer), which costs a few bytes
// of the static TLS block even when the library is loaded with dlopen.
namespace {
[[gnu::tls_model("initial-exec")]] thread_local bool grad_mode_enabled = true;
[[gnu::tls_model("initial-exec")]] thread_local uint64_t next_sequence_nr = 0;
std::atomic<unsigned> next_hook_handle{1};

// Note [Iterative graph teardown]
// A 100k-op chain would free its nodes recursively (each node holds the next)
// and overflow the stack. Instead a dying node hands the children it solely
// owns to this thread-local list, and the outermost destructor frees them one
// by one.
[[gnu::tls_model("initial-exec")]] thread_local std::vector<std::shared_ptr<Node>>* teardown_list = nullptr;
}  // namespace

bool GradMode::is_enabled() { return grad_mode_enabled; }
void GradMode::set_enabled(bool enabled) { grad_mode_enabled = enabled; }

namespace {
[[gnu::tls_model("initial-exec")]] thread_local bool inference_mode_enabled = false;
}  // namespace

InferenceMode::InferenceMode(bool enabled)
    : previous_inference_(inference_mode_enabled), previous_grad_(grad_mode_enabled) {
  // As libtorch: InferenceMode(false) inside an InferenceMode turns grad mode back on.
  inference_mode_enabled = enabled;
  grad_mode_enabled = !enabled;
}
InferenceMode::~InferenceMode() {
  inference_mode_enabled = previous_inference_;
  grad_mode_enabled = previous_grad_;
}
bool InferenceMode::is_enabled() { return inference_mode_enabled; }

detail::AutogradThreadState detail::AutogradThreadState::capture() {
  return {grad_mode_enabled, inference_mode_enabled, detail::forward_ad_paused, detail::in_recorded_forward,
          gradiens::next_sequence_nr};
}

void detail::AutogradThreadState::install() const {
  grad_mode_enabled = grad_mode;
  inference_mode_enabled = inference_mode;
  detail::forward_ad_paused = forward_ad_paused;
  detail::in_recorded_forward = in_recorded_forward;
  gradiens::next_sequence_nr = next_sequence_nr;
}

AutoNonVariableTypeMode::AutoNonVariableTypeMode(bool enabled)
    : grad_mode_(enabled ? false : GradMode::is_enabled()) {
  static std::atomic<bool> warned{false};
  warn_once(warned,
            "AutoNonVariableTypeMode is deprecated and will be removed in 1.10 release. For kernel implementations "
            "please use AutoDispatchBelowADInplaceOrView instead, If you are looking for a user facing API to enable "
            "running your inference-only workload, please use c10::InferenceMode. Using "
            "AutoDispatchBelowADInplaceOrView in user code is under risk of producing silent wrong result in some "
            "edge cases. See Note [AutoDispatchBelowAutograd] for more details.");
}

Node::Node() : sequence_nr_(next_sequence_nr++) {}

Node::~Node() {
  std::vector<std::shared_ptr<Node>> local;
  bool outermost = teardown_list == nullptr;
  if (outermost) teardown_list = &local;
  for (auto& edge : next_edges_)
    if (edge.function && edge.function.use_count() == 1) teardown_list->push_back(std::move(edge.function));
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> node = std::move(local.back());
      local.pop_back();
      node.reset();  // its destructor appends its own children to `local`
    }
    teardown_list = nullptr;
  }
}

Tensor Node::take_accumulation_target(size_t i) {
  return i < accumulation_targets_.size() ? std::move(accumulation_targets_[i]) : Tensor();
}

uint32_t Node::add_input_metadata(const Tensor& forward_output) {
  InputMetadata meta;
  meta.sizes = DimVector(forward_output.sizes().begin(), forward_output.sizes().end());
  meta.dtype = forward_output.dtype();
  meta.device = forward_output.device();
  input_metadata_.push_back(std::move(meta));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

unsigned Node::add_pre_hook(uint32_t output_nr, TensorHook hook) {
  unsigned handle = next_hook_handle++;
  pre_hooks_.emplace_back(handle, output_nr, std::move(hook));
  return handle;
}

bool Node::remove_pre_hook(unsigned handle) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it)
    if (std::get<0>(*it) == handle) {
      pre_hooks_.erase(it);
      removed_pre_hooks_.push_back(handle);
      return true;
    }
  return std::find(removed_pre_hooks_.begin(), removed_pre_hooks_.end(), handle) != removed_pre_hooks_.end();
}

// ---- AccumulateGrad ----

AccumulateGrad::AccumulateGrad(const std::shared_ptr<TensorImpl>& variable) : variable_(variable) {
  add_input_metadata(Tensor(variable));
}

GradList AccumulateGrad::apply(GradList&& grads) {
  std::shared_ptr<TensorImpl> impl = variable_.lock();
  Tensor new_grad = std::move(grads[0]);
  if (!impl || !new_grad.defined()) return {};
  Tensor& grad = Tensor(impl).mutable_grad();
  if (GradMode::is_enabled()) {
    // create_graph: the gradient keeps its history, so it can be differentiated.
    grad = grad.defined() ? add(grad, new_grad) : new_grad;
    return {};
  }
  if (!grad.defined()) {
    // Steal the buffer when nothing else can see it; otherwise copy it, so a
    // later in-place accumulation never writes into someone else's memory.
    bool exclusive = new_grad.impl_ptr().use_count() == 1 && new_grad.storage().use_count() == 1 &&
                     new_grad.is_contiguous() && !new_grad.requires_grad();
    grad = exclusive ? std::move(new_grad) : new_grad.detach().clone();
  } else if (grad.requires_grad()) {
    grad = add(grad, new_grad);
  } else {
    grad.add_(new_grad);
  }
  return {};
}

namespace {
// Note [Views of a rebased base]
// A recorded in-place op gives its tensor a new grad_fn (Note [In-place ops and
// autograd]). A view taken from that tensor before the write still points at
// the old history although its values changed with the base, so its gradient
// would silently be wrong. A view's node is always created after the node of
// its base, so a base whose grad_fn is newer than the view's was rebased since;
// the view's history is then regenerated as an as_strided view of the base's
// current history, as PyTorch does.
void refresh_stale_view(TensorImpl& impl) {
  detail::check_view_not_rebased(impl);
  if (!impl.view.is_view || !impl.grad_fn) return;
  const std::shared_ptr<Node>& base_fn = impl.view.base->grad_fn;
  if (!base_fn || base_fn->sequence_nr() < impl.grad_fn->sequence_nr()) return;
  Tensor base(impl.view.base);
  GD_CHECK(base.is_contiguous(),
           "a view was used after its (non-contiguous) base was modified by an in-place operation; take the view "
           "again after the in-place operation");
  AutoGradMode enable(true);
  Tensor fresh = base.as_strided(impl.sizes, impl.strides, impl.storage_offset);
  impl.grad_fn = fresh.grad_fn();
  impl.output_nr = fresh.output_nr();
}
}  // namespace

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.impl();
  refresh_stale_view(*impl);
  if (impl->grad_fn) return Edge(impl->grad_fn, impl->output_nr);
  if (!impl->requires_grad) return Edge();
  if (!impl->grad_accumulator) impl->grad_accumulator = std::make_shared<AccumulateGrad>(t.impl_ptr());
  return Edge(impl->grad_accumulator, 0);
}

// ---- SavedVariable ----

SavedVariable::SavedVariable(const Tensor& tensor, bool is_output) {
  if (!tensor.defined()) return;
  GD_CHECK(!tensor.is_inference(),
           "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
           "tensor and use it in autograd.");
  saved_version_ = tensor._version();
  requires_grad_ = tensor.requires_grad();
  if (tensor.grad_fn()) grad_fn_of_input_ = tensor.grad_fn();
  output_nr_ = tensor.output_nr();
  data_ = tensor;
  const TensorImpl& src = *tensor.impl();
  bool grad_leaf = src.grad_fn == nullptr && src.requires_grad;
  if (is_output) {
    convert_to_output();
  } else if (src.rebound && !grad_leaf) {
    // A snapshot of the rebound impl's current data and graph position, so a
    // later rebind (the next forward of a parametrized module) cannot change
    // what this graph saved. A leaf that requires grad is kept as itself (its
    // gradient accumulator must stay reachable) and checked as below.
    auto snapshot = std::make_shared<TensorImpl>(src.storage, src.sizes, src.strides, src.storage_offset, src.dtype);
    snapshot->requires_grad = src.requires_grad;
    snapshot->grad_fn = src.grad_fn;
    snapshot->output_nr = src.output_nr;
    data_ = Tensor(std::move(snapshot));
  } else if (src.grad_fn == nullptr) {
    // A leaf can be pointed at other data after this save (autograd::rebind when
    // a parametrization is registered, set_data): unpack refuses that.
    saved_storage_ = src.storage;
  }
}

void SavedVariable::convert_to_output() {
  // See Note [Saved output cycle].
  is_output_ = true;
  requires_grad_ = true;
  output_nr_ = 0;
  data_ = Tensor(std::make_shared<TensorImpl>(data_.storage(), DimVector(data_.sizes().begin(), data_.sizes().end()),
                                              DimVector(data_.strides().begin(), data_.strides().end()),
                                              data_.storage_offset(), data_.dtype()));
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (was_released_) {
    throw Error(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward.");
  }
  if (!data_.defined()) return Tensor();
  if (saved_storage_ && data_.storage() != saved_storage_) {
    throw Error(
        "a tensor saved for backward has been re-bound to other data since it was saved (a parametrization or "
        "pruning registered on it, or set_data, after this graph's forward): run the forward again before backward");
  }
  if (data_._version() != saved_version_) {
    std::string sizes;
    for (size_t i = 0; i < data_.sizes().size(); ++i) sizes += (i ? ", " : "") + std::to_string(data_.sizes()[i]);
    std::shared_ptr<Node> producer = is_output_ ? owner : grad_fn_of_input_.lock();
    std::string which = producer ? fmt::format(", which is output {} of {},", output_nr_, producer->name()) : "";
    throw Error(fmt::format(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[{} [{}]]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with autograd::DetectAnomalyGuard.",
        legacy_tensor_type_name(data_.dtype()), sizes, which, data_._version(), saved_version_));
  }
  if (!is_output_) return data_;
  // Re-attach the owner as grad_fn so a create_graph backward can differentiate through it.
  auto impl = std::make_shared<TensorImpl>(*data_.impl());
  impl->requires_grad = requires_grad_;
  impl->grad_fn = owner;
  impl->output_nr = output_nr_;
  return Tensor(std::move(impl));
}

void SavedVariable::reset() {
  if (data_.defined()) was_released_ = true;
  data_ = Tensor();
  saved_storage_.reset();
}

// ---- recording helpers used by apply<Op> ----

std::shared_ptr<Node> Ctx::owner() const { return owner_ ? owner_->shared_from_this() : nullptr; }

namespace detail {

Tensor fresh_alias(const Tensor& t) {
  const TensorImpl& src = *t.impl();
  auto impl = std::make_shared<TensorImpl>(src.storage, src.sizes, src.strides, src.storage_offset, src.dtype);
  mark_as_view(*impl, t);
  // An alias made for an op's output is no no-grad view, whatever the mode.
  impl->view.creation_meta = src.view.is_view ? src.view.creation_meta : autograd::CreationMeta::DEFAULT;
  return Tensor(std::move(impl));
}

void set_history(Tensor& output, const std::shared_ptr<Node>& node) {
  TensorImpl* impl = output.impl();
  // An integer or bool result (x.to(kInt64), a comparison-like op) is not
  // differentiable: as in PyTorch it simply does not require grad.
  if (!is_floating_point(impl->dtype)) return;
  node->add_input_metadata(output);
  impl->requires_grad = true;
  impl->grad_fn = node;
  impl->output_nr = 0;
}

}  // namespace detail

}  // namespace gradiens

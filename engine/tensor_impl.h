// TensorImpl: what a Tensor handle points to — a storage, its geometry (sizes,
// strides, offset), the dtype, and the autograd metadata of the tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/autograd/grad_mode.h"
#include "engine/storage.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens {

class Node;
class Tensor;
struct SparseCOO;  // engine/sparse.h
struct TensorImpl;

namespace autograd {

// Note [View creation meta]
// How a view was made decides whether it may later be modified in place with
// grad mode on, as in libtorch. A view taken under NoGradGuard or InferenceMode
// has no history linking it to its base, so an in-place write through it (or
// through its base, after it was taken) cannot be recorded correctly: with grad
// mode on and a base that requires grad, such writes raise libtorch's errors.
// A view of such a view keeps its creation meta (an inference-mode one always).
enum class CreationMeta : uint8_t { DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE };

// libtorch's name for a tensor's autograd state, as TensorImpl::autograd_meta() hands it out.
struct AutogradMeta {};

// What a view remembers of its base (libtorch's DifferentiableViewMeta).
struct DifferentiableViewMeta : AutogradMeta {
  bool has_bw_view() const { return is_view; }
  CreationMeta get_creation_meta() const { return creation_meta; }

  bool is_view = false;              // shares its base's storage and is tracked as a view of it
  std::shared_ptr<TensorImpl> base;  // the tensor this view was taken from (the first non-view)
  CreationMeta creation_meta = CreationMeta::DEFAULT;
  uint32_t attr_version = 0;  // the storage's version when the view was taken
};

}  // namespace autograd

// The version counter of a tensor's storage, as libtorch's VariableVersion
// (TensorImpl::version_counter()); an inference tensor has none.
class VersionCounter {
 public:
  explicit VersionCounter(const TensorImpl& impl) : impl_(impl) {}
  uint32_t current_version() const;

 private:
  const TensorImpl& impl_;
};

struct TensorImpl {
  TensorImpl(Storage storage, DimVector sizes, DimVector strides, int64_t storage_offset, ScalarType dtype)
      : storage(std::move(storage)), sizes(std::move(sizes)), strides(std::move(strides)),
        storage_offset(storage_offset), dtype(dtype), is_inference(InferenceMode::is_enabled()) {
    refresh_geometry();
  }

  // Recomputes numel and the contiguity flag after sizes/strides change. A
  // tensor without elements is contiguous whatever its strides, as in PyTorch.
  void refresh_geometry() {
    numel = 1;
    for (int64_t s : sizes) numel *= s;
    is_contiguous = true;
    if (numel == 0) return;
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      if (sizes[i] == 1) continue;
      if (strides[i] != expected) {
        is_contiguous = false;
        break;
      }
      expected *= sizes[i];
    }
  }
  void* data() const {
    // Only a sparse COO tensor (or a view of one) has storage without memory.
    if (storage->data() == nullptr && numel > 0) throw_no_dense_data();
    return static_cast<char*>(storage->data()) + storage_offset * static_cast<int64_t>(element_size(dtype));
  }
  [[noreturn]] static void throw_no_dense_data();

  // libtorch's TensorImpl accessors (defined in engine/tensor.cpp): the view
  // record (null for a tensor that neither is a view nor requires grad), the
  // version counter, and an in-place write's version bump (refused for an
  // inference tensor outside InferenceMode, a no-op inside it).
  autograd::AutogradMeta* autograd_meta() const;
  VersionCounter version_counter() const { return VersionCounter(*this); }
  void bump_version() const;

  Storage storage;
  DimVector sizes;
  DimVector strides;  // in elements
  int64_t storage_offset;
  ScalarType dtype;
  int64_t numel = 0;
  bool is_contiguous = true;
  // Allocated under an InferenceMode guard (Note [Inference mode]); a view
  // takes its base's.
  bool is_inference = false;

  // Autograd metadata. A leaf has no grad_fn; a leaf that requires grad gets an
  // AccumulateGrad node on first use, kept here so its hooks survive.
  bool requires_grad = false;
  bool retains_grad = false;
  autograd::DifferentiableViewMeta view;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  // The accumulated gradient, in a box of its own so that Tensor::mutable_grad()
  // can hand out a reference to it (Tensor is incomplete here); null until a
  // gradient is first set.
  std::shared_ptr<Tensor> grad;
  std::shared_ptr<Node> grad_accumulator;

  // Forward-mode AD: the tangent of a dual tensor, valid while the dual level
  // `fw_level` is the current one (engine/autograd/forward_ad.h).
  std::shared_ptr<TensorImpl> fw_grad;
  uint64_t fw_level = 0;

  // Set once autograd::rebind() has pointed this impl at another tensor's data
  // and graph (a parametrized module weight): saves then take a snapshot, so a
  // later rebind cannot change what an earlier graph saved.
  bool rebound = false;

  // Set only for a sparse COO tensor (engine/sparse.h), whose storage is empty.
  std::shared_ptr<SparseCOO> sparse;
};

}  // namespace gradiens

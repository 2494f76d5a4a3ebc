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
struct SparseCOO;  // engine/sparse.h

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
  bool is_view = false;                     // shares its base's storage
  std::shared_ptr<TensorImpl> view_base;    // the tensor this view was taken from
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  std::shared_ptr<TensorImpl> grad;
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

// SavedVariable: a snapshot of a tensor at a certain version, kept by a node
// for its backward formula.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/tensor.h"

namespace gradiens {

class Node;

// Note [Saved output cycle]
// A node that saves its own forward output must not hold the output's
// TensorImpl: that impl's grad_fn is the node itself, a reference cycle that
// would never be freed. So an output is saved as a grad-less alias of the same
// storage (sharing the version counter), and unpack() re-attaches the node as
// its grad_fn, which lets create_graph differentiate through it.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& tensor, bool is_output);

  // The saved tensor; throws PyTorch's message if it was modified in place since
  // it was saved, or freed by an earlier backward. `owner` is the node that
  // saved it (used for saved outputs).
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  void reset();  // frees the data (after a backward without retain_graph)
  bool defined() const { return data_.defined() || was_released_; }
  // Turns a saved input that turned out to be the node's output into a saved output.
  void convert_to_output();
  bool holds(const Tensor& t) const { return data_.defined() && data_.is_same(t); }

 private:
  Tensor data_;
  Storage saved_storage_;  // a saved leaf's storage, to detect a later rebind
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool was_released_ = false;
  std::weak_ptr<Node> grad_fn_of_input_;  // for the error message only
};

}  // namespace gradiens

// autograd::checkpoint: gradient checkpointing. A segment's intermediate
// results are not kept for backward; backward recomputes them.
#pragma once

#include <functional>
#include <vector>

#include "engine/autograd/autograd.h"
#include "engine/tensor.h"

namespace gradiens::autograd {

// Note [Checkpoint]
// checkpoint(fn, inputs) returns fn(inputs) with a single backward node,
// CheckpointFunctionBackward, in place of the segment's graph. It keeps only
// the inputs (version-checked, like any saved tensor) and the default
// generator's state. Its backward replays fn with grad enabled on detached
// copies of the inputs, from the same generator state (so dropout-like
// randomness draws the same numbers), backpropagates the incoming gradient
// through that recomputed graph with autograd::grad, and hands the gradients
// on; the generator is then put back where it was. Peak memory drops from all
// segments' activations to the inputs of all segments plus one segment's
// activations, for the cost of a second forward of each segment.
//
// Tensors that require grad and that fn uses without receiving them in
// `inputs` (a module's parameters captured by a lambda) get their gradients
// too, through backward() as well as autograd::grad (unlike PyTorch's
// reentrant checkpoint), and their tensor hooks run once: the forward records
// fn's graph just long enough to find them, then drops it, so the forward
// holds no more than the backward's recomputation will. A captured tensor that
// has a history (not a leaf) must be passed in `inputs` instead; this is checked.
//
// Limits: fn must compute the same graph when replayed (given the same inputs
// and default-generator state; an explicit Generator it draws from is not
// rewound). create_graph through a checkpoint is refused with an error: the
// gradient of a segment comes from a separate backward pass, which records no
// graph, so it cannot be differentiated again.
std::vector<Tensor> checkpoint(const TensorFunction& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state = true);
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state = true);

}  // namespace gradiens::autograd

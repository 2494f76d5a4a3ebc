// The losses of nn::functional: checks with PyTorch's messages, then
// compositions of differentiable ops, except binary_cross_entropy (a fused op
// with PyTorch's gradient at 0 and 1) and logsigmoid (an op of
// nn/functional/activation.cpp, exact at x = 0).
#include "nn/functional/loss.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>

#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "engine/ops/cuda_seam.h"
#include "engine/ops/dim_indexing.h"
#include "kernels/indexing.h"
#include "nn/functional/activation.h"
#include "nn/functional/distance.h"

namespace gradiens::nn {

std::string_view reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
    case Reduction::BatchMean: return "batchmean";
  }
  return "unknown";
}

Reduction reduction_from_name(std::string_view name) {
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum, Reduction::BatchMean})
    if (name == reduction_name(r)) return r;
  throw Error(fmt::format("{} is not a valid value for reduction", name));
}

namespace functional {
namespace {

std::string sizes_string(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// Every loss but kl_div reduces this way; kBatchMean belongs to kl_div alone.
Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Mean: return loss.mean();
    case Reduction::Sum: return loss.sum();
    case Reduction::BatchMean: break;
  }
  throw Error("batchmean is not a valid value for reduction");
}

void check_floating(const Tensor& t, std::string_view kernel) {
  GD_CHECK(t.is_floating_point(), fmt::format("\"{}\" not implemented for '{}'", kernel, c10_type_name(t.dtype())));
}

// ---- class-index targets ----

// nll_loss's shape checks, per input rank as PyTorch words them (its 1-2-d,
// 4-d and reshaping paths each have their own messages).
void check_nll_shapes(const Tensor& input, const Tensor& target, const Tensor& weight) {
  const int64_t dim = input.dim();
  GD_CHECK(dim >= 1, fmt::format("Expected 1 or more dimensions (got {})", dim));
  if (dim != 1) {
    const int64_t target_batch = target.dim() > 0 ? target.size(0) : 0;
    GD_CHECK(input.size(0) == target_batch,
             fmt::format("Expected input batch_size ({}) to match target batch_size ({}).", input.size(0),
                         target_batch));
  }
  const int64_t classes = input.size(dim == 1 ? 0 : 1);
  if (dim <= 2) {
    GD_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    // An unbatched input takes a 0-d target only (PyTorch lets a 1-D target of
    // C elements through and returns nonsense).
    GD_CHECK((dim == 1 && target.dim() == 0) || (dim == 2 && target.dim() == 1),
             fmt::format("size mismatch (got input: {}, target: {})", sizes_string(input.sizes()),
                         sizes_string(target.sizes())));
    GD_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
             fmt::format("weight tensor should be defined either for all {} classes or no classes but got weight "
                         "tensor of shape: {}",
                         classes, sizes_string(weight.sizes())));
    return;
  }
  if (dim == 4) {
    GD_CHECK(target.dim() == 3,
             fmt::format("only batches of spatial targets supported (3D tensors) but got targets of dimension: {}",
                         target.dim()));
    GD_CHECK(!weight.defined() || weight.numel() == classes,
             "weight tensor should be defined either for all or no classes");
    GD_CHECK(target.size(1) == input.size(2) && target.size(2) == input.size(3),
             fmt::format("size mismatch (got input: {} , target: {}", sizes_string(input.sizes()),
                         sizes_string(target.sizes())));
    return;
  }
  DimVector expected{input.size(0)};
  for (int64_t d = 2; d < dim; ++d) expected.push_back(input.size(d));
  GD_CHECK(target.sizes() == IntArrayRef(expected), fmt::format("Expected target size {}, got {}",
                                                                sizes_string(expected), sizes_string(target.sizes())));
  GD_CHECK(!weight.defined() || weight.numel() == classes,
           "weight tensor should be defined either for all or no classes");
}

void check_index_target_dtype(const Tensor& target) {
  GD_CHECK(target.dtype() == kInt64 || target.dtype() == kUInt8,
           fmt::format("expected scalar type Long but found {}", c10_type_name(target.dtype())));
}

void check_weight_dtype(const Tensor& input, const Tensor& weight) {
  GD_CHECK(!weight.defined() || weight.dtype() == input.dtype(),
           fmt::format("expected scalar type {} but found {}", c10_type_name(input.dtype()), c10_type_name(weight.dtype())));
}

// gather and scatter_add along `dim` for indices the caller has already checked
// (the targets): without gather's range check, a cuda device never waits for
// the host. Each is the other's gradient, so every derivative order stays so.
struct ScatterAddChecked;

// out = x[..., index[...], ...] along dim, over index's shape.
struct GatherChecked {
  static constexpr std::string_view name = "GatherBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, int64_t dim, const Tensor& index) {
    ctx.save_for_backward(index);
    ctx.shape = x.sizes().dims();
    ctx.ints = {dim};
    Tensor out = empty(index.sizes(), x.options());
    if (index.numel() == 0) return out;
    DimGeometry s = nonempty_layout(x), i = nonempty_layout(index);
    const DimVector out_strides = contiguous_strides(i.sizes);
    DimVector x_strides = s.strides;  // x walked over index's shape, dim pinned at 0
    x_strides[dim] = 0;
    kernels::index_gather(x.dtype(), i.sizes, {out.data_ptr(), i.sizes, out_strides}, {x.data_ptr(), i.sizes, x_strides},
                          {index.data_ptr(), i.sizes, i.strides}, s.strides[dim], s.sizes[dim],
                          cuda_seam::device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g);
};

// out = zeros(shape); out[..., index[...], ...] += src[...] along dim.
struct ScatterAddChecked {
  static constexpr std::string_view name = "ScatterAddBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& src, const DimVector& shape, int64_t dim, const Tensor& index) {
    ctx.save_for_backward(index);
    ctx.ints = {dim};
    Tensor out = zeros(shape, src.options());
    if (index.numel() == 0) return out;
    DimGeometry o = nonempty_layout(out), i = nonempty_layout(index), r = nonempty_layout(src);
    DimVector out_strides = o.strides;
    out_strides[dim] = 0;
    kernels::index_scatter_add(out.dtype(), i.sizes, {out.data_ptr(), i.sizes, out_strides},
                               {src.data_ptr(), i.sizes, r.strides}, {index.data_ptr(), i.sizes, i.strides},
                               o.strides[dim], o.sizes[dim], are_deterministic_algorithms_enabled(),
                               cuda_seam::device_of(out));
    return out;
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [index] = ctx.saved<1>();
    return {apply<GatherChecked>(g, ctx.ints[0], index), Tensor()};
  }
};

GradList GatherChecked::backward(Ctx& ctx, const Tensor& g) {
  auto [index] = ctx.saved<1>();
  return {apply<ScatterAddChecked>(g, ctx.shape, ctx.ints[0], index), Tensor()};
}

Tensor gather_checked(const Tensor& x, int64_t dim, const Tensor& index) {
  return apply<GatherChecked>(x, dim, index);
}

// What nll_loss and cross_entropy's smoothing term share about a class-index
// target: which entries count, a target safe to index with everywhere (ignored
// ones read class 0), and each entry's weight (0 where ignored).
struct IndexTarget {
  Tensor valid;
  Tensor safe;
  Tensor weight;
};

IndexTarget index_target(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index) {
  const int64_t classes = input.size(input.dim() == 1 ? 0 : 1);
  Tensor target64 = target.to(kInt64);
  Tensor valid = target64 != ignore_index;
  Tensor out_of_bounds = valid & ((target64 < 0) | (target64 >= classes));
  if (out_of_bounds.any().item<bool>()) {
    int64_t first = target64.cpu().masked_select(out_of_bounds.cpu()).index({0}).item<int64_t>();
    throw Error(fmt::format("Target {} is out of bounds.", first));
  }
  Tensor safe = target64.masked_fill(valid.logical_not(), 0);
  Tensor per_entry = weight.defined()
                         ? where(valid, weight.index_select(0, safe.reshape({-1})).reshape(target.sizes()), 0.0)
                         : valid.to(input.dtype());
  return {valid, safe, per_entry};
}

// -input[target] * weight[target] per entry (0 where ignored), reduced with
// PyTorch's weighted mean: the sum over the sum of the counted entries' weights.
Tensor nll_of(const Tensor& log_probs, const IndexTarget& t, bool weighted, Reduction reduction) {
  const int64_t class_dim = log_probs.dim() == 1 ? 0 : 1;
  // t.safe is in range (index_target checked it).
  Tensor picked = gather_checked(log_probs, class_dim, t.safe.unsqueeze(class_dim)).squeeze(class_dim);
  // where, not a product with the 0/1 mask, so an ignored -inf log-probability
  // gives 0 and sends no NaN back through the gather.
  Tensor loss = where(t.valid, weighted ? -picked * t.weight : -picked, 0.0);
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return loss.sum();
    case Reduction::Mean: return loss.sum() / t.weight.sum();
    case Reduction::BatchMean: break;
  }
  throw Error("batchmean is not a valid value for reduction");
}

void check_label_smoothing(double label_smoothing) {
  // PyTorch lets a negative value through (as no smoothing); both ends are checked here.
  GD_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
           fmt::format("label_smoothing must be between 0.0 and 1.0. Got: {}", label_smoothing));
}

// The weight as a view that broadcasts along the class dim of an input of rank `dim`.
Tensor class_weight_view(const Tensor& weight, int64_t dim) {
  if (dim <= 1) return weight;
  DimVector shape(static_cast<size_t>(dim), 1);
  shape[1] = weight.numel();
  return weight.reshape(shape);
}

// Class probabilities: -sum_c w_c y_c log_softmax(x)_c, the mean dividing by
// the number of distributions (not by the weights), as PyTorch.
Tensor cross_entropy_probabilities(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& o) {
  GD_CHECK(target.is_floating_point(), fmt::format("Expected floating point type for target with class "
                                                   "probabilities, got {}",
                                                   c10_type_name(target.dtype())));
  GD_CHECK(o.ignore_index() < 0, "ignore_index is not supported for floating point target");
  check_label_smoothing(o.label_smoothing());
  GD_CHECK(input.dim() >= 1, fmt::format("Expected 1 or more dimensions (got {})", input.dim()));
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  const Tensor& weight = o.weight();
  GD_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
           fmt::format("cross_entropy: weight tensor should be defined either for all {} classes or no classes but "
                       "got weight tensor of shape: {}",
                       classes, sizes_string(weight.sizes())));
  check_weight_dtype(input, weight);
  Tensor log_probs = log_softmax(input, class_dim);
  Tensor smoothed = o.label_smoothing() > 0
                        ? target * (1 - o.label_smoothing()) + o.label_smoothing() / static_cast<double>(classes)
                        : target;
  Tensor terms = log_probs * smoothed;
  if (weight.defined()) terms = terms * class_weight_view(weight, input.dim());
  switch (o.reduction()) {
    case Reduction::None: return -terms.sum({class_dim});
    case Reduction::Sum: return -terms.sum();
    case Reduction::Mean:
      // numel / C distributions; none at all gives NaN, as a mean over nothing.
      return -terms.sum() / static_cast<double>(classes == 0 ? 0 : input.numel() / classes);
    case Reduction::BatchMean: break;
  }
  throw Error("batchmean is not a valid value for reduction");
}

// Class indices with smoothing: (1 - s) nll + (s / C) (-sum_c w_c log p_c),
// the second term reduced with nll's weighted-mean denominator.
Tensor cross_entropy_smoothed(const Tensor& log_probs, const Tensor& target, const CrossEntropyFuncOptions& o) {
  const int64_t class_dim = log_probs.dim() == 1 ? 0 : 1;
  const double s = o.label_smoothing();
  const double classes = static_cast<double>(log_probs.size(class_dim));
  const Tensor& weight = o.weight();
  IndexTarget t = index_target(log_probs, target, weight, o.ignore_index());
  Tensor nll = nll_of(log_probs, t, weight.defined(), o.reduction());
  Tensor weighted = weight.defined() ? log_probs * class_weight_view(weight, log_probs.dim()) : log_probs;
  Tensor smooth = where(t.valid, -weighted.sum({class_dim}), 0.0);
  switch (o.reduction()) {
    case Reduction::None: break;
    case Reduction::Sum: smooth = smooth.sum(); break;
    case Reduction::Mean: smooth = smooth.sum() / t.weight.sum(); break;
    case Reduction::BatchMean: throw Error("batchmean is not a valid value for reduction");
  }
  return (1 - s) * nll + smooth * (s / classes);
}

// ---- binary cross entropy ----

// Note [BCE gradient at 0 and 1]: the loss clamps each log at -100, but its
// gradient is PyTorch's (x - y) / max(x (1 - x), 1e-12f) rather than the
// clamped function's derivative: at a saturated x = 0 or 1 the two differ
// (0 against -1 for x = 1, y = 1), and training code tuned on PyTorch expects
// PyTorch's. Inside (0, 1) both are the true derivative. The target's
// gradient is -logit(x), infinite at 0 and 1 as in PyTorch.
struct BinaryCrossEntropy {
  static constexpr std::string_view name = "BinaryCrossEntropyBackward0";
  static Tensor forward(Ctx& ctx, const Tensor& x, const Tensor& y) {
    ctx.save_for_backward(x, y);
    return (y - 1) * clamp_min(log(1 - x), -100) - y * clamp_min(log(x), -100);
  }
  static GradList backward(Ctx& ctx, const Tensor& g) {
    auto [x, y] = ctx.saved<2>();
    Tensor gx, gy;
    // PyTorch's epsilon is the float 1e-12f, also for double.
    if (ctx.needs_input_grad(0)) gx = g * (x - y) / clamp_min(x * (1 - x), static_cast<double>(1e-12f));
    if (ctx.needs_input_grad(1)) gy = g * (log(1 - x) - log(x));
    return {gx, gy};
  }
};

void check_regression_dtypes(const Tensor& input, const Tensor& target, std::string_view kernel) {
  if (!input.is_floating_point() && !target.is_floating_point())
    throw Error(fmt::format("\"{}\" not implemented for '{}'", kernel,
                            c10_type_name(promote_types(input.dtype(), target.dtype()))));
}

// x[n, index[n, j]] for a 2-D x and an index its caller has checked.
Tensor take_rows(const Tensor& x, const Tensor& index) { return gather_checked(x, 1, index); }

// The class indices 0..classes-1 on x's device, shaped [1, classes].
Tensor class_row(const Tensor& x, int64_t classes) {
  return arange(classes, TensorOptions().device(x.device())).reshape({1, classes});
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  check_nll_shapes(input, target, options.weight());
  check_floating(input, "nll_loss_out_frame");
  check_index_target_dtype(target);
  check_weight_dtype(input, options.weight());
  IndexTarget t = index_target(input, target, options.weight(), options.ignore_index());
  return nll_of(input, t, options.weight().defined(), options.reduction());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  // Equal shapes mean class probabilities, as PyTorch decides.
  if (input.sizes() == target.sizes()) return cross_entropy_probabilities(input, target, options);
  check_label_smoothing(options.label_smoothing());
  check_nll_shapes(input, target, options.weight());
  check_floating(input, "log_softmax");
  check_index_target_dtype(target);
  check_weight_dtype(input, options.weight());
  Tensor log_probs = log_softmax(input, input.dim() == 1 ? 0 : 1);
  if (options.label_smoothing() > 0) return cross_entropy_smoothed(log_probs, target, options);
  IndexTarget t = index_target(log_probs, target, options.weight(), options.ignore_index());
  return nll_of(log_probs, t, options.weight().defined(), options.reduction());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  GD_CHECK(target.sizes() == input.sizes(),
           fmt::format("Using a target size ({}) that is different to the input size ({}) is deprecated. Please "
                       "ensure they have the same size.",
                       sizes_string(target.sizes()), sizes_string(input.sizes())));
  check_floating(input, "binary_cross_entropy");
  GD_CHECK(target.dtype() == input.dtype(), fmt::format("Found dtype {} but expected {}", c10_type_name(target.dtype()),
                                                        c10_type_name(input.dtype())));
  check_weight_dtype(input, options.weight());
  // NaN fails both comparisons, so it is rejected too, as in PyTorch.
  GD_CHECK(((input >= 0) & (input <= 1)).all().item<bool>(), "all elements of input should be between 0 and 1");
  Tensor loss = apply<BinaryCrossEntropy>(input, target);
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  GD_CHECK(target.sizes() == input.sizes(), fmt::format("Target size ({}) must be the same as input size ({})",
                                                        sizes_string(target.sizes()), sizes_string(input.sizes())));
  check_floating(input, "binary_cross_entropy_with_logits");
  GD_CHECK(target.is_floating_point(), fmt::format("result type {} can't be cast to the desired output type {}",
                                                   c10_type_name(input.dtype()), c10_type_name(target.dtype())));
  check_weight_dtype(input, options.weight());
  check_weight_dtype(input, options.pos_weight());
  // (1 - y) x + l * softplus(-x) with l = 1 + (p - 1) y; softplus(-x) = -log_sigmoid(x).
  Tensor log_sig = logsigmoid(input);
  Tensor positive_weight = options.pos_weight().defined() ? 1 + (options.pos_weight() - 1) * target : Tensor();
  Tensor loss = positive_weight.defined() ? (1 - target) * input - positive_weight * log_sig
                                          : (1 - target) * input - log_sig;
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  check_regression_dtypes(input, target, "mse_cpu");
  return reduce((input - target).square(), options.reduction());
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  check_regression_dtypes(input, target, "l1_loss");
  return reduce((input - target).abs(), options.reduction());
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  const double delta = options.delta();
  GD_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  check_regression_dtypes(input, target, "huber_cpu");
  Tensor d = input - target;
  // The quadratic branch squares d, not |d|, so its gradient has no kink at 0;
  // where() sends the unselected branch a zero gradient, so an overflowing
  // square for large |d| does no harm.
  Tensor loss = where(d.abs() < delta, 0.5 * d * d, delta * (d.abs() - 0.5 * delta));
  return reduce(loss, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options, double beta) {
  return smooth_l1_loss(input, target, SmoothL1LossFuncOptions(options).beta(beta));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  const double beta = options.beta();
  GD_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  check_regression_dtypes(input, target, "smooth_l1_cpu");
  if (beta == 0) return l1_loss(input, target, L1LossFuncOptions(options.reduction()));
  Tensor d = input - target;
  Tensor loss = where(d.abs() < beta, 0.5 * d * d / beta, d.abs() - 0.5 * beta);
  return reduce(loss, options.reduction());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  GD_CHECK(input.is_floating_point() && target.is_floating_point(), "kl_div: Integral inputs not supported.");
  Tensor loss;
  if (options.log_target()) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(y, y) - y x: y log y is 0 at y = 0 (and NaN below 0, as PyTorch).
    loss = where(target == 0, 0.0, target * log(target)) - target * input;
  }
  if (options.reduction() != Reduction::BatchMean) return reduce(loss, options.reduction());
  Tensor total = loss.sum();
  return input.dim() == 0 ? total : total / static_cast<double>(input.size(0));
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  check_floating(input, "hinge_embedding_loss");
  Tensor margin_clamp = (options.margin() - input).clamp_min(0);
  Tensor loss = where(target != 1, margin_clamp, 0.0) + where(target != -1, input, 0.0);
  return reduce(loss, options.reduction());
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options) {
  const int64_t p = options.p();
  GD_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  const int64_t ndim = input.dim();
  GD_CHECK(input.numel() > 0 && ndim <= 2,
           fmt::format("Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
                       sizes_string(input.sizes())));
  const int64_t frames = ndim <= 1 ? 1 : input.size(0);
  const int64_t classes = ndim == 0 ? 1 : input.size(ndim - 1);
  GD_CHECK(target.dim() <= 1 && target.numel() == frames,
           fmt::format("inconsistent target size, got: {}", sizes_string(target.sizes())));
  check_floating(input, "multi_margin_loss");
  check_index_target_dtype(target);
  const Tensor& weight = options.weight();
  GD_CHECK(!weight.defined() || (weight.dim() <= 1 && weight.numel() == classes),
           fmt::format("inconsistent weight size, expected {} but got {}", classes,
                       sizes_string(weight.defined() ? weight.sizes() : IntArrayRef())));
  check_weight_dtype(input, weight);
  Tensor y = target.to(kInt64).reshape({frames, 1});
  GD_CHECK(((y >= 0) & (y < classes)).all().item<bool>(), "target out of range");
  Tensor x = input.reshape({frames, classes});
  Tensor z = (options.margin() - take_rows(x, y) + x).clamp_min(0);
  if (p == 2) z = z * z;
  if (weight.defined()) z = z * weight.reshape({-1}).index_select(0, y.reshape({-1})).reshape({frames, 1});
  // The target's own class adds nothing.
  Tensor loss = where(class_row(x, classes) == y, 0.0, z).sum({1}) / static_cast<double>(classes);
  return reduce(loss.reshape(target.sizes()), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  const int64_t target_dim = target.dim();
  GD_CHECK(target_dim == 0 || target_dim == 1, "0D or 1D target tensor expected, multi-target not supported");
  GD_CHECK(input1.dim() == target_dim + 1 && input2.dim() == target_dim + 1,
           fmt::format("{}D target tensor expects {}D input tensors, but found inputs with sizes {} and {}.",
                       target_dim, target_dim + 1, sizes_string(input1.sizes()), sizes_string(input2.sizes())));
  // PyTorch's EPSILON keeps a zero row from dividing by zero.
  constexpr double epsilon = 1e-12;
  Tensor product = (input1 * input2).sum({target_dim});
  Tensor square1 = (input1 * input1).sum({target_dim}) + epsilon;
  Tensor square2 = (input2 * input2).sum({target_dim}) + epsilon;
  Tensor cos = product / (square1 * square2).sqrt();
  Tensor loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - options.margin()).clamp_min(0), 0.0);
  return reduce(loss, options.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options) {
  const int64_t ndim = input.dim();
  const bool valid_input = (ndim == 2 && input.size(1) != 0) || (ndim == 1 && input.size(0) != 0) || ndim == 0;
  GD_CHECK(valid_input, fmt::format("Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
                                    sizes_string(input.sizes())));
  const int64_t frames = ndim <= 1 ? 1 : input.size(0);
  const int64_t classes = ndim == 0 ? 1 : input.size(ndim - 1);
  const bool valid_target = ndim <= 1 ? target.dim() <= 1 && target.numel() == classes
                                      : target.dim() == 2 && target.size(0) == frames && target.size(1) == classes;
  GD_CHECK(valid_target,
           fmt::format("inconsistent size {} for argument #2 'target'", sizes_string(target.sizes())));
  check_floating(input, "multilabel_margin_loss");
  GD_CHECK(target.dtype() == kInt64, fmt::format("expected scalar type Long but found {}", c10_type_name(target.dtype())));
  GD_CHECK(((target >= -1) & (target < classes)).all().item<bool>(), "argument #2 'target' is out of range");
  Tensor x = input.reshape({frames, classes});
  Tensor y = target.reshape({frames, classes});
  // The listed targets: the entries before a row's first -1 (repeats count again, as in PyTorch).
  Tensor listed = (y != -1).to(kInt64).cumprod(1) != 0;
  Tensor safe = y.masked_fill(listed.logical_not(), 0);
  Tensor is_target = ((safe.unsqueeze(-1) == class_row(x, classes).unsqueeze(0)) & listed.unsqueeze(-1)).any(1);
  // z[n, j, i] = max(0, 1 - (x[n, y[n, j]] - x[n, i])) for listed j and unlisted i.
  Tensor z = (1 - take_rows(x, safe).unsqueeze(-1) + x.unsqueeze(1)).clamp_min(0);
  Tensor counted = listed.unsqueeze(-1) & is_target.logical_not().unsqueeze(1);
  Tensor loss = where(counted, z, 0.0).sum({1, 2}) / static_cast<double>(classes);
  return reduce(ndim <= 1 ? loss.reshape({}) : loss, options.reduction());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  check_floating(input, "soft_margin_loss");
  return reduce(log1p(exp(-input * target)), options.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  check_floating(input, "multilabel_soft_margin_loss");
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  if (options.weight().defined()) loss = loss * options.weight();
  const int64_t class_dim = input.dim() - 1;
  loss = loss.sum({class_dim}) / static_cast<double>(input.size(class_dim));
  return reduce(loss, options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  GD_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
           fmt::format("All inputs should have same dimension but got {}D, {}D and {}D inputs.", anchor.dim(),
                       positive.dim(), negative.dim()));
  auto distance = PairwiseDistanceFuncOptions().p(options.p()).eps(options.eps());
  Tensor positive_distance = pairwise_distance(anchor, positive, distance);
  Tensor negative_distance = pairwise_distance(anchor, negative, distance);
  if (options.swap()) negative_distance = minimum(negative_distance, pairwise_distance(positive, negative, distance));
  return reduce((options.margin() + positive_distance - negative_distance).clamp_min(0), options.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  auto distance = [&](const Tensor& a, const Tensor& b) {
    return options.distance_function() ? (*options.distance_function())(a, b) : pairwise_distance(a, b);
  };
  Tensor positive_distance = distance(anchor, positive);
  Tensor negative_distance = distance(anchor, negative);
  if (options.swap()) negative_distance = minimum(negative_distance, distance(positive, negative));
  return reduce((options.margin() + positive_distance - negative_distance).clamp_min(0), options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  GD_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(),
           fmt::format("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
                       "{}, input2: {}, target: {} ",
                       sizes_string(input1.sizes()), sizes_string(input2.sizes()), sizes_string(target.sizes())));
  return reduce((-target * (input1 - input2) + options.margin()).clamp_min(0), options.reduction());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  check_floating(input, "poisson_nll_loss");
  Tensor loss = options.log_input() ? exp(input) - target * input : input - target * log(input + options.eps());
  if (options.full()) {
    // Stirling's term for log(target!), counted where target > 1 only.
    Tensor stirling = target * log(target) - target + 0.5 * log(2 * M_PI * target);
    loss = loss + where(target > 1, stirling, 0.0);
  }
  return reduce(loss, options.reduction());
}

Tensor one_hot(const Tensor& tensor, int64_t num_classes) {
  GD_CHECK(tensor.dtype() == kInt64, "one_hot is only applicable to index tensor.");
  if (num_classes == -1) {
    GD_CHECK(tensor.numel() > 0, "Can not infer total number of classes from empty tensor.");
    num_classes = tensor.max().item<int64_t>() + 1;
  }
  if (tensor.numel() > 0) {
    GD_CHECK(tensor.min().item<int64_t>() >= 0, "Class values must be non-negative.");
    GD_CHECK(tensor.max().item<int64_t>() < num_classes, "Class values must be smaller than num_classes.");
  }
  return (tensor.unsqueeze(-1) == arange(num_classes, TensorOptions().device(tensor.device()))).to(kInt64);
}

}  // namespace functional
}  // namespace gradiens::nn

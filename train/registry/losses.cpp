// The losses a config may name ("loss": {"type": "cross_entropy", ...}): every
// loss of nn/functional/loss.h under its function name, with its options.
#include <string>
#include <utility>
#include <vector>

#include "engine/tensor_data.h"
#include "nn/functional/loss.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

namespace F = nn::functional;

// "none" is left out: the trainer backpropagates the loss, which must be a scalar.
TypePtr reduction_type() { return Enum({"mean", "sum"}); }

Field& add_reduction(ObjectSpec& spec) {
  return spec.add("reduction", reduction_type(), "how the elementwise losses are reduced: their mean or their sum")
      .default_("mean");
}

TypePtr weights_type() { return OrNull(Array(Number(0.0), 1)); }

// A list of numbers as a 1-D tensor of the model's dtype; undefined when absent or null.
Tensor weights(const json& config, const std::string& key, ScalarType dtype) {
  if (!has(config, key)) return Tensor();
  return tensor(config.at(key).get<std::vector<double>>(), TensorOptions().dtype(dtype));
}

// The binary, regression and divergence losses compare the output with a
// target of its dtype; a data set's int64 labels (0 and 1) become that dtype.
Tensor as_output_dtype(const Tensor& target, const Tensor& output) {
  return target.scalar_type() == output.scalar_type() ? target : target.to(output.scalar_type());
}

// A loss whose only option is the reduction (mse_loss, l1_loss).
template <class Options, Tensor (*Fn)(const Tensor&, const Tensor&, const Options&)>
LossFactory reduction_only() {
  return [](const json& config, ScalarType) -> LossFunction {
    Options options;
    options.reduction(text(config, "reduction"));
    return [options](const Tensor& output, const Tensor& target) {
      return Fn(output, as_output_dtype(target, output), options);
    };
  };
}

}  // namespace

void register_losses(Builders& b) {
  {
    ObjectSpec spec("cross_entropy", "log_softmax of the output logits, then nll_loss (class-index or probability targets)");
    spec.add("weight", weights_type(), "a weight per class (null: all 1)");
    spec.add("ignore_index", Integer(), "a target class that adds nothing to the loss nor to the mean").default_(-100);
    add_reduction(spec);
    spec.add("label_smoothing", Number(0.0, 1.0), "mixes the one-hot target with the uniform distribution by this much")
        .default_(0.0);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType dtype) -> LossFunction {
            F::CrossEntropyFuncOptions options;
            options.weight(weights(config, "weight", dtype))
                .ignore_index(integer(config, "ignore_index"))
                .reduction(text(config, "reduction"))
                .label_smoothing(number(config, "label_smoothing"));
            return [options](const Tensor& output, const Tensor& target) {
              // Class indices stay integers; probability targets take the output's dtype.
              return F::cross_entropy(output, target.is_floating_point() ? as_output_dtype(target, output) : target,
                                      options);
            };
          }));
  }
  {
    ObjectSpec spec("nll_loss", "negative log-likelihood of class-index targets; the output holds log-probabilities");
    spec.add("weight", weights_type(), "a weight per class (null: all 1)");
    spec.add("ignore_index", Integer(), "a target class that adds nothing to the loss nor to the mean").default_(-100);
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType dtype) -> LossFunction {
            F::NLLLossFuncOptions options;
            options.weight(weights(config, "weight", dtype))
                .ignore_index(integer(config, "ignore_index"))
                .reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) { return F::nll_loss(output, target, options); };
          }));
  }
  {
    ObjectSpec spec("binary_cross_entropy", "binary cross entropy of output probabilities in [0, 1] and 0/1 targets");
    spec.add("weight", weights_type(), "rescales each element's loss, broadcast against the output (null: all 1)");
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType dtype) -> LossFunction {
            F::BinaryCrossEntropyFuncOptions options;
            options.weight(weights(config, "weight", dtype)).reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) {
              return F::binary_cross_entropy(output, as_output_dtype(target, output), options);
            };
          }));
  }
  {
    ObjectSpec spec("binary_cross_entropy_with_logits",
                    "binary cross entropy of output logits (sigmoid included, numerically stable) and 0/1 targets");
    spec.add("weight", weights_type(), "rescales each element's loss, broadcast against the output (null: all 1)");
    spec.add("pos_weight", weights_type(), "multiplies the positive term's loss, one value per class (null: 1)");
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType dtype) -> LossFunction {
            F::BinaryCrossEntropyWithLogitsFuncOptions options;
            options.weight(weights(config, "weight", dtype))
                .pos_weight(weights(config, "pos_weight", dtype))
                .reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) {
              return F::binary_cross_entropy_with_logits(output, as_output_dtype(target, output), options);
            };
          }));
  }
  {
    ObjectSpec spec("mse_loss", "mean squared error (x - y)^2 of output and target");
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), reduction_only<F::MSELossFuncOptions, F::mse_loss>());
  }
  {
    ObjectSpec spec("l1_loss", "mean absolute error |x - y| of output and target");
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), reduction_only<F::L1LossFuncOptions, F::l1_loss>());
  }
  {
    ObjectSpec spec("huber_loss", "quadratic for |x - y| < delta, linear (slope delta) beyond");
    spec.add("delta", PositiveNumber(), "where the loss turns from quadratic to linear").default_(1.0);
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType) -> LossFunction {
            F::HuberLossFuncOptions options;
            options.delta(number(config, "delta")).reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) {
              return F::huber_loss(output, as_output_dtype(target, output), options);
            };
          }));
  }
  {
    ObjectSpec spec("smooth_l1_loss", "huber_loss divided by beta: 0.5 (x - y)^2 / beta for |x - y| < beta, else |x - y| - beta/2");
    spec.add("beta", Number(0.0), "where the loss turns from quadratic to linear (0: l1_loss)").default_(1.0);
    add_reduction(spec);
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType) -> LossFunction {
            F::SmoothL1LossFuncOptions options;
            options.beta(number(config, "beta")).reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) {
              return F::smooth_l1_loss(output, as_output_dtype(target, output), options);
            };
          }));
  }
  {
    ObjectSpec spec("kl_div", "Kullback-Leibler divergence of the target from output log-probabilities");
    spec.add("log_target", Bool(), "the target holds log-probabilities rather than probabilities").default_(false);
    // "batchmean" is the divergence's definition; "mean" (over every element) is PyTorch's default.
    spec.add("reduction", Enum({"mean", "sum", "batchmean"}),
             "the mean over every element, the sum, or the sum divided by the batch size")
        .default_("mean");
    b.add(b.losses, kLoss, std::move(spec), LossFactory([](const json& config, ScalarType) -> LossFunction {
            F::KLDivFuncOptions options;
            options.log_target(flag(config, "log_target")).reduction(text(config, "reduction"));
            return [options](const Tensor& output, const Tensor& target) {
              return F::kl_div(output, as_output_dtype(target, output), options);
            };
          }));
  }
}

}  // namespace gradiens::train

// The optimizers a config may name ("optimizer": {"type": "AdamW", ...}): SGD,
// Adam, AdamW, RMSprop, Adagrad and LBFGS with every option, PyTorch's defaults and ranges;
// and LevenbergMarquardt for PINN runs.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adamw.h"
#include "optim/lbfgs.h"
#include "optim/levenberg_marquardt.h"
#include "optim/rmsprop.h"
#include "optim/sgd.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

// The ranges are those PyTorch's constructors check ("Invalid learning rate:
// -0.1"), so that a config fails at validation with its path instead of at build.
TypePtr NonNegative() { return Number(0.0); }

// A beta of Adam: 0 <= beta < 1.
TypePtr Beta() {
  auto type = std::make_shared<ValueType>(*Number(0.0, 1.0));
  type->exclusive_maximum = true;
  return type;
}

Field& add_lr(ObjectSpec& spec, std::optional<double> default_lr) {
  Field& field = spec.add("lr", NonNegative(), "the learning rate");
  if (default_lr) field.default_(*default_lr);
  else field.require();  // SGD: PyTorch has no default
  return field;
}

// Adam and AdamW share every option but weight_decay's default and meaning.
template <class Options>
Options adam_options(const json& config) {
  const json& betas = config.at("betas");
  Options options(number(config, "lr"));
  options.betas(std::make_tuple(betas.at(0).get<double>(), betas.at(1).get<double>()))
      .eps(number(config, "eps"))
      .weight_decay(number(config, "weight_decay"))
      .amsgrad(flag(config, "amsgrad"))
      .maximize(flag(config, "maximize"));
  return options;
}

ObjectSpec adam_spec(const std::string& name, const std::string& description, double weight_decay,
                     const std::string& weight_decay_description) {
  ObjectSpec spec(name, description);
  add_lr(spec, 1e-3);
  spec.add("betas", Array(Beta(), 2, 2), "the decay rates of the gradient's running mean and of its square's")
      .default_(json::array({0.9, 0.999}));
  spec.add("eps", NonNegative(), "added to the denominator for numerical stability").default_(1e-8);
  spec.add("weight_decay", NonNegative(), weight_decay_description).default_(weight_decay);
  spec.add("amsgrad", Bool(), "use the maximum of the past squared-gradient averages (AMSGrad)").default_(false);
  spec.add("maximize", Bool(), "maximize the objective instead of minimizing it").default_(false);
  return spec;
}

}  // namespace

void register_optimizers(Builders& b) {
  {
    ObjectSpec spec("SGD", "stochastic gradient descent, with momentum, dampening, Nesterov and weight decay");
    add_lr(spec, std::nullopt);
    spec.add("momentum", NonNegative(), "the momentum factor (0: none)").default_(0.0);
    spec.add("dampening", Number(), "dampening of the momentum").default_(0.0);
    spec.add("weight_decay", NonNegative(), "L2 penalty added to the gradient").default_(0.0);
    spec.add("nesterov", Bool(), "Nesterov momentum (needs a momentum and zero dampening)").default_(false);
    spec.add("maximize", Bool(), "maximize the objective instead of minimizing it").default_(false);
    spec.check = [](const json& config, const std::string& path, Diagnostics& diagnostics) {
      if (flag(config, "nesterov") && (number(config, "momentum") <= 0 || number(config, "dampening") != 0))
        diagnostics.error(join_path(path, "nesterov"), "Nesterov momentum requires a momentum and zero dampening");
    };
    b.add(b.optimizers, kOptimizer, std::move(spec),
          OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
            optim::SGDOptions options(number(config, "lr"));
            options.momentum(number(config, "momentum"))
                .dampening(number(config, "dampening"))
                .weight_decay(number(config, "weight_decay"))
                .nesterov(flag(config, "nesterov"))
                .maximize(flag(config, "maximize"));
            return std::make_unique<optim::SGD>(std::move(params), options);
          }));
  }
  b.add(b.optimizers, kOptimizer,
        adam_spec("Adam", "Adam (Kingma and Ba), with AMSGrad; weight decay added to the gradient", 0.0,
                  "L2 penalty added to the gradient"),
        OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
          return std::make_unique<optim::Adam>(std::move(params), adam_options<optim::AdamOptions>(config));
        }));
  b.add(b.optimizers, kOptimizer,
        adam_spec("AdamW", "Adam with decoupled weight decay (Loshchilov and Hutter)", 1e-2,
                  "decoupled weight decay: each step shrinks the parameters by lr * weight_decay"),
        OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
          return std::make_unique<optim::AdamW>(std::move(params), adam_options<optim::AdamWOptions>(config));
        }));
  {
    ObjectSpec spec("RMSprop", "RMSprop (Hinton), with momentum and the centered variant");
    add_lr(spec, 1e-2);
    spec.add("alpha", NonNegative(), "the decay rate of the squared-gradient average").default_(0.99);
    spec.add("eps", NonNegative(), "added to the denominator for numerical stability").default_(1e-8);
    spec.add("weight_decay", NonNegative(), "L2 penalty added to the gradient").default_(0.0);
    spec.add("momentum", NonNegative(), "the momentum factor (0: none)").default_(0.0);
    spec.add("centered", Bool(), "normalize by the gradient's estimated variance instead of its second moment")
        .default_(false);
    spec.add("maximize", Bool(), "maximize the objective instead of minimizing it").default_(false);
    b.add(b.optimizers, kOptimizer, std::move(spec),
          OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
            optim::RMSpropOptions options(number(config, "lr"));
            options.alpha(number(config, "alpha"))
                .eps(number(config, "eps"))
                .weight_decay(number(config, "weight_decay"))
                .momentum(number(config, "momentum"))
                .centered(flag(config, "centered"))
                .maximize(flag(config, "maximize"));
            return std::make_unique<optim::RMSprop>(std::move(params), options);
          }));
  }
  {
    ObjectSpec spec("Adagrad", "Adagrad (Duchi et al.), with learning-rate decay");
    add_lr(spec, 1e-2);
    spec.add("lr_decay", NonNegative(), "the lr is lr / (1 + (step - 1) * lr_decay)").default_(0.0);
    spec.add("weight_decay", NonNegative(), "L2 penalty added to the gradient").default_(0.0);
    spec.add("initial_accumulator_value", NonNegative(), "the starting value of the squared-gradient sums")
        .default_(0.0);
    spec.add("eps", NonNegative(), "added to the denominator for numerical stability").default_(1e-10);
    spec.add("maximize", Bool(), "maximize the objective instead of minimizing it").default_(false);
    b.add(b.optimizers, kOptimizer, std::move(spec),
          OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
            optim::AdagradOptions options(number(config, "lr"));
            options.lr_decay(number(config, "lr_decay"))
                .weight_decay(number(config, "weight_decay"))
                .initial_accumulator_value(number(config, "initial_accumulator_value"))
                .eps(number(config, "eps"))
                .maximize(flag(config, "maximize"));
            return std::make_unique<optim::Adagrad>(std::move(params), options);
          }));
  }
  {
    // PyTorch checks none of LBFGS's values but the line search's name; the
    // ranges below are those that make sense (history_size >= 1 is gradiens' check).
    ObjectSpec spec("LBFGS", "limited-memory BFGS over all parameters at once, optionally with a strong-Wolfe line search");
    add_lr(spec, 1.0);
    spec.add("max_iter", Integer(1), "iterations per optimizer step").default_(20);
    spec.add("max_eval", OrNull(Integer(1)), "loss evaluations per optimizer step (null: max_iter * 5 / 4)");
    spec.add("tolerance_grad", NonNegative(), "stop once the largest gradient magnitude is at most this").default_(1e-7);
    spec.add("tolerance_change", NonNegative(), "stop once the loss or the parameters change by at most this")
        .default_(1e-9);
    spec.add("history_size", Integer(1), "the number of past updates kept").default_(100);
    spec.add("line_search_fn", OrNull(Enum({"strong_wolfe"})), "the line search (null: fixed steps of length lr)");
    b.add(b.optimizers, kOptimizer, std::move(spec),
          OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
            optim::LBFGSOptions options(number(config, "lr"));
            options.max_iter(integer(config, "max_iter"))
                .max_eval(has(config, "max_eval") ? std::optional<int64_t>(integer(config, "max_eval")) : std::nullopt)
                .tolerance_grad(number(config, "tolerance_grad"))
                .tolerance_change(number(config, "tolerance_change"))
                .history_size(integer(config, "history_size"))
                .line_search_fn(has(config, "line_search_fn") ? std::optional<std::string>(text(config, "line_search_fn"))
                                                              : std::nullopt);
            return std::make_unique<optim::LBFGS>(std::move(params), options);
          }));
  }
  {
    ObjectSpec spec("LevenbergMarquardt", "damped Gauss-Newton on the weighted residuals of a PINN (optim/"
                    "levenberg_marquardt.h): one solve of (J^T J + mu I) s = J^T r per step, J the residuals' Jacobian; "
                    "needs the Taylor engine and P x P (or R x R) doubles in memory");
    add_lr(spec, 1.0);
    spec.add("damping", PositiveNumber(), "the initial damping mu relative to the largest diagonal entry of J^T J")
        .default_(1e-3);
    spec.add("max_attempts", Integer(1), "rejected steps (each with more damping) tried per optimizer step")
        .default_(10);
    b.add(b.optimizers, kOptimizer, std::move(spec),
          OptimizerFactory([](std::vector<Tensor> params, const json& config) -> std::unique_ptr<optim::Optimizer> {
            optim::LevenbergMarquardtOptions options(number(config, "lr"));
            options.damping(number(config, "damping")).max_attempts(integer(config, "max_attempts"));
            return std::make_unique<optim::LevenbergMarquardt>(std::move(params), options);
          }));
  }
}

}  // namespace gradiens::train

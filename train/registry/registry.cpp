// builtin(): the registries filled once; layer dispatch with its dry run that
// moves the shape context; readers of resolved values.
#include "train/registry/registry.h"

#include <fmt/format.h>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "kernels/error.h"

namespace gradiens::train {

int64_t SplitData::size() const {
  return sequences.empty() ? (inputs.defined() ? inputs.size(0) : 0) : static_cast<int64_t>(sequences.size());
}

nn::AnyModule Builders::build_layer(json& config, const std::string& path, LayerContext& context) const {
  const std::string type = config.at("type").get<std::string>();
  auto it = layers.find(type);
  GD_INTERNAL_ASSERT(it != layers.end(), "no builder for layer " + type);
  bool context_updated = false;
  nn::AnyModule module = it->second(config, path, context, context_updated, *this);
  module.ptr()->to(context.dtype);
  if (!context_updated) {
    // The output shape by a dry forward pass of one zero sample, in eval mode
    // (BatchNorm takes a batch of one there) and without recording a graph.
    NoGradGuard no_grad;
    std::vector<int64_t> shape = {1};
    shape.insert(shape.end(), context.sample_shape.begin(), context.sample_shape.end());
    const bool training = module.ptr()->is_training();
    module.ptr()->eval();
    Tensor output;
    try {
      output = module.forward(zeros(shape, TensorOptions().dtype(context.sample_dtype)));
    } catch (const Error& e) {
      module.ptr()->train(training);
      std::string sample = "[";
      for (size_t i = 0; i < context.sample_shape.size(); ++i) sample += (i ? ", " : "") + std::to_string(context.sample_shape[i]);
      throw Error(fmt::format("{}: a {} cannot take the input it gets here (one sample is {} {}): {}", path, type,
                              sample + "]", dtype_name(context.sample_dtype), e.what()));
    }
    module.ptr()->train(training);
    context.sample_shape.assign(output.sizes().begin() + 1, output.sizes().end());
    context.sample_dtype = output.scalar_type();
  }
  return module;
}

const Builders& builtin() {
  static const Builders builders = [] {
    Builders b;
    b.specs.category(kLayer, "layers", "a layer of nn/ (model, model.layers[i])");
    b.specs.category(kLoss, "losses", "a loss of nn::functional (loss)");
    b.specs.category(kOptimizer, "optimizers", "an optimizer of optim/ (optimizer, train.phases[i].optimizer)");
    b.specs.category(kScheduler, "schedulers", "a learning-rate scheduler of optim/ (scheduler)");
    b.specs.category(kDataset, "datasets", "a data set (data.train, data.val, data.test)");
    b.specs.category(kInit, "inits", "a parameter initialization of nn::init (model init)");
    b.specs.category(kGeometry, "geometries", "a PINN domain of pinn/geometry.h (pinn.domain)");
    b.specs.category(kPde, "pdes", "a PDE whose residual a PINN trains on (pinn.pde)");
    b.specs.category(kCondition, "conditions", "a PINN condition, one loss term (pinn.conditions[i])");
    b.specs.category(kReference, "references", "an exact or reference solution of a PINN problem (pinn.reference)");
    register_inits(b);
    register_layers(b);
    register_losses(b);
    register_optimizers(b);
    register_schedulers(b);
    register_datasets(b);
    register_pinn(b);
    return b;
  }();
  return builders;
}

double number(const json& config, const std::string& key) { return config.at(key).get<double>(); }
int64_t integer(const json& config, const std::string& key) { return config.at(key).get<int64_t>(); }
std::string text(const json& config, const std::string& key) { return config.at(key).get<std::string>(); }
bool flag(const json& config, const std::string& key) { return config.at(key).get<bool>(); }
bool has(const json& config, const std::string& key) { return config.contains(key) && !config.at(key).is_null(); }

}  // namespace gradiens::train

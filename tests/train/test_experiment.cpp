// Experiments built and trained in process: tensors from a .safetensors file,
// gradient accumulation against one large batch, and evaluation metrics
// against counts done by hand.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"
#include "engine/generator.h"
#include "engine/io/safetensors.h"
#include "engine/tensor_data.h"
#include "train/config/run_spec.h"
#include "train/config/validate.h"
#include "train/experiment.h"
#include "train/trainer.h"

namespace gt = gradiens::train;
namespace gd = gradiens;
namespace fs = std::filesystem;
using gt::json;

namespace {

gt::json resolve(const json& config) {
  gt::Diagnostics diagnostics;
  json resolved = gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  REQUIRE_MESSAGE(diagnostics.empty(), diagnostics.str());
  return resolved;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(GRADIENS_TRAIN_TEST_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("experiment: TensorFile data, derived sizes, and evaluation counted by hand") {
  const fs::path dir = scratch("tensor_file");
  gd::Generator generator(5);
  gd::Tensor inputs = gd::randn({40, 6}, generator);
  gd::Tensor targets = gd::randint(0, 4, {40}, generator);
  gd::save({{"x", inputs}, {"y", targets}}, (dir / "set.safetensors").string());
  json config = {{"version", 1},
                 {"model", {{"type", "Linear"}, {"out_features", 4}}},
                 {"data", {{"train", {{"type", "TensorFile"}, {"path", "set.safetensors"}, {"inputs", "x"}, {"targets", "y"}}},
                           {"val", {{"type", "TensorFile"}, {"path", "set.safetensors"}, {"inputs", "x"}, {"targets", "y"},
                                    {"limit", 25}}}}},
                 {"loss", {{"type", "cross_entropy"}}},
                 {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                 {"metrics", {{"val", {"loss", "accuracy", "top2_accuracy"}}}},
                 {"train", {{"steps", 1}}}};
  gt::Experiment experiment = gt::build_experiment(resolve(config), dir.string());
  CHECK(experiment.train.size() == 40);
  CHECK(experiment.val.size() == 25);
  CHECK(experiment.train.num_classes == 4);
  CHECK(experiment.config["model"]["in_features"] == 6);
  // The metrics against the same quantities computed directly on the model.
  auto values = gt::evaluate(experiment, experiment.val, {"loss", "accuracy", "top2_accuracy"});
  gd::NoGradGuard no_grad;
  gt::Batch batch;
  batch.inputs = inputs.narrow(0, 0, 25);
  gd::Tensor logits = experiment.model.forward(batch);
  gd::Tensor y = targets.narrow(0, 0, 25);
  const double accuracy = logits.argmax(1).eq(y).to(gd::kFloat64).mean().item<double>();
  gd::Tensor top2 = std::get<1>(gd::topk(logits, 2, 1));
  const double top2_accuracy = top2.eq(y.unsqueeze(1)).any(1).to(gd::kFloat64).mean().item<double>();
  CHECK(values["accuracy"] == doctest::Approx(accuracy).epsilon(1e-12));
  CHECK(values["top2_accuracy"] == doctest::Approx(top2_accuracy).epsilon(1e-12));
  CHECK(values["loss"] == doctest::Approx(experiment.loss(logits, y).item<double>()).epsilon(1e-6));
  // The confusion matrix: rows the true class, columns the predicted one.
  json confusion;
  gt::evaluate(experiment, experiment.val, {"confusion_matrix"}, &confusion);
  const gd::Tensor predicted = logits.argmax(1);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t p = 0; p < 4; ++p) {
      const int64_t count = (y.eq(t) & predicted.eq(p)).sum().item<int64_t>();
      CHECK(confusion["matrix"][t][p] == count);
    }
  // A missing tensor name is an error naming the key and the file.
  config["data"]["train"]["inputs"] = "z";
  CHECK_THROWS_WITH(gt::build_experiment(resolve(config), dir.string()),
                    ("data.train.inputs: " + (dir / "set.safetensors").string() + " has no tensor \"z\"").c_str());
}

TEST_CASE("experiment: accumulating 4 batches of 8 steps like one batch of 32") {
  // Plain SGD on a mean loss: the mean of four quarter-batch gradients is the
  // full batch's gradient, so the weights agree to rounding.
  auto run = [&](int64_t batch_size, int64_t accumulate, const std::string& name) {
    json config = {{"version", 1}, {"seed", 2}, {"dtype", "float64"},
                   {"model", {{"type", "Sequential"}, {"layers", {{{"type", "Linear"}, {"out_features", 8}},
                                                                  {{"type", "Tanh"}},
                                                                  {{"type", "Linear"}, {"out_features", 1}}}}}},
                   {"data", {{"train", {{"type", "SyntheticRegression"}, {"size", 64}, {"features", 3}}},
                             {"loader", {{"batch_size", batch_size}, {"shuffle", false}}}}},
                   {"loss", {{"type", "mse_loss"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                   {"train", {{"epochs", 3}, {"accumulate", accumulate}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    gt::TrainerOptions options;
    options.run_dir = scratch(name);
    options.progress = "none";
    gt::RunResult result = gt::train_experiment(experiment, options);
    CHECK(result.steps == 6);  // 2 optimizer steps an epoch either way
    return experiment.model.parameters();
  };
  auto whole = run(32, 1, "accumulate_whole");
  auto parts = run(8, 4, "accumulate_parts");
  REQUIRE(whole.size() == parts.size());
  for (size_t i = 0; i < whole.size(); ++i) CHECK(gd::allclose(whole[i], parts[i], 1e-12, 1e-14));
}

TEST_CASE("experiment: the first non-finite parameter is named by its state_dict key") {
  json config = {{"version", 1},
                 {"model", {{"type", "Sequential"}, {"layers", {{{"type", "Linear"}, {"out_features", 3}},
                                                                {{"type", "ReLU"}},
                                                                {{"type", "Linear"}, {"out_features", 2}}}}}},
                 {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 8}, {"features", 4}}}}},
                 {"loss", {{"type", "cross_entropy"}}},
                 {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                 {"train", {{"steps", 1}}}};
  gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
  CHECK(!gt::first_nonfinite_parameter(experiment.model.module()).has_value());
  gd::NoGradGuard no_grad;
  auto params = experiment.model.module().named_parameters();
  params["2.bias"].fill_(std::numeric_limits<double>::infinity());
  CHECK(gt::first_nonfinite_parameter(experiment.model.module()) == std::optional<std::string>("2.bias"));
  params["0.weight"][1][2].fill_(std::numeric_limits<double>::quiet_NaN());
  CHECK(gt::first_nonfinite_parameter(experiment.model.module()) == std::optional<std::string>("0.weight"));
}

TEST_CASE("experiment: every training sampler runs its epochs") {
  for (const char* sampler : {"sequential", "random", "random_with_replacement", "class_balanced"}) {
    CAPTURE(sampler);
    json config = {{"version", 1},
                   {"model", {{"type", "Linear"}, {"out_features", 3}}},
                   {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 30}, {"features", 2}, {"classes", 3}}},
                             {"loader", {{"batch_size", 8}, {"shuffle", false}, {"sampler", sampler}}}}},
                   {"loss", {{"type", "cross_entropy"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 0.1}}},
                   {"train", {{"epochs", 2}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    gt::TrainerOptions options;
    options.run_dir = scratch(std::string("sampler_") + sampler);
    options.progress = "none";
    CHECK(gt::train_experiment(experiment, options).steps == 8);  // 4 batches of 30 an epoch
  }
}

TEST_CASE("experiment: gradient clipping by norm and by value bounds one SGD step") {
  // SGD with lr 1 moves the parameters by exactly the (clipped) gradient.
  auto step_delta = [&](const json& clip) {
    json config = {{"version", 1}, {"seed", 4}, {"dtype", "float64"},
                   {"model", {{"type", "Linear"}, {"out_features", 3}}},
                   {"data", {{"train", {{"type", "SyntheticClassification"}, {"size", 16}, {"features", 5}, {"classes", 3}}},
                             {"loader", {{"batch_size", 16}}}}},
                   {"loss", {{"type", "cross_entropy"}}},
                   {"optimizer", {{"type", "SGD"}, {"lr", 1.0}}},
                   {"train", {{"steps", 1}, {"grad_clip", clip}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    std::vector<gd::Tensor> before;
    for (const gd::Tensor& p : experiment.model.parameters()) before.push_back(p.detach().clone());
    gt::TrainerOptions options;
    options.run_dir = scratch("clip");
    options.progress = "none";
    gt::train_experiment(experiment, options);
    std::vector<gd::Tensor> deltas;
    const auto after = experiment.model.parameters();
    for (size_t i = 0; i < after.size(); ++i) deltas.push_back((after[i].detach() - before[i]).reshape({-1}));
    return gd::cat(deltas);
  };
  // Unclipped, the gradient's norm is well above 0.01 (a fresh 3-class model).
  CHECK(step_delta(json{{"max_norm", 1e9}}).norm().item<double>() > 0.05);
  // clip_grad_norm_ scales by max_norm / (norm + 1e-6).
  CHECK(step_delta(json{{"max_norm", 0.01}}).norm().item<double>() == doctest::Approx(0.01).epsilon(1e-4));
  CHECK(step_delta(json{{"value", 0.001}}).abs().max().item<double>() <= 0.001 + 1e-15);
}

TEST_CASE("experiment: every layer builds with its sizes derived, and trains a step") {
  const fs::path dir = scratch("layers");
  gd::Generator generator(9);
  gd::save({{"images", gd::rand({24, 1, 8, 8}, generator)}, {"labels", gd::randint(0, 3, {24}, generator)},
            {"tokens", gd::randint(0, 10, {24, 5}, generator)}},
           (dir / "set.safetensors").string());
  const json images = {{"type", "TensorFile"}, {"path", "set.safetensors"}, {"inputs", "images"}, {"targets", "labels"}};
  json config = {{"version", 1},
                 {"model", {{"type", "Sequential"}, {"layers", json::array({
                     {{"type", "Conv2d"}, {"out_channels", 4}, {"kernel_size", 3}, {"padding", 1}},
                     {{"type", "BatchNorm2d"}}, {{"type", "ReLU"}},
                     {{"type", "AvgPool2d"}, {"kernel_size", 2}},
                     {{"type", "Conv2d"}, {"out_channels", 4}, {"kernel_size", {3, 3}}, {"padding", "same"},
                      {"padding_mode", "reflect"}},
                     {{"type", "MaxPool2d"}, {"kernel_size", 2}, {"stride", 1}},
                     {{"type", "AdaptiveAvgPool2d"}, {"output_size", 2}},
                     {{"type", "Flatten"}}, {{"type", "LayerNorm"}}, {{"type", "Dropout"}, {"p", 0.1}},
                     {{"type", "Sequential"}, {"layers", json::array({{{"type", "Linear"}, {"out_features", 8}},
                                                                     {{"type", "GELU"}, {"approximate", "tanh"}}})}},
                     {{"type", "LazyLinear"}, {"out_features", 8}}, {{"type", "SiLU"}}, {{"type", "ELU"}},
                     {{"type", "LeakyReLU"}}, {{"type", "Softplus"}}, {{"type", "BatchNorm1d"}},
                     {{"type", "PHMLinear"}, {"out_features", 4}, {"n", 2}}, {{"type", "Tanh"}},
                     {{"type", "Linear"}, {"out_features", 3}}, {{"type", "LogSoftmax"}, {"dim", 1}}})}}},
                 {"init", {{"weight", {{"type", "kaiming_uniform"}, {"nonlinearity", "relu"}}}, {"bias", {{"type", "zeros"}}}}},
                 {"data", {{"train", images}, {"loader", {{"batch_size", 8}}}}},
                 {"loss", {{"type", "nll_loss"}}},
                 {"optimizer", {{"type", "RMSprop"}, {"lr", 0.01}}},
                 {"train", {{"steps", 3}}},
                 {"output", {{"plots", false}, {"progress", "none"}}}};
  gt::Experiment experiment = gt::build_experiment(resolve(config), dir.string());
  const json& layers = experiment.config["model"]["layers"];
  CHECK(layers[0]["in_channels"] == 1);
  CHECK(layers[1]["num_features"] == 4);
  CHECK(layers[4]["in_channels"] == 4);
  CHECK(layers[8]["normalized_shape"] == json::array({16}));  // 4 channels x 2 x 2
  CHECK(layers[10]["layers"][0]["in_features"] == 16);
  CHECK(layers[16]["num_features"] == 8);
  CHECK(layers[17]["in_features"] == 8);
  CHECK(layers[19]["in_features"] == 4);
  // init: every bias zero (the Linear ones; BatchNorm's shift is zero anyway).
  for (const auto& item : experiment.model.module().named_parameters())
    if (item.key().find("bias") != std::string::npos) CHECK(item.value().abs().max().item<double>() == 0.0);
  gt::TrainerOptions options;
  options.run_dir = dir / "run";
  options.progress = "none";
  CHECK(gt::train_experiment(experiment, options).steps == 3);

  // Integer tokens through an Embedding.
  json tokens = config;
  tokens["data"]["train"]["inputs"] = "tokens";
  tokens["model"] = {{"type", "Sequential"}, {"layers", json::array({
      {{"type", "Embedding"}, {"num_embeddings", 10}, {"embedding_dim", 4}}, {{"type", "Flatten"}},
      {{"type", "Linear"}, {"out_features", 3}}, {{"type", "LogSoftmax"}, {"dim", 1}}})}};
  tokens.erase("init");
  gt::Experiment embedded = gt::build_experiment(resolve(tokens), dir.string());
  CHECK(embedded.config["model"]["layers"][2]["in_features"] == 20);  // 5 tokens x 4
  // Floats into an Embedding are an error naming the layer.
  json floats = tokens;
  floats["data"]["train"]["inputs"] = "images";
  CHECK_THROWS_WITH(gt::build_experiment(resolve(floats), dir.string()),
                    "model.layers[0]: an Embedding takes integer indices, but its input is float32");
}

TEST_CASE("experiment: recurrent layers read packed sequences") {
  for (const json& layer : {json{{"type", "GRU"}, {"hidden_size", 6}, {"bidirectional", true}},
                            json{{"type", "RNN"}, {"hidden_size", 5}, {"nonlinearity", "relu"}, {"num_layers", 2}},
                            json{{"type", "LSTM"}, {"hidden_size", 6}, {"proj_size", 3}}}) {
    CAPTURE(layer.dump());
    json config = {{"version", 1},
                   {"model", {{"type", "Sequential"}, {"layers", {layer, {{"type", "Linear"}, {"out_features", 2}}}}}},
                   {"data", {{"train", {{"type", "SyntheticSequences"}, {"size", 20}, {"max_length", 9}}},
                             {"loader", {{"batch_size", 8}}}}},
                   {"loss", {{"type", "cross_entropy"}}},
                   {"optimizer", {{"type", "Adam"}}},
                   {"train", {{"steps", 2}}},
                   {"output", {{"plots", false}, {"progress", "none"}}}};
    gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
    const int64_t directions = layer.value("bidirectional", false) ? 2 : 1;
    const int64_t state = layer.contains("proj_size") ? 3 : layer["hidden_size"].get<int64_t>();
    CHECK(experiment.config["model"]["layers"][0]["input_size"] == 1);
    CHECK(experiment.config["model"]["layers"][1]["in_features"] == directions * state);
    gt::TrainerOptions options;
    options.run_dir = scratch("recurrent");
    options.progress = "none";
    CHECK(gt::train_experiment(experiment, options).steps == 2);
  }
}

TEST_CASE("experiment: a PINN run redraws its random points every resample_every steps until resample_until") {
  const json config = json::parse(R"({
    "version": 1, "dtype": "float64",
    "model": {"type": "Sequential", "layers": [{"type": "Linear", "out_features": 4}, {"type": "Tanh"},
                                               {"type": "Linear", "out_features": 1}]},
    "pinn": {"domain": {"type": "Interval", "lower": 0, "upper": 1},
             "pde": {"type": "poisson", "source": "1", "points": 16},
             "conditions": [{"type": "dirichlet", "points": 2}],
             "resample_every": 2, "resample_until": 4},
    "optimizer": {"type": "Adam", "lr": 0.001},
    "train": {"steps": 8}})");
  gt::Experiment experiment = gt::build_experiment(resolve(config), ".");
  REQUIRE(experiment.pinn);
  const auto pde_points = [&] { return experiment.pinn->problem.term("pde").points().clone(); };
  gd::Tensor before = pde_points();
  std::vector<bool> redrawn;
  for (int64_t step = 1; step <= 8; ++step) {
    experiment.pinn->after_step(step, experiment.model.net());
    gd::Tensor now = pde_points();
    redrawn.push_back(!gd::equal(now, before));
    before = now;
  }
  // Redrawn at steps 2 and 4 only: every 2 steps, and none after step 4.
  CHECK(redrawn == std::vector<bool>{false, true, false, true, false, false, false, false});
}

// Golden messages for bad configs: each case breaks one thing in a valid
// config and expects the validator's exact message (with its JSON path).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/cuda.h"
#include "kernels/error.h"
#include "train/config/run_spec.h"
#include "train/config/validate.h"
#include "train/experiment.h"
#include "train/registry/registry.h"

namespace gt = gradiens::train;
using gt::json;

namespace {

// A small valid run: Gaussian blobs, an MLP, Adam.
json base_config() {
  return json::parse(R"({
    "version": 1, "name": "blobs", "seed": 3,
    "model": {"type": "Sequential", "layers": [
      {"type": "Linear", "out_features": 16}, {"type": "ReLU"}, {"type": "Linear", "out_features": 3}]},
    "data": {"train": {"type": "SyntheticClassification", "size": 96, "features": 4, "classes": 3, "seed": 1},
             "val": {"type": "SyntheticClassification", "size": 32, "features": 4, "classes": 3, "seed": 1},
             "loader": {"batch_size": 16}},
    "loss": {"type": "cross_entropy"},
    "optimizer": {"type": "Adam", "lr": 0.01},
    "metrics": {"val": ["loss", "accuracy"]},
    "train": {"epochs": 2}
  })");
}

std::vector<std::string> problems(const json& config) {
  gt::Diagnostics diagnostics;
  gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  return diagnostics.messages();
}

std::vector<std::string> problems_of_text(const std::string& text) {
  gt::Diagnostics diagnostics;
  json config = gt::parse_config_text(text, "run.json", diagnostics);
  if (!diagnostics.empty()) return diagnostics.messages();
  return problems(config);
}

// The message of a config that validates but cannot be built.
std::string build_error(const json& config) {
  gt::Diagnostics diagnostics;
  json resolved = gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  REQUIRE_MESSAGE(diagnostics.empty(), diagnostics.str());
  try {
    gt::build_experiment(resolved, ".");
  } catch (const gradiens::Error& e) {
    return e.what();
  }
  return "(built without an error)";
}

struct Case {
  const char* name;
  std::function<void(json&)> mutate;
  std::string expected;
};

}  // namespace

TEST_CASE("config: the base config is valid and builds") {
  CHECK(problems(base_config()).empty());
  CHECK(build_error(base_config()) == "(built without an error)");
}

TEST_CASE("config: golden messages for bad configs") {
  const std::vector<Case> cases = {
      {"unknown key with a close name", [](json& c) { c["model"]["layers"][2]["out_feature"] = 3; c["model"]["layers"][2].erase("out_features"); },
       "model.layers[2].out_feature: unknown key; did you mean \"out_features\"?"},
      {"unknown key far from every name", [](json& c) { c["train"]["colour"] = "red"; },
       "train.colour: unknown key (train takes: epochs, steps, phases, grad_clip, accumulate, eval_every, log_every, "
       "early_stopping, stop_on_nonfinite, checkpoint)"},
      {"unknown top-level key", [](json& c) { c["optimiser"] = c["optimizer"]; },
       "optimiser: unknown key; did you mean \"optimizer\"?"},
      {"wrong type: string for a number", [](json& c) { c["optimizer"]["lr"] = "0.1"; },
       "optimizer.lr: expected a number >= 0, got a string \"0.1\""},
      {"wrong type: number for a bool", [](json& c) { c["model"]["layers"][0]["bias"] = 1; },
       "model.layers[0].bias: expected true or false, got the integer 1"},
      {"wrong type: fractional integer", [](json& c) { c["train"]["epochs"] = 2.5; },
       "train.epochs: expected an integer >= 1, got the number 2.5"},
      {"out of range", [](json& c) { c["optimizer"]["lr"] = -1; }, "optimizer.lr: -1 is out of range (expected a number >= 0)"},
      {"out of range integer", [](json& c) { c["data"]["loader"]["batch_size"] = 0; },
       "data.loader.batch_size: 0 is out of range (expected an integer >= 1)"},
      {"missing type", [](json& c) { c["model"]["layers"][1].erase("type"); },
       "model.layers[1]: missing \"type\" (a layer: one of AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, "
       "Dropout, ELU, Embedding, Flatten, FourierFeatures, GELU, GRU, Identity, LSTM, LayerNorm, LazyLinear, LeakyReLU, Linear, "
       "LogSoftmax, "
       "MaxPool2d, PHMLinear, PeriodicEmbedding, RNN, ReLU, Sequential, SiLU, Sigmoid, Softmax, Softplus, Tanh)"},
      {"unknown type with a close name", [](json& c) { c["model"]["layers"][0]["type"] = "Linaer"; },
       "model.layers[0].type: unknown layer \"Linaer\"; did you mean \"Linear\"?"},
      {"unknown optimizer", [](json& c) { c["optimizer"]["type"] = "Adamm"; },
       "optimizer.type: unknown optimizer \"Adamm\"; did you mean \"Adam\"?"},
      {"unknown optimizer with no close name", [](json& c) { c["optimizer"]["type"] = "Adamax"; },
       "optimizer.type: unknown optimizer \"Adamax\" (one of Adagrad, Adam, AdamW, LBFGS, LevenbergMarquardt, RMSprop, SGD)"},
      {"unknown dataset far from every name", [](json& c) { c["data"]["train"]["type"] = "ImageNet"; },
       "data.train.type: unknown dataset \"ImageNet\" (one of CSVDataset, FashionMNIST, MNIST, SyntheticClassification, "
       "SyntheticRegression, SyntheticSequences, TensorFile)"},
      {"type is not a string", [](json& c) { c["loss"]["type"] = 3; },
       "loss.type: expected the name of a loss, got the integer 3"},
      {"missing required key", [](json& c) { c["model"]["layers"][2].erase("out_features"); },
       "model.layers[2].out_features: missing (required: output features)"},
      {"missing required section", [](json& c) { c.erase("loss"); }, "loss: missing (required unless pinn is given)"},
      {"bad enum value", [](json& c) { c["dtype"] = "float16"; },
       "dtype: \"float16\" is not one of \"float32\", \"float64\""},
      {"bad enum value with a close name", [](json& c) { c["output"] = {{"progress", "bars"}}; },
       "output.progress: \"bars\" is not one of \"auto\", \"bar\", \"lines\", \"none\"; did you mean \"bar\"?"},
      {"version", [](json& c) { c["version"] = 2; }, "version: 2 is out of range (expected an integer >= 1 and <= 1)"},
      {"epochs and steps", [](json& c) { c["train"]["steps"] = 10; }, "train: \"epochs\" and \"steps\" cannot both be given"},
      {"no length", [](json& c) { c["train"].erase("epochs"); }, "train: give the length of training: \"epochs\" or \"steps\""},
      {"phases with a top-level optimizer", [](json& c) {
         c["train"].erase("epochs");
         c["train"]["phases"] = json::array({{{"optimizer", {{"type", "SGD"}, {"lr", 0.1}}}, {"steps", 5}}});
       }, "optimizer: cannot be given with train.phases (each phase has its own)"},
      {"phase without a length", [](json& c) {
         c.erase("optimizer");
         c["train"].erase("epochs");
         c["train"]["phases"] = json::array({{{"optimizer", {{"type", "Adam"}}}}});
       }, "train.phases[0]: give the length of training: \"epochs\" or \"steps\""},
      {"no optimizer", [](json& c) { c.erase("optimizer"); }, "optimizer: missing (required unless train.phases is given)"},
      {"clipping with both norm and value", [](json& c) { c["train"]["grad_clip"] = {{"max_norm", 1.0}, {"value", 0.5}}; },
       "train.grad_clip: give exactly one of \"max_norm\" and \"value\""},
      {"sampler with shuffle", [](json& c) { c["data"]["loader"]["sampler"] = "class_balanced"; },
       "data.loader: sampler \"class_balanced\" and shuffle cannot both be given (PyTorch: sampler option is mutually "
       "exclusive with shuffle); set \"shuffle\": false"},
      {"unknown metric", [](json& c) { c["metrics"]["val"] = json::array({"acuracy"}); },
       "metrics.val[0]: unknown metric \"acuracy\"; did you mean \"accuracy\"?"},
      {"training metric under val", [](json& c) { c["metrics"]["val"] = json::array({"lr"}); },
       "metrics.val[0]: \"lr\" is a training metric; only train lists it"},
      {"list where an object belongs", [](json& c) { c["data"]["loader"] = json::array(); },
       "data.loader: expected an object, got a list []"},
      {"object where a list belongs", [](json& c) { c["model"]["layers"] = json::object(); },
       "model.layers: expected a list of at least 1 values, each an object with a \"type\" (a layer), got an object"},
      {"empty layer list", [](json& c) { c["model"]["layers"] = json::array(); },
       "model.layers: expected a list of at least 1 values, each an object with a \"type\" (a layer), got a list of 0"},
      {"kernel size of three numbers", [](json& c) {
         c["model"]["layers"][0] = {{"type", "Conv2d"}, {"out_channels", 4}, {"kernel_size", {3, 3, 3}}};
       }, "model.layers[0].kernel_size: expected a list of 2 values, each an integer >= 1, got a list of 3"},
      {"null where not allowed", [](json& c) { c["seed"] = nullptr; }, "seed: expected an integer >= 0, got null"},
      {"dropout probability", [](json& c) { c["model"]["layers"][1] = {{"type", "Dropout"}, {"p", 1.5}}; },
       "model.layers[1].p: 1.5 is out of range (expected a number >= 0 and <= 1)"},
      {"min_length above max_length", [](json& c) {
         c["data"]["train"] = {{"type", "SyntheticSequences"}, {"min_length", 9}, {"max_length", 4}};
       }, "data.train: min_length (9) is greater than max_length (4)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    json config = base_config();
    c.mutate(config);
    std::vector<std::string> messages = problems(config);
    std::string all;
    for (const auto& m : messages) all += m + "\n";
    CAPTURE(all);
    CHECK(std::find(messages.begin(), messages.end(), c.expected) != messages.end());
  }
}

TEST_CASE("config: every problem of a file is reported at once") {
  json config = base_config();
  config["optimizer"]["lr"] = "fast";
  config["train"]["epoch"] = 3;
  config["model"]["layers"][0]["type"] = "Dense";
  // The unknown key hides train's own rules (no length given) until it is fixed.
  CHECK(problems(config) == std::vector<std::string>{
                                "model.layers[0].type: unknown layer \"Dense\" (one of AdaptiveAvgPool2d, AvgPool2d, "
                                "BatchNorm1d, BatchNorm2d, Conv2d, Dropout, ELU, Embedding, Flatten, FourierFeatures, GELU, GRU, Identity, "
                                "LSTM, LayerNorm, LazyLinear, LeakyReLU, Linear, LogSoftmax, MaxPool2d, PHMLinear, PeriodicEmbedding, RNN, "
                                "ReLU, Sequential, SiLU, Sigmoid, Softmax, Softplus, Tanh)",
                                "optimizer.lr: expected a number >= 0, got a string \"fast\"",
                                "train.epoch: unknown key; did you mean \"epochs\"?"});
}

TEST_CASE("config: parse errors and duplicate keys") {
  CHECK(problems_of_text(R"({"version": 1, "seed": 1, "seed": 2})") ==
        std::vector<std::string>{"seed: duplicate key (a JSON object may name a key only once)"});
  CHECK(problems_of_text(R"({"version": 1, "train": {"epochs": 1, "epochs": 2}})").at(0) ==
        "train.epochs: duplicate key (a JSON object may name a key only once)");
  CHECK(problems_of_text(R"({"model": {"type": "Sequential", "layers": [{"type": "ReLU", "type": "Tanh"}]}})").at(0) ==
        "model.layers[0].type: duplicate key (a JSON object may name a key only once)");
  const auto syntax = problems_of_text("{\"version\": 1,\n  \"seed\": }");
  REQUIRE(syntax.size() == 1);
  CHECK(syntax[0].rfind("run.json: not valid JSON: parse error at line 2, column 11", 0) == 0);
}

TEST_CASE("config: --set and --unset") {
  const auto& registry = gt::builtin().specs;
  auto set = [&](json config, const std::string& assignment) {
    gt::Diagnostics diagnostics;
    gt::apply_set(config, assignment, gt::run_spec(), registry, diagnostics);
    return std::pair{config, diagnostics.messages()};
  };
  auto [lr, lr_problems] = set(base_config(), "optimizer.lr=0.5");
  CHECK(lr_problems.empty());
  CHECK(lr["optimizer"]["lr"] == 0.5);
  auto [layer, layer_problems] = set(base_config(), "model.layers.2.out_features=7");
  CHECK(layer_problems.empty());
  CHECK(layer["model"]["layers"][2]["out_features"] == 7);
  auto [bracket, bracket_problems] = set(base_config(), "model.layers[0].bias=false");
  CHECK(bracket_problems.empty());
  CHECK(bracket["model"]["layers"][0]["bias"] == false);
  auto [name, name_problems] = set(base_config(), "name=123");  // a string key keeps the text
  CHECK(name["name"] == "123");
  // An absent section is created; an absent typed object is not (its "type" is unknown).
  auto [section, section_problems] = set(base_config(), "output.plots=false");
  CHECK(section_problems.empty());
  CHECK(section["output"] == json{{"plots", false}});
  auto [early, early_problems] = set(base_config(), "train.early_stopping.monitor=val/loss");
  CHECK(early["train"]["early_stopping"] == json{{"monitor", "val/loss"}});
  auto [typed, typed_problems] = set(base_config(), "scheduler.gamma=0.5");
  CHECK(typed_problems ==
        std::vector<std::string>{"--set: scheduler: not in the config; set it whole (--set scheduler='{...}')"});
  auto [typo, typo_problems] = set(base_config(), "optimizer.lrr=0.1");
  CHECK(typo_problems == std::vector<std::string>{"--set: optimizer.lrr: unknown key; did you mean \"lr\"?"});
  auto [index, index_problems] = set(base_config(), "model.layers.9.out_features=2");
  CHECK(index_problems == std::vector<std::string>{"--set: model.layers[9]: no such element (the list has 3)"});
  auto [no_equals, no_equals_problems] = set(base_config(), "optimizer.lr");
  CHECK(no_equals_problems ==
        std::vector<std::string>{"--set optimizer.lr: expected KEY=VALUE (for example --set optimizer.lr=0.01)"});
  // A value of the wrong type passes --set and is caught by the validator at its path.
  auto [bad, bad_problems] = set(base_config(), "optimizer.lr=abc");
  CHECK(bad_problems.empty());
  CHECK(problems(bad) == std::vector<std::string>{"optimizer.lr: expected a number >= 0, got a string \"abc\""});

  json config = base_config();
  gt::Diagnostics diagnostics;
  gt::apply_unset(config, "optimizer.lr", diagnostics);
  CHECK(!config["optimizer"].contains("lr"));
  gt::apply_unset(config, "optimizer.momentum", diagnostics);
  CHECK(diagnostics.messages() == std::vector<std::string>{"--unset optimizer.momentum: not in the config"});
}

TEST_CASE("config: did-you-mean only for close names") {
  CHECK(gt::suggest("out_feature", {"in_features", "out_features", "bias"}) == std::optional<std::string>("out_features"));
  CHECK(gt::suggest("Linaer", {"Linear", "LazyLinear"}) == std::optional<std::string>("Linear"));
  CHECK(gt::suggest("relu", {"ReLU", "Tanh"}) == std::optional<std::string>("ReLU"));
  CHECK(!gt::suggest("colour", {"epochs", "steps", "phases"}).has_value());
  CHECK(!gt::suggest("float16", {"float32", "float64"}).has_value());  // a different thing, not a typo
  CHECK(gt::suggest("val/acc", {"val/loss", "val/accuracy"}) == std::optional<std::string>("val/accuracy"));
  CHECK(!gt::suggest("val/", {"val/loss", "val/accuracy"}).has_value());  // two names begin with it
}

TEST_CASE("config: build errors name both sides of a derived size") {
  json config = base_config();
  config["model"]["layers"][0]["in_features"] = 5;
  CHECK(build_error(config) == "model.layers[0].in_features: in_features is 5, but the input's last dimension is 4");
  config = base_config();
  config["model"]["layers"][2]["out_features"] = 4;
  CHECK(build_error(config) ==
        "model: the last layer gives 4 outputs, but data.train has 3 classes (cross_entropy needs one output per class)");
  config = base_config();
  config["train"]["early_stopping"] = {{"monitor", "val/acc"}};
  CHECK(build_error(config) == "train.early_stopping.monitor: \"val/acc\" is not a logged metric; did you mean "
                               "\"val/accuracy\"? (logged: train/loss, train/lr, val/loss, val/accuracy)");
  config = base_config();
  config["model"]["layers"][0] = {{"type", "Conv2d"}, {"out_channels", 4}, {"kernel_size", 3}};
  CHECK(build_error(config) == "model.layers[0]: a Conv2d needs [channels, height, width] per sample, but its input has "
                               "1 dimension");
  config = base_config();
  config["model"]["layers"][0] = {{"type", "LSTM"}, {"hidden_size", 4}};
  CHECK(build_error(config) == "model.layers[0]: a LSTM layer takes the batch of sequences, so it must come first and "
                               "the data must be sequences");
  config = base_config();
  config["device"] = "cuda";
  if (!gradiens::cuda::is_available())
    CHECK(build_error(config) == "device: \"cuda\" needs a CUDA device, and none is available on this machine; use \"cpu\"");
}

TEST_CASE("config: resolving fills defaults, normalizes numbers and derives sizes") {
  gt::Diagnostics diagnostics;
  json config = base_config();
  config["optimizer"]["lr"] = 1;  // an integer for a number
  json resolved = gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics);
  REQUIRE(diagnostics.empty());
  CHECK(resolved["optimizer"]["lr"].is_number_float());
  CHECK(resolved["optimizer"]["betas"] == json::array({0.9, 0.999}));  // PyTorch's defaults
  CHECK(resolved["data"]["loader"]["shuffle"] == true);
  CHECK(resolved["train"]["checkpoint"]["keep_last"] == 3);
  CHECK(!resolved["model"]["layers"][0].contains("in_features"));
  gt::Experiment experiment = gt::build_experiment(resolved, ".");
  CHECK(experiment.config["model"]["layers"][0]["in_features"] == 4);
  CHECK(experiment.config["model"]["layers"][2]["in_features"] == 16);
  CHECK(experiment.batches_per_epoch == 6);  // 96 / 16
  CHECK(experiment.total_steps() == 12);
}

TEST_CASE("config: the fuzzer's regression inputs end in diagnostics, never a crash") {
  // Each file: a --set assignment on the first line, then a config (fuzz/fuzz_config.cpp).
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(GRADIENS_SOURCE_DIR) /
                                                               "tests/train/config_corpus")) {
    ++files;
    CAPTURE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t newline = input.find('\n');
    gt::Diagnostics diagnostics;
    json config;
    CHECK_NOTHROW(config = gt::parse_config_text(input.substr(newline + 1), "fuzz.json", diagnostics));
    if (diagnostics.empty() && config.is_object()) {
      CHECK_NOTHROW(gt::apply_set(config, input.substr(0, newline), gt::run_spec(), gt::builtin().specs, diagnostics));
      CHECK_NOTHROW(gt::resolve_object(config, gt::run_spec(), "", gt::builtin().specs, diagnostics));
    }
    CHECK(!diagnostics.empty());
  }
  CHECK(files >= 1);
  // A --set value that is not JSON and not valid UTF-8 either.
  json utf8 = base_config();
  gt::Diagnostics set_diagnostics;
  gt::apply_set(utf8, "name=caf\xe9", gt::run_spec(), gt::builtin().specs, set_diagnostics);
  CHECK(set_diagnostics.messages() == std::vector<std::string>{"--set name: the value is not valid UTF-8 text"});
  // A --set number beyond a double's range is taken as text, which the validator rejects.
  json huge = base_config();
  gt::apply_set(huge, "optimizer.lr=1e999", gt::run_spec(), gt::builtin().specs, set_diagnostics);
  CHECK(problems(huge) == std::vector<std::string>{"optimizer.lr: expected a number >= 0, got a string \"1e999\""});
  // A number beyond double's range is a parse error with its position, as a syntax error is.
  const auto overflow = problems_of_text("{\"seed\": 1e999}");
  REQUIRE(overflow.size() == 1);
  CHECK(overflow[0] == "run.json: not valid JSON: number overflow parsing '1e999'");
  // An integral number beyond int64 is out of range, not converted.
  json config = base_config();
  config["seed"] = 1e300;
  CHECK(problems(config) == std::vector<std::string>{"seed: 1e+300 is out of range (expected an integer >= 0)"});
}

TEST_CASE("config: accuracy metrics and their k") {
  CHECK(gt::accuracy_top_k("accuracy") == 1);
  CHECK(gt::accuracy_top_k("top5_accuracy") == 5);
  CHECK(gt::accuracy_top_k("top12_accuracy") == 12);
  for (const char* other : {"loss", "top0_accuracy", "top05_accuracy", "top_accuracy", "topx_accuracy", "top5accuracy",
                            "top5_accuracyy", "top9999999999_accuracy"})
    CHECK(gt::accuracy_top_k(other) == 0);
}

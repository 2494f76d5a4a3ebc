// Whole PINN runs of the built gradiens-train: an inverse problem with
// adaptive weights, resampling and refinement, killed in its Adam phase, at
// the switch to L-BFGS and inside L-BFGS, resumes bit for bit; the field
// plots; and the errors of bad "pinn" sections.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/train/run_test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gradiens::train::testing;

namespace {

const std::string kTrainer = GRADIENS_TRAIN_BINARY;
const fs::path kWork = fs::path(GRADIENS_TRAIN_TEST_DIR) / "pinn";

fs::path write_config(const std::string& name, const std::string& text) {
  return gradiens::train::testing::write_config(kWork, name, text);
}

// The heat equation with an unknown diffusivity kappa (true value 0.1),
// observed with 1% noise: causal training in 4 time slices, 8 Adam steps with
// gradient-norm weighting every 2 steps, the boundary's random points redrawn every 3 (the others come from
// Sobol sequences and stay) and RAR every 4, then 4 L-BFGS steps of 3
// iterations; checkpoints every 2 steps.
const char* kInverseConfig = R"x({
  "version": 1, "name": "inverse", "seed": 3, "dtype": "float64",
  "model": {"type": "Sequential", "layers": [
    {"type": "Linear", "out_features": 8}, {"type": "Tanh"}, {"type": "Linear", "out_features": 8}, {"type": "Tanh"},
    {"type": "Linear", "out_features": 1}]},
  "pinn": {
    "domain": {"type": "Interval", "lower": 0, "upper": 1}, "time": [0, 1],
    "parameters": [{"name": "kappa", "initial": 0.5}],
    "pde": {"type": "heat", "diffusivity": "kappa", "points": 64, "sampler": "Sobol"},
    "conditions": [
      {"type": "dirichlet", "points": 16},
      {"type": "initial", "value": "sin(pi*x)", "points": 16, "sampler": "Sobol"},
      {"type": "data", "name": "observations", "points": 32, "noise": 0.01}],
    "reference": {"type": "expression", "u": "exp(-0.1*pi^2*t)*sin(pi*x)"},
    "evaluation": {"grid": [11, 6]},
    "weighting": {"method": "grad_norm", "every": 2},
    "causal": {"chunks": 4},
    "resample_every": 3,
    "refinement": {"method": "RAR", "every": 4, "candidates": 200, "add": 4}
  },
  "metrics": {"train": ["loss", "lr", "grad_norm"], "val": ["rel_l2", "max_abs_error", "loss"]},
  "train": {
    "phases": [
      {"optimizer": {"type": "Adam", "lr": 0.01}, "steps": 8},
      {"optimizer": {"type": "LBFGS", "lr": 1.0, "max_iter": 3, "line_search_fn": "strong_wolfe"}, "steps": 4}],
    "log_every": 1,
    "eval_every": {"every": 2, "unit": "steps"},
    "checkpoint": {"every": 2, "unit": "steps", "keep_last": 2}
  },
  "output": {"plots": false, "progress": "lines"}
})x";

// The same run with Levenberg-Marquardt in place of L-BFGS.
std::string levenberg_marquardt_config() {
  std::string text = kInverseConfig;
  const std::string from = R"x({"type": "LBFGS", "lr": 1.0, "max_iter": 3, "line_search_fn": "strong_wolfe"})x";
  text.replace(text.find(from), from.size(), R"x({"type": "LevenbergMarquardt"})x");
  return text;
}

}  // namespace

TEST_CASE("pinn runs: killed in Adam, at the switch to L-BFGS or inside L-BFGS, a resumed run ends bit for bit") {
  const fs::path config = write_config("inverse.json", kInverseConfig);
  const fs::path reference_out = kWork / "inverse_reference";
  fs::remove_all(reference_out);
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --out " + reference_out.string() + " > " +
                (kWork / "reference_log").string()) == 0);
  const fs::path reference = only_run_dir(reference_out);
  const std::vector<std::string> reference_lines = metric_lines(reference);
  REQUIRE(reference_lines.size() == 12 + 6);  // a train line per step, a val line every 2 steps
  const json first = json::parse(reference_lines.front()), last = json::parse(reference_lines[reference_lines.size() - 2]);
  for (const char* key : {"train/loss", "train/loss_pde", "train/loss_dirichlet", "train/loss_initial",
                          "train/loss_observations", "train/weight_pde", "train/param_kappa", "train/grad_norm"}) {
    CAPTURE(key);
    CHECK(first.contains(key));
  }
  CHECK(first["train/param_kappa"].get<double>() != 0.5);  // trained from the first step
  CHECK(last.contains("train/loss"));
  // RAR at steps 4 and 8 added 4 points each, reported in the log.
  const std::string log = slurp(kWork / "reference_log");
  CHECK(log.find("step 4: RAR added 4 points; pde has 68") != std::string::npos);
  CHECK(log.find("step 8: RAR added 4 points; pde has 72") != std::string::npos);

  for (const std::string fault : {"kill_at_step:3", "kill_at_step:8", "kill_at_step:9", "kill_at_step:11"}) {
    CAPTURE(fault);
    const fs::path out = kWork / ("inverse_" + fault.substr(fault.find(':') + 1));
    fs::remove_all(out);
    CHECK(shell("GRADIENS_TRAIN_FAULT=" + fault + " " + kTrainer + " --config " + config.string() + " --out " +
                out.string() + " > /dev/null 2>&1") == 128 + 9);
    const fs::path run = only_run_dir(out);
    CHECK(metric_lines(run).size() < reference_lines.size());
    CHECK(shell(kTrainer + " --resume " + run.string() + " > /dev/null") == 0);
    CHECK(metric_lines(run) == reference_lines);
    CHECK(latest_checkpoint_file(run, "model.safetensors") == latest_checkpoint_file(reference, "model.safetensors"));
    CHECK(latest_checkpoint_file(run, "pinn.safetensors") == latest_checkpoint_file(reference, "pinn.safetensors"));
  }
}

TEST_CASE("pinn runs: Levenberg-Marquardt lowers the loss, and a run killed inside it resumes bit for bit") {
  const fs::path config = write_config("inverse_lm.json", levenberg_marquardt_config());
  const fs::path reference_out = kWork / "inverse_lm_reference";
  fs::remove_all(reference_out);
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --out " + reference_out.string() + " > /dev/null") == 0);
  const fs::path reference = only_run_dir(reference_out);
  const std::vector<std::string> reference_lines = metric_lines(reference);
  REQUIRE(reference_lines.size() == 12 + 6);
  // Train lines of steps 9 and 12: the four Levenberg-Marquardt steps lower the loss.
  const json at9 = json::parse(reference_lines[9 + 4 - 1]), at12 = json::parse(reference_lines[reference_lines.size() - 2]);
  REQUIRE(at9["step"] == 9);
  REQUIRE(at12["step"] == 12);
  CHECK(at12["train/loss"].get<double>() < at9["train/loss"].get<double>());
  CHECK(at12.contains("train/loss_observations"));
  for (const std::string fault : {"kill_at_step:10", "kill_at_step:11"}) {
    CAPTURE(fault);
    const fs::path out = kWork / ("inverse_lm_" + fault.substr(fault.find(':') + 1));
    fs::remove_all(out);
    CHECK(shell("GRADIENS_TRAIN_FAULT=" + fault + " " + kTrainer + " --config " + config.string() + " --out " +
                out.string() + " > /dev/null 2>&1") == 128 + 9);
    const fs::path run = only_run_dir(out);
    CHECK(shell(kTrainer + " --resume " + run.string() + " > /dev/null") == 0);
    CHECK(metric_lines(run) == reference_lines);
    CHECK(latest_checkpoint_file(run, "model.safetensors") == latest_checkpoint_file(reference, "model.safetensors"));
    CHECK(latest_checkpoint_file(run, "optimizer.json") == latest_checkpoint_file(reference, "optimizer.json"));
  }
}

TEST_CASE("pinn runs: plots of u, the reference and the error on the evaluation grid") {
  if (shell("command -v gnuplot > /dev/null") != 0) {
    MESSAGE("gnuplot is not installed; the field plots are not drawn");
    return;
  }
  const fs::path config = write_config("plots.json", with_plots(kInverseConfig));
  const fs::path out = kWork / "plots_run";
  const fs::path run = run_fresh(kTrainer, config, out);
  for (const char* file : {"plots/field_u.png", "plots/field_reference.svg", "plots/field_error.png", "plots/loss.png",
                           "plots/val_rel_l2.png", "plots/train_param_kappa.png"}) {
    CAPTURE(file);
    REQUIRE(fs::exists(run / file));
    CHECK(fs::file_size(run / file) > 0);
  }
  const json summary = json::parse(slurp(run / "summary.json"));
  CHECK(summary["final_metrics"].contains("val/rel_l2"));
}

TEST_CASE("pinn runs: bad pinn sections are errors naming the key") {
  struct Case {
    std::string from, to, message;
    std::string base = kInverseConfig;
  };
  const std::vector<Case> cases = {
      {R"x("type": "heat")x", R"x("type": "heet")x", "pinn.pde.type: unknown pde \"heet\"; did you mean \"heat\"?"},
      {R"x("time": [0, 1],)x", "", "pinn.pde: heat needs a time coordinate (pinn.time)"},
      {R"x("sin(pi*x)")x", R"x("sin(pi*q)")x", "pinn.conditions[1].value: expression \"sin(pi*q)\""},
      {R"x("diffusivity": "kappa")x", R"x("diffusivity": "kapa")x", "pinn.pde.diffusivity: \"kapa\" is neither a number"},
      {R"x("reference": {"type": "expression", "u": "exp(-0.1*pi^2*t)*sin(pi*x)"},)x", "",
       "pinn.conditions[2]: observations are drawn from the reference solution; give pinn.reference"},
      {R"x({"type": "dirichlet", "points": 16},)x", R"x({"type": "dirichlet", "name": "initial", "points": 16},)x",
       "pinn.conditions[1]: a term named initial exists already"},
      {R"x("val": ["rel_l2", "max_abs_error", "loss"])x", R"x("val": ["accuracy"])x",
       "metrics.val[0]: a PINN run scores loss, rel_l2 and max_abs_error against its reference, not accuracy"},
      {R"x("evaluation": {"grid": [11, 6]},)x", R"x("evaluation": {"grid": [11]},)x",
       "pinn.evaluation.grid: 1 counts for 2 coordinates"},
      {R"x("version": 1,)x", R"x("version": 1, "loss": {"type": "mse_loss"},)x",
       "loss: cannot be given with pinn"},
      {R"x("layers": [)x", R"x("layers": [{"type": "PeriodicEmbedding", "periods": [2]},)x",
       "model.layers[0].periods: periods has 1 values, but the input has 2 features"},
      {R"x("layers": [)x", R"x("layers": [{"type": "FourierFeatures", "features": 4, "sigma": [1, 2, 3]},)x",
       "model.layers[0].sigma: sigma has 3 values, but the input has 2 features"},
      {R"x("causal": {"chunks": 4},)x", R"x("causal": {"chunks": 4}, "output_transform": "sin(pi*x) + t*z",)x",
       "pinn.output_transform: expression \"sin(pi*x) + t*z\": unknown name z"},
      {R"x("causal": {"chunks": 4},)x", R"x("causal": {"chunks": 4}, "output_transform": ["net1", "t*net2"],)x",
       "pinn.output_transform: 2 expressions for a network with 1 outputs"},
      {R"x("causal": {"chunks": 4},)x",
       R"x("causal": {"chunks": 4}, "engine": "nested",)x", "train.phases[1].optimizer: LevenbergMarquardt needs "
       "per-sample Jacobians, but the nested engine is chosen, and per-sample Jacobians need Taylor mode", levenberg_marquardt_config()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.to);
    std::string text = c.base;
    const size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const fs::path config = write_config("bad.json", text);
    const fs::path stderr_file = kWork / "bad_stderr";
    CHECK(shell(kTrainer + " --config " + config.string() + " --validate > /dev/null 2> " + stderr_file.string()) == 2);
    const std::string message = slurp(stderr_file);
    CHECK_MESSAGE(message.find(c.message) != std::string::npos, message);
  }
}

TEST_CASE("pinn runs: a hard constraint shapes both training and the evaluated solution") {
  // u = the exact solution + 1e-9 x (1 - x) t y: whatever the network does,
  // the evaluated error stays near 1e-9, which only holds if the evaluation
  // goes through the transform as training does.
  std::string text = kInverseConfig;
  const std::string from = R"x("causal": {"chunks": 4},)x";
  text.replace(text.find(from), from.size(), R"x("causal": {"chunks": 4},
    "output_transform": "sin(pi*x)*exp(-0.1*pi^2*t) + 1e-9*x*(1-x)*t*net",)x");
  const fs::path config = write_config("hard.json", text);
  const fs::path run = run_fresh(kTrainer, config, kWork / "hard_run");
  int evaluations = 0;
  for (const std::string& line : metric_lines(run)) {
    const json metrics = json::parse(line);
    if (!metrics.contains("val/rel_l2")) continue;
    ++evaluations;
    CHECK(metrics["val/rel_l2"].get<double>() < 1e-8);
    CHECK(metrics["val/rel_l2"].get<double>() > 0);
  }
  CHECK(evaluations == 6);
}

TEST_CASE("pinn runs: each PDE's residual vanishes on its exact solution, set as a hard constraint") {
  // The transform ignores the network (0*net), so the losses --validate prints
  // are those of the exact solution: zero up to rounding for every term, and
  // far from zero when a coefficient is wrong. Both engines' chain rules through the transform are exercised.
  struct Case {
    std::string domain, time, pde, conditions, exact, wrong;  // wrong: a perturbation the PDE does not admit
  };
  const std::vector<Case> cases = {
      {R"x({"type": "Interval", "lower": 0, "upper": 1})x", "",
       R"x({"type": "beam", "rigidity": 2, "load": "-16*pi^4*cos(2*pi*x)", "points": 64})x",
       R"x([{"type": "dirichlet", "points": 8}, {"type": "neumann", "points": 8}])x", "sin(pi*x)^2", "*1.01"},
      {R"x({"type": "Interval", "lower": 0, "upper": 1})x", R"x("time": [0, 1],)x",
       R"x({"type": "wave", "speed": 2, "points": 64})x",
       R"x([{"type": "dirichlet", "points": 8}, {"type": "initial", "value": "sin(pi*x)+sin(4*pi*x)/2", "points": 8},
           {"type": "initial", "name": "velocity", "time_derivative": 1, "points": 8}])x",
       "sin(pi*x)*cos(2*pi*t)+sin(4*pi*x)*cos(8*pi*t)/2", " + 0.01*x^2*t^2"},
      {R"x({"type": "Rectangle", "lower": [0, 0], "upper": [1, 1]})x", R"x("time": [0, 5],)x",
       R"x({"type": "heat", "diffusivity": ["1/(500*pi)^2", "1/pi^2"], "points": 64})x",
       R"x([{"type": "dirichlet", "points": 8}, {"type": "initial", "value": "sin(20*pi*x)*sin(pi*y)", "points": 8}])x",
       "sin(20*pi*x)*sin(pi*y)*exp(-1.0016*t)", " + 0.01*t"},
      {R"x({"type": "Box", "lower": [0, 0, 0], "upper": [1, 1, 1]})x", "",
       R"x({"type": "poisson", "source": "pi^2/4*(sin(pi*x/2)+sin(pi*y/2)+sin(pi*z/2))", "points": 64})x",
       R"x([{"type": "dirichlet", "value": "sin(pi*x/2)+sin(pi*y/2)+sin(pi*z/2)", "points": 8}])x",
       "sin(pi*x/2)+sin(pi*y/2)+sin(pi*z/2)", "*1.01"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pde);
    const std::string text = R"x({"version": 1, "name": "exact", "dtype": "float64",
      "model": {"type": "Sequential", "layers": [{"type": "Linear", "out_features": 1}]},
      "pinn": {"domain": )x" + c.domain + ", " + c.time + R"x( "pde": )x" + c.pde + R"x(, "conditions": )x" +
                             c.conditions + R"x(, "output_transform": ")x" + c.exact + R"x( + 0*net"},
      "train": {"phases": [{"optimizer": {"type": "Adam"}, "steps": 1}]}})x";
    for (const bool wrong : {false, true}) {
      std::string config_text = text;
      if (wrong) {
        const std::string from = R"x( + 0*net")x";
        config_text.replace(config_text.find(from), from.size(), c.wrong + from);
      }
      const fs::path config = write_config("exact.json", config_text);
      const fs::path stdout_file = kWork / "exact_stdout";
      REQUIRE(shell(kTrainer + " --config " + config.string() + " --validate > " + stdout_file.string() + " 2>&1") == 0);
      const std::string message = slurp(stdout_file);
      const size_t at = message.find(": pde ");
      REQUIRE_MESSAGE(at != std::string::npos, message);
      const double pde = std::stod(message.substr(at + 6));
      CAPTURE(message);
      // Taylor mode carries orders up to 2 through a transform; the beam's fourth derivative needs nesting.
      CHECK(message.find(c.pde.find("beam") != std::string::npos ? "nested" : "taylor") != std::string::npos);
      if (wrong) {
        CHECK(pde > 1e-6);
      } else {
        CHECK(pde < 1e-18);
        CHECK(std::stod(message.substr(message.find("loss ") + 5)) < 1e-18);
      }
    }
  }
}

TEST_CASE("pinn runs: a periodic embedding of x builds, and the run keeps Taylor mode through it") {
  std::string text = kInverseConfig;
  const std::string from = R"x("layers": [)x";
  text.replace(text.find(from), from.size(), R"x("layers": [{"type": "PeriodicEmbedding", "periods": [1, 0]},)x");
  const fs::path config = write_config("periodic.json", text);
  const fs::path stdout_file = kWork / "periodic_stdout";
  REQUIRE(shell(kTrainer + " --config " + config.string() + " --validate > " + stdout_file.string() + " 2>&1") == 0);
  const std::string message = slurp(stdout_file);
  CHECK_MESSAGE(message.find("pde") != std::string::npos, message);
  CHECK_MESSAGE(message.find("taylor") != std::string::npos, message);
  CHECK_MESSAGE(message.find("nested") == std::string::npos, message);
}

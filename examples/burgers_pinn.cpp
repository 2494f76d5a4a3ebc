// Burgers PINN: continuous-time inference as in Raissi, Perdikaris and Karniadakis
// (2019), in float64. u_t + u u_x - (0.01/pi) u_xx = 0 on x in [-1, 1], t in [0, 1],
// u(0, x) = -sin(pi x), u(t, +-1) = 0; a 2-20x8-1 tanh network trained on N_u = 100
// initial/boundary points and N_f = 10000 Latin-hypercube collocation points by Adam,
// then L-BFGS, and scored by the relative L2 error against the Cole-Hopf solution.
// u_x, u_t and u_xx come from the Taylor-mode engine (one forward pass), or with
// --engine nested from nested autograd::grad.
//   burgers_pinn [--adam-steps N] [--lbfgs-iters N] [--seed S] [--threads T] [--engine taylor|nested]
// The defaults end at a relative L2 error of 3.2e-4 (8000 L-BFGS iterations, 8908
// evaluations, 454 s on one core with the Taylor engine); the error is below 1e-3 from
// 3000 iterations on (219 s). The nested engine ends at 3.7e-4 in about 10 minutes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gradiens.h"
#include "optim/adam.h"
#include "optim/lbfgs.h"
#include "pinn/reference/burgers.h"

namespace gd = gradiens;

namespace {

constexpr double kPi = std::numbers::pi;
const double kViscosity = 0.01 / kPi;

struct Options {
  int adam_steps = 2000;
  int lbfgs_iterations = 8000;
  uint64_t seed = 1234;
  int threads = 1;  // the PINN's GEMMs are tall and skinny: faster on one thread
  std::string engine = "taylor";
};

// Latin hypercube in [0, 1]^dims (pyDOE's lhs without a criterion): each column puts
// one point in each of the n strata [k/n, (k+1)/n), uniformly within it, in a random
// order independent of the other columns.
gd::Tensor latin_hypercube(int64_t n, int64_t dims, gd::Generator& generator) {
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  std::vector<gd::Tensor> columns;
  for (int64_t d = 0; d < dims; ++d) {
    gd::Tensor strata = gd::randperm(n, generator, f64);
    gd::Tensor jitter = gd::rand({n}, generator, f64);
    columns.push_back((strata + jitter) / static_cast<double>(n));
  }
  return gd::stack(columns, 1);
}

struct TrainingData {
  gd::Tensor x_u, t_u, u_u;  // [N_u, 1]: initial/boundary points and their values
  gd::Tensor x_f, t_f;       // [N_f, 1] collocation points; leaves that require grad
  gd::Tensor z_f;            // [N_f, 2]: the network's input (x, 2t - 1) there, for the Taylor engine
};

// As the paper's code: the initial line at the 256 grid x's and both boundaries at the
// 100 grid t's (456 points), of which N_u are drawn without replacement.
TrainingData make_training_data(int64_t n_u, int64_t n_f, gd::Generator& generator) {
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const std::vector<double> xs = gd::pinn::burgers_reference_x(), ts = gd::pinn::burgers_reference_t();
  std::vector<double> candidates;  // (x, t, u) triples
  for (double x : xs) candidates.insert(candidates.end(), {x, 0.0, -std::sin(kPi * x)});
  for (double t : ts) candidates.insert(candidates.end(), {-1.0, t, 0.0});
  for (double t : ts) candidates.insert(candidates.end(), {1.0, t, 0.0});
  const int64_t count = static_cast<int64_t>(candidates.size() / 3);
  gd::Tensor all = gd::from_blob(candidates.data(), {count, 3}, f64).clone();
  gd::Tensor chosen = all.index_select(0, gd::randperm(count, generator).narrow(0, 0, n_u));

  TrainingData data;
  data.x_u = chosen.narrow(1, 0, 1).contiguous();
  data.t_u = chosen.narrow(1, 1, 1).contiguous();
  data.u_u = chosen.narrow(1, 2, 1).contiguous();
  gd::Tensor lhs = latin_hypercube(n_f, 2, generator);
  data.x_f = (lhs.narrow(1, 0, 1) * 2 - 1).contiguous().requires_grad_();  // x in [-1, 1]
  data.t_f = lhs.narrow(1, 1, 1).contiguous().requires_grad_();            // t in [0, 1]
  data.z_f = gd::cat({data.x_f.detach(), data.t_f.detach() * 2 - 1}, 1);
  return data;
}

// 2 -> 8 hidden layers of 20 -> 1, tanh; Xavier-normal weights and zero biases as in
// the paper's code.
gd::nn::Sequential make_network() {
  gd::nn::Sequential net;
  std::vector<int64_t> widths{2, 20, 20, 20, 20, 20, 20, 20, 20, 1};
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    gd::nn::Linear layer(widths[i], widths[i + 1]);
    layer->to(gd::kFloat64);
    gd::nn::init::xavier_normal_(layer->weight);
    gd::nn::init::zeros_(layer->bias);
    net->push_back(layer);
    if (i + 2 < widths.size()) net->push_back(gd::nn::Tanh());
  }
  return net;
}

// The network takes (x, t) scaled to [-1, 1]; x already is.
gd::Tensor predict(gd::nn::Sequential& net, const gd::Tensor& x, const gd::Tensor& t) {
  return net->forward(gd::cat({x, t * 2 - 1}, 1));
}

// MSE_u + MSE_f, the residual f = u_t + u u_x - nu u_xx from the Taylor-mode
// engine: the network's input is z = (x, 2t - 1), so u_t = 2 du/dz_1.
gd::Tensor pinn_loss_taylor(gd::nn::Sequential& net, const TrainingData& data) {
  gd::pinn::TaylorRequest request;
  request.laplacian = false;
  request.pure_dims = {0};  // u_xx
  gd::pinn::TaylorOutputs jet = gd::pinn::taylor_forward(*net, data.z_f, request);
  gd::Tensor u = jet.value, u_x = jet.pure(0, 1), u_t = jet.pure(1, 1) * 2, u_xx = jet.pure(0, 2);
  gd::Tensor f = u_t + u * u_x - u_xx * kViscosity;
  gd::Tensor mse_u = (predict(net, data.x_u, data.t_u) - data.u_u).square().mean();
  return mse_u + f.square().mean();
}

// The same loss with the derivatives by nested autograd::grad.
gd::Tensor pinn_loss_nested(gd::nn::Sequential& net, const TrainingData& data) {
  gd::Tensor u = predict(net, data.x_f, data.t_f);
  std::vector<gd::Tensor> first =
      gd::autograd::grad({u}, {data.x_f, data.t_f}, {gd::ones_like(u)}, /*retain_graph=*/true, /*create_graph=*/true);
  const gd::Tensor& u_x = first[0];
  const gd::Tensor& u_t = first[1];
  gd::Tensor u_xx =
      gd::autograd::grad({u_x}, {data.x_f}, {gd::ones_like(u_x)}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  gd::Tensor f = u_t + u * u_x - u_xx * kViscosity;
  gd::Tensor mse_u = (predict(net, data.x_u, data.t_u) - data.u_u).square().mean();
  return mse_u + f.square().mean();
}

// The reference grid as network inputs, and the exact solution on it.
struct Evaluation {
  gd::Tensor x, t, exact;  // [256 * 100, 1] each, t-major as the grid
  double exact_norm = 0;
};

Evaluation make_evaluation(const gd::pinn::BurgersExact& exact_solution) {
  const std::vector<double> xs = gd::pinn::burgers_reference_x(), ts = gd::pinn::burgers_reference_t();
  const auto f64 = gd::TensorOptions().dtype(gd::kFloat64);
  const auto nx = static_cast<int64_t>(xs.size()), nt = static_cast<int64_t>(ts.size());
  Evaluation e;
  e.exact = exact_solution.on_grid(ts, xs).reshape({nt * nx, 1});
  e.x = gd::from_blob(const_cast<double*>(xs.data()), {1, nx}, f64).expand({nt, nx}).reshape({nt * nx, 1}).clone();
  e.t = gd::from_blob(const_cast<double*>(ts.data()), {nt, 1}, f64).expand({nt, nx}).reshape({nt * nx, 1}).clone();
  e.exact_norm = e.exact.norm().item<double>();
  return e;
}

double relative_l2(gd::nn::Sequential& net, const Evaluation& e) {
  gd::NoGradGuard no_grad;
  return (predict(net, e.x, e.t) - e.exact).norm().item<double>() / e.exact_norm;
}

// Command line (CLI11): --adam-steps, --lbfgs-iters, --seed, --threads; --help lists them.
Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app("Burgers PINN (Raissi et al. 2019) in float64: Adam, then L-BFGS", "burgers_pinn");
  app.add_option("--adam-steps", options.adam_steps, "Adam steps (lr 1e-3)")->check(CLI::NonNegativeNumber);
  app.add_option("--lbfgs-iters", options.lbfgs_iterations, "L-BFGS iterations at most")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", options.seed, "seed of the data and the initial weights");
  app.add_option("--threads", options.threads, "threads")->check(CLI::Range(1, 1024));
  app.add_option("--engine", options.engine, "how u_x, u_t and u_xx are computed")
      ->check(CLI::IsMember({"taylor", "nested"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up as they come, even in a pipe
  gd::set_num_threads(options.threads);
  auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  // The reference first, with its quadrature error estimated by doubling the nodes.
  auto exact_start = std::chrono::steady_clock::now();
  gd::pinn::BurgersExact exact_solution;
  const Evaluation evaluation = make_evaluation(exact_solution);
  const double quadrature_change =
      (make_evaluation(gd::pinn::BurgersExact(kViscosity, 2 * exact_solution.nodes())).exact - evaluation.exact)
          .abs()
          .max()
          .item<double>();
  std::printf("exact solution: Cole-Hopf, %d Gauss-Hermite nodes on 100 x 256 points; max change with %d nodes %.1e"
              " (%.1f s)\n",
              exact_solution.nodes(), 2 * exact_solution.nodes(), quadrature_change, seconds_since(exact_start));

  gd::manual_seed(options.seed);
  gd::Generator generator(options.seed);
  const TrainingData data = make_training_data(100, 10000, generator);
  gd::nn::Sequential net = make_network();
  int64_t parameter_count = 0;
  for (const gd::Tensor& p : net->parameters()) parameter_count += p.numel();
  std::printf("network 2-20x8-1 tanh, %lld parameters; N_u = 100, N_f = 10000; seed %llu, %d thread(s), %s engine\n",
              static_cast<long long>(parameter_count), static_cast<unsigned long long>(options.seed), options.threads,
              options.engine.c_str());
  auto pinn_loss = options.engine == "taylor" ? pinn_loss_taylor : pinn_loss_nested;

  auto start = std::chrono::steady_clock::now();
  gd::optim::Adam adam(net->parameters(), gd::optim::AdamOptions(1e-3));
  for (int step = 1; step <= options.adam_steps; ++step) {
    adam.zero_grad();
    gd::Tensor loss = pinn_loss(net, data);
    loss.backward();
    adam.step();
    if (step % 500 == 0 || step == options.adam_steps)
      std::printf("adam   step %6d  loss %.3e  rel_l2 %.3e  %7.1f s\n", step, loss.item<double>(),
                  relative_l2(net, evaluation), seconds_since(start));
  }

  // L-BFGS in chunks of max_iter iterations, so that progress can be printed; the
  // state (history, step length) carries over from one step() to the next.
  const int64_t chunk = 500;
  gd::optim::LBFGS lbfgs(net->parameters(), gd::optim::LBFGSOptions(1.0)
                                                .max_iter(chunk)
                                                .max_eval(2 * chunk)
                                                .history_size(50)
                                                .tolerance_grad(1e-12)
                                                .tolerance_change(std::numeric_limits<double>::epsilon())
                                                .line_search_fn("strong_wolfe"));
  auto& lbfgs_options = static_cast<gd::optim::LBFGSOptions&>(lbfgs.param_groups()[0].options());
  double last_loss = 0;
  auto closure = [&] {
    lbfgs.zero_grad();
    gd::Tensor loss = pinn_loss(net, data);
    loss.backward();
    last_loss = loss.item<double>();
    return loss;
  };
  auto lbfgs_state = [&]() -> const gd::optim::LBFGSParamState* {
    return dynamic_cast<const gd::optim::LBFGSParamState*>(lbfgs.state(net->parameters().front()));
  };
  int64_t iterations = 0, evaluations = 0;
  int early_stops = 0;
  double chunk_start_loss = std::numeric_limits<double>::infinity();
  while (iterations < options.lbfgs_iterations) {
    const int64_t this_chunk = std::min<int64_t>(chunk, options.lbfgs_iterations - iterations);
    lbfgs_options.max_iter(this_chunk).max_eval(2 * this_chunk);
    lbfgs.step(closure);
    const gd::optim::LBFGSParamState* state = lbfgs_state();
    const int64_t chunk_iterations = state->n_iter() - iterations;
    const int64_t chunk_evaluations = state->func_evals() - evaluations;
    iterations = state->n_iter();
    evaluations = state->func_evals();
    std::printf("lbfgs  iter %6lld  evals %6lld  loss %.3e  rel_l2 %.3e  %7.1f s\n",
                static_cast<long long>(iterations), static_cast<long long>(evaluations), last_loss,
                relative_l2(net, evaluation), seconds_since(start));
    // A chunk that ends before its iteration and evaluation budgets met a tolerance
    // (the loss stopped changing, or the gradient vanished). A fresh step() may still
    // move (the next one starts from the last direction); twice in a row means stuck.
    const bool ended_early = chunk_iterations < this_chunk && chunk_evaluations < 2 * this_chunk;
    early_stops = ended_early ? early_stops + 1 : 0;
    if (early_stops == 2) break;
    // L-BFGS on this problem can also stall without meeting a tolerance: every
    // iteration a two-evaluation line search that barely moves. A whole chunk that
    // lowers the loss by less than 1% stops the run.
    if (last_loss > 0.99 * chunk_start_loss) {
      std::printf("lbfgs  stalled (the loss fell by less than 1%% over %lld iterations)\n",
                  static_cast<long long>(chunk_iterations));
      break;
    }
    chunk_start_loss = last_loss;
  }

  const double seconds = seconds_since(start);
  const double error = relative_l2(net, evaluation);
  std::printf("relative L2 error %.3e (paper, 2-20x8-1: 9.6e-04), %lld L-BFGS evaluations, %.1f s\n", error,
              static_cast<long long>(evaluations), seconds);
  std::printf("{\"example\": \"burgers_pinn\", \"rel_l2\": %.3e, \"lbfgs_evals\": %lld, \"lbfgs_iterations\": %lld, "
              "\"adam_steps\": %d, \"seconds\": %.1f, \"threads\": %d, \"seed\": %llu, \"engine\": \"%s\"}\n",
              error, static_cast<long long>(evaluations), static_cast<long long>(iterations), options.adam_steps,
              seconds, options.threads, static_cast<unsigned long long>(options.seed), options.engine.c_str());
  return 0;
}

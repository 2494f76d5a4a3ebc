// Same seed, same training on the CPU and the GPU: an MLP and a Burgers PINN in
// float64, Adam for 200 steps, losses equal to 1e-10 at every step.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/cuda.h"
#include "gradiens.h"

namespace gd = gradiens;
using gd::Tensor;

namespace {

// The losses of `steps` Adam steps of loss_of(model) with the model on `device`.
template <class Model, class LossOf>
std::vector<double> train(Model model, const gd::Device& device, int steps, LossOf loss_of) {
  model->to(device);
  gd::optim::Adam optimizer(model->parameters(), gd::optim::AdamOptions(1e-3));
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    Tensor loss = loss_of(model, device);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

void check_same_curve(const std::vector<double>& cpu, const std::vector<double>& gpu) {
  REQUIRE(cpu.size() == gpu.size());
  double worst = 0;
  size_t worst_step = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double rel = std::abs(cpu[i] - gpu[i]) / std::abs(cpu[i]);
    if (rel > worst) {
      worst = rel;
      worst_step = i;
    }
  }
  INFO(fmt::format("worst relative difference {} at step {} (cpu {}, gpu {})", worst, worst_step, cpu[worst_step],
                   gpu[worst_step]));
  CHECK(worst <= 1e-10);
  CHECK(cpu.back() < cpu.front());  // it trained
}

gd::nn::Sequential make_mlp() {
  gd::manual_seed(1);
  gd::nn::Sequential net(gd::nn::Linear(8, 64), gd::nn::Tanh(), gd::nn::Linear(64, 64), gd::nn::Tanh(),
                         gd::nn::Linear(64, 1));
  net->to(gd::kFloat64);
  return net;
}

}  // namespace

TEST_CASE("cuda: an MLP trains the same on the CPU and the GPU (float64, 200 Adam steps)") {
  gd::manual_seed(2);
  Tensor x = gd::randn({256, 8}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor y = gd::sin(x.sum(1, true));
  auto loss_of = [&](gd::nn::Sequential& net, const gd::Device& device) {
    Tensor diff = net->forward(x.to(device)) - y.to(device);
    return (diff * diff).mean();
  };
  check_same_curve(train(make_mlp(), gd::Device(gd::kCPU), 200, loss_of), train(make_mlp(), gd::Device("cuda:0"), 200, loss_of));
}

TEST_CASE("cuda: a Burgers PINN trains the same on the CPU and the GPU (float64, 200 Adam steps)") {
  // u_t + u u_x - (0.01 / pi) u_xx = 0 on 2000 collocation points, with
  // u(0, x) = -sin(pi x) on 200 initial points: derivatives by nested autograd.
  gd::manual_seed(3);
  auto opt = gd::TensorOptions().dtype(gd::kFloat64);
  Tensor points = gd::rand({2000, 2}, opt) * gd::tensor({2.0, 1.0}, opt) - gd::tensor({1.0, 0.0}, opt);  // (x, t)
  Tensor x0 = gd::rand({200, 1}, opt) * 2.0 - 1.0;
  const double nu = 0.01 / M_PI;
  auto loss_of = [&](gd::nn::Sequential& net, const gd::Device& device) {
    Tensor p = points.to(device).requires_grad_();
    Tensor u = net->forward(p);
    Tensor du = gd::autograd::grad({u.sum()}, {p}, {}, std::nullopt, true)[0];
    Tensor u_x = du.select(1, 0), u_t = du.select(1, 1);
    Tensor u_xx = gd::autograd::grad({u_x.sum()}, {p}, {}, std::nullopt, true)[0].select(1, 0);
    Tensor residual = u_t + u.squeeze(1) * u_x - u_xx * nu;
    Tensor xd = x0.to(device);
    Tensor initial = net->forward(gd::cat({xd, gd::zeros_like(xd)}, 1)) + gd::sin(xd * M_PI);
    return (residual * residual).mean() + (initial * initial).mean();
  };
  auto make = [] {
    gd::manual_seed(4);
    gd::nn::Sequential net(gd::nn::Linear(2, 32), gd::nn::Tanh(), gd::nn::Linear(32, 32), gd::nn::Tanh(),
                           gd::nn::Linear(32, 1));
    net->to(gd::kFloat64);
    return net;
  };
  check_same_curve(train(make(), gd::Device(gd::kCPU), 200, loss_of), train(make(), gd::Device("cuda:0"), 200, loss_of));
}

TEST_CASE("cuda: a ReLU classifier with cross-entropy trains the same on the CPU and the GPU (float64, 100 Adam steps)") {
  gd::manual_seed(5);
  Tensor x = gd::randn({128, 20}, gd::TensorOptions().dtype(gd::kFloat64));
  Tensor y = gd::randint(0, 7, {128});
  auto make = [] {
    gd::manual_seed(6);
    gd::nn::Sequential net(gd::nn::Linear(20, 64), gd::nn::ReLU(), gd::nn::Dropout(0.2), gd::nn::Linear(64, 7));
    net->to(gd::kFloat64);
    return net;
  };
  auto loss_of = [&](gd::nn::Sequential& net, const gd::Device& device) {
    return gd::nn::functional::cross_entropy(net->forward(x.to(device)), y.to(device));
  };
  // Dropout draws the same masks on both devices from the same seed.
  gd::manual_seed(7);
  std::vector<double> cpu = train(make(), gd::Device(gd::kCPU), 100, loss_of);
  gd::manual_seed(7);
  std::vector<double> gpu = train(make(), gd::Device("cuda:0"), 100, loss_of);
  check_same_curve(cpu, gpu);
  // A class index out of range is an error on the GPU as on the CPU.
  gd::nn::Sequential net = make();
  net->to(gd::Device("cuda:0"));
  CHECK_THROWS_WITH_AS(gd::nn::functional::cross_entropy(net->forward(x.to(gd::Device("cuda:0"))),
                                                         gd::full({128}, 9, gd::kInt64).to(gd::Device("cuda:0"))),
                       "Target 9 is out of bounds.", gd::Error);
}

TEST_CASE("cuda: L-BFGS with the strong Wolfe line search trains the same on the CPU and the GPU (float64)") {
  gd::manual_seed(8);
  Tensor x = gd::rand({200, 2}, gd::TensorOptions().dtype(gd::kFloat64)) * 2.0 - 1.0;
  Tensor y = gd::sin(x.select(1, 0) * 3.0).unsqueeze(1) * gd::cos(x.select(1, 1) * 2.0).unsqueeze(1);
  auto run = [&](const gd::Device& device) {
    gd::manual_seed(9);
    gd::nn::Sequential net(gd::nn::Linear(2, 16), gd::nn::Tanh(), gd::nn::Linear(16, 1));
    net->to(gd::kFloat64);
    net->to(device);
    gd::optim::LBFGS optimizer(net->parameters(),
                               gd::optim::LBFGSOptions(1.0).max_iter(20).history_size(10).line_search_fn("strong_wolfe"));
    Tensor xd = x.to(device), yd = y.to(device);
    std::vector<double> losses;
    for (int step = 0; step < 5; ++step) {
      Tensor loss = optimizer.step([&] {
        optimizer.zero_grad();
        Tensor diff = net->forward(xd) - yd;
        Tensor l = (diff * diff).mean();
        l.backward();
        return l;
      });
      losses.push_back(loss.item<double>());
    }
    return losses;
  };
  std::vector<double> cpu = run(gd::Device(gd::kCPU)), gpu = run(gd::Device("cuda:0"));
  // The dot products sum in another order on the device, and the line search
  // then takes slightly different steps: the curves agree closely, not to the bit.
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) CHECK(std::abs(cpu[i] - gpu[i]) <= 1e-6 * std::abs(cpu[i]) + 1e-12);
  CHECK(gpu.back() < 0.5 * gpu.front());
}

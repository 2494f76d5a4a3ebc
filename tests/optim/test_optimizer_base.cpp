// optim::Optimizer's base: parameter groups and their errors, zero_grad,
// per-parameter state, the JSON state_dict (tensors embedded bit-exactly)
// and load_state_dict's checks.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace optim = gradiens::optim;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

// A minimal optimizer: p -= lr * grad, counting its steps and keeping the last
// gradient, to exercise the base without depending on a real optimizer.
struct PlainOptions : optim::OptimizerCloneableOptions<PlainOptions> {
  explicit PlainOptions(double lr = 0.1) : lr(lr) {}
  double get_lr() const override { return lr; }
  void set_lr(double value) override { lr = value; }
  nlohmann::json to_json() const override { return {{"lr", lr}}; }
  void from_json(const nlohmann::json& j) override { lr = optim::json_get<double>(j, "lr", "Plain options"); }
  double lr;
};

struct PlainState : optim::OptimizerCloneableParamState<PlainState> {
  int64_t step = 0;
  Tensor last_grad;
  void save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const override {
    scalars["step"] = step;
    tensors["last_grad"] = last_grad;
  }
  void load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) override {
    step = optim::json_get<int64_t>(scalars, "step", "Plain state");
    auto it = tensors.find("last_grad");
    GD_CHECK(it != tensors.end(), "Plain state: 'last_grad' is missing");
    last_grad = it->second;
  }
};

class Plain : public optim::Optimizer {
 public:
  Plain(std::vector<optim::OptimizerParamGroup> groups, double lr)
      : Optimizer(std::move(groups), std::make_unique<PlainOptions>(lr)) {}
  Plain(std::vector<Tensor> params, double lr) : Plain(std::vector<optim::OptimizerParamGroup>{{std::move(params)}}, lr) {}
  Tensor step(LossClosure closure = nullptr) override {
    Tensor loss;
    if (closure) {
      gd::AutoGradMode enable(true);
      loss = closure();
    }
    gd::NoGradGuard no_grad;
    for (auto& group : param_groups_) {
      double lr = group.options().get_lr();
      for (Tensor& p : group.params()) {
        if (!p.grad().defined()) continue;
        auto& s = param_state<PlainState>(p);
        ++s.step;
        s.last_grad = p.grad().clone();
        p.sub_(p.grad() * lr);
      }
    }
    return loss;
  }

 protected:
  std::unique_ptr<optim::OptimizerParamState> make_param_state() const override {
    return std::make_unique<PlainState>();
  }
};

Tensor leaf(const std::vector<double>& values, const std::vector<int64_t>& shape) {
  return tensor_of(values, shape).requires_grad_();
}

}  // namespace

TEST_CASE("Optimizer: groups take the defaults or their own options; bad groups are PyTorch's errors") {
  Tensor a = leaf({1, 2}, {2}), b = leaf({3}, {1}), c = leaf({4}, {1});
  Plain opt({optim::OptimizerParamGroup({a}), optim::OptimizerParamGroup({b}, std::make_unique<PlainOptions>(0.5))},
            0.1);
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(opt.param_groups()[0].options().get_lr() == 0.1);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.5);
  opt.add_param_group(optim::OptimizerParamGroup({c}));
  CHECK(opt.param_groups()[2].options().get_lr() == 0.1);
  CHECK(opt.size() == 3);
  opt.param_groups()[0].options().set_lr(0.25);  // per group, the defaults untouched
  CHECK(opt.defaults().get_lr() == 0.1);

  CHECK(error_of([&] { opt.add_param_group(optim::OptimizerParamGroup({a})); }) ==
        "some parameters appear in more than one parameter group");
  CHECK(error_of([&] { Plain(std::vector<Tensor>{a * 2.0}, 0.1); }) == "can't optimize a non-leaf Tensor");
  CHECK(error_of([&] { Plain(std::vector<optim::OptimizerParamGroup>{}, 0.1); }) ==
        "optimizer got an empty parameter list");
  CHECK(error_of([&] { Plain(std::vector<Tensor>{}, 0.1); }) == "optimizer got an empty parameter list");
  CHECK(error_of([] { optim::OptimizerOptions&& o = PlainOptions(); o.set_momentum(0.9); }) ==
        "optimizer must support momentum with `cycle_momentum` option enabled");
}

TEST_CASE("Optimizer: step with a closure returns its loss; zero_grad drops or zeroes gradients") {
  Tensor w = leaf({1, -2}, {2});
  Plain opt(std::vector<Tensor>{w}, 0.5);
  Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (w * w).sum();
    l.backward();
    return l;
  });
  CHECK(loss.item<double>() == 5.0);
  // w - 0.5 * 2w = 0 (closed form), and no graph was recorded by the update.
  CHECK(value_mismatch(w, tensor_of({0, 0}, {2})) == "");
  CHECK(w.is_leaf());
  opt.zero_grad(/*set_to_none=*/false);
  CHECK(value_mismatch(w.grad(), tensor_of({0, 0}, {2})) == "");
  opt.zero_grad();
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("Optimizer: state_dict is PyTorch's layout and a round trip is exact") {
  Tensor a = leaf({1, 2}, {2}), b = leaf({3, 4, 5}, {3}), unused = leaf({0}, {1});
  Plain opt({optim::OptimizerParamGroup({a, unused}), optim::OptimizerParamGroup({b}, std::make_unique<PlainOptions>(0.5))},
            0.1);
  opt.param_groups()[1].values()["initial_lr"] = 0.5;
  ((a * a).sum() + b.sin().sum()).backward();
  opt.step();
  {
    // A NaN payload and -0.0 in the state must survive the JSON.
    gd::NoGradGuard no_grad;
    auto* s = static_cast<PlainState*>(opt.state(b));
    double* g = s->last_grad.data_ptr<double>();
    g[0] = std::bit_cast<double>(uint64_t{0x7ff8000000001234});
    g[1] = -0.0;
  }
  nlohmann::json sd = opt.state_dict();
  CHECK(sd["param_groups"] == nlohmann::json::parse(R"([{"lr": 0.1, "params": [0, 1]},
                                                        {"lr": 0.5, "initial_lr": 0.5, "params": [2]}])"));
  CHECK(sd["state"].size() == 2);  // `unused` had no gradient, so no state (as PyTorch)
  CHECK(sd["state"]["0"]["step"] == 1);
  CHECK(sd["state"]["2"]["last_grad"]["dtype"] == "float64");
  CHECK(sd["state"]["2"]["last_grad"]["shape"] == nlohmann::json::array({3}));

  // Through text and back into a fresh optimizer over other tensors of the same shapes.
  Tensor a2 = leaf({0, 0}, {2}), b2 = leaf({0, 0, 0}, {3}), unused2 = leaf({0}, {1});
  Plain other({optim::OptimizerParamGroup({a2, unused2}), optim::OptimizerParamGroup({b2})}, 0.9);
  other.load_state_dict(nlohmann::json::parse(sd.dump()));
  CHECK(other.param_groups()[0].options().get_lr() == 0.1);
  CHECK(other.param_groups()[1].options().get_lr() == 0.5);
  CHECK(other.param_groups()[1].values().at("initial_lr") == 0.5);
  auto* s = static_cast<PlainState*>(other.state(b2));
  REQUIRE(s != nullptr);
  CHECK(s->step == 1);
  auto* want = static_cast<PlainState*>(opt.state(b));
  CHECK(std::memcmp(s->last_grad.data_ptr(), want->last_grad.data_ptr(), 3 * sizeof(double)) == 0);
  CHECK(other.state(unused2) == nullptr);
  CHECK(other.state_dict() == sd);
}

TEST_CASE("Optimizer: load_state_dict refuses mismatched groups and bad entries, leaving the optimizer as it was") {
  Tensor a = leaf({1, 2}, {2}), b = leaf({3}, {1});
  Plain opt({optim::OptimizerParamGroup({a}), optim::OptimizerParamGroup({b})}, 0.1);
  Plain one_group(std::vector<Tensor>{leaf({1, 2}, {2})}, 0.1);
  CHECK(error_of([&] { one_group.load_state_dict(opt.state_dict()); }) ==
        "loaded state dict has a different number of parameter groups");
  Plain sizes({optim::OptimizerParamGroup({leaf({1, 2}, {2}), leaf({1}, {1})}), optim::OptimizerParamGroup({leaf({1}, {1})})},
              0.1);
  // Two groups of sizes 2 and 1 against 1 and 1.
  CHECK(error_of([&] { opt.load_state_dict(sizes.state_dict()); }) ==
        "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
  nlohmann::json bad = opt.state_dict();
  bad["param_groups"][1]["lr"] = "fast";
  CHECK(error_of([&] { opt.load_state_dict(bad); }) == "Plain options: 'lr' has the wrong type (string)");
  CHECK(opt.param_groups()[1].options().get_lr() == 0.1);
  CHECK(error_of([&] { opt.load_state_dict(nlohmann::json::object()); }) ==
        "Optimizer.load_state_dict: 'param_groups' is missing");
}

TEST_CASE("tensor_to_json / tensor_from_json: exact bytes for every dtype; malformed input is an error") {
  for (gd::ScalarType dtype : {gd::kFloat64, gd::kFloat32, gd::kFloat16, gd::kBFloat16, gd::kInt64, gd::kInt32,
                               gd::kUInt8, gd::kBool}) {
    Tensor t = tensor_of({0, 1, -0.0, 3, 1, 0, 1}, {7}).to(dtype);
    Tensor back = optim::tensor_from_json(optim::tensor_to_json(t));
    CHECK(back.dtype() == dtype);
    CHECK(back.sizes().vec() == std::vector<int64_t>{7});
    CHECK(std::memcmp(back.data_ptr(), t.data_ptr(), 7 * t.element_size()) == 0);
  }
  // Every base64 length class (0, 1, 2 bytes of padding) and an empty tensor.
  for (int64_t n : {0, 1, 2, 3, 4, 5}) {
    Tensor t = gd::arange(n).to(gd::kUInt8);
    Tensor back = optim::tensor_from_json(optim::tensor_to_json(t));
    CHECK(value_mismatch(back.to(gd::kFloat64), t.to(gd::kFloat64)) == "");
  }
  CHECK(optim::tensor_to_json(tensor_of({1.0}, {1}, gd::kUInt8))["data"] == "AQ==");  // base64 of byte 0x01
  nlohmann::json j = optim::tensor_to_json(tensor_of({1, 2}, {2}));
  j["shape"] = {3};
  CHECK(error_of([&] { optim::tensor_from_json(j); }) == "tensor_from_json: 16 bytes of data for a float64 tensor of shape [3]");
  j["shape"] = {2};
  j["dtype"] = "float128";
  CHECK(error_of([&] { optim::tensor_from_json(j); }) == "tensor_from_json: unknown dtype 'float128'");
  j["dtype"] = "float64";
  j["data"] = "AAAA*AAA";
  CHECK(error_of([&] { optim::tensor_from_json(j); }) == "tensor_from_json: 'data' is not base64 (bad character at 4)");
  j["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
  j["data"] = "";
  CHECK(error_of([&] { optim::tensor_from_json(j); }) ==
        "tensor_from_json: shape [1099511627776, 1099511627776] is too large");
}

// nn::utils::prune: masks, outputs and gradients against PyTorch 1.13,
// repeated pruning, random counts, remove, is_pruned, training, and errors.
#include <doctest/doctest.h>

#include "gradiens.h"
#include "nn/utils/prune.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace prune = gradiens::nn::utils::prune;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;
using gd::testing::values_of;

// The reference script (PyTorch 1.13, float64) prunes nn.Linear(4, 3) holding
//   W = [[0.9, -0.15, 0.3, -0.6], [0.05, 0.8, -0.45, 0.2], [-0.7, 0.35, 0.1, -0.25]]
//   b = [0.1, -0.2, 0.3], and feeds X = [[1, -2, 0.5, 1.5], [-0.5, 1, 2, -1]].
// Entries of W have distinct absolute values, so L1 pruning has no ties.
namespace {

Tensor W() { return tensor_of({0.9, -0.15, 0.3, -0.6, 0.05, 0.8, -0.45, 0.2, -0.7, 0.35, 0.1, -0.25}, {3, 4}); }
Tensor B() { return tensor_of({0.1, -0.2, 0.3}); }
Tensor X() { return tensor_of({1.0, -2.0, 0.5, 1.5, -0.5, 1.0, 2.0, -1.0}, {2, 4}); }

nn::Linear make_linear() {
  nn::Linear lin(4, 3);
  lin->to(gd::kFloat64);
  gd::NoGradGuard no_grad;
  lin->weight.copy_(W());
  lin->bias.copy_(B());
  return lin;
}

std::vector<std::string> keys_of(const gd::OrderedDict<std::string, Tensor>& d) { return d.keys(); }
int64_t zeros_in(const Tensor& t) { return (t == 0.0).sum().item<int64_t>(); }

}  // namespace

TEST_CASE("l1_unstructured: mask, keys, output and gradients match PyTorch") {
  nn::Linear lin = make_linear();
  prune::l1_unstructured(*lin, "weight", 0.5);
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"bias", "weight_orig", "weight_mask"});
  CHECK(keys_of(lin->named_parameters()) == std::vector<std::string>{"bias", "weight_orig"});
  CHECK(prune::is_pruned(*lin));
  const std::vector<double> mask = {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0};
  CHECK(value_mismatch(values_of(lin->buffer("weight_mask")), mask, 0, 0) == "");
  CHECK(value_mismatch(lin->parameter("weight_orig"), W(), 0, 0) == "");
  // The module's own handle holds the pruned weight right away.
  CHECK(value_mismatch(lin->weight, W() * tensor_of(mask, {3, 4}), 0, 0) == "");

  Tensor x = X().requires_grad_();
  Tensor out = lin(x);
  CHECK(value_mismatch(out, tensor_of({0.10000000000000006, -2.0250000000000004, -1.0999999999999999,
                                       0.24999999999999997, -0.3, 1.0},
                                      {2, 3})) == "");
  out.square().sum().backward();
  // Pruned entries get a zero gradient in weight_orig.
  CHECK(value_mismatch(lin->parameter("weight_orig").grad(),
                       tensor_of({-0.04999999999999985, 0.0, 0.0, -0.1999999999999998, 0.0, 7.500000000000002,
                                  -3.2250000000000005, 0.0, -3.1999999999999997, 6.3999999999999995, 0.0, 0.0},
                                 {3, 4})) == "");
  CHECK(value_mismatch(lin->bias.grad(), tensor_of({0.7000000000000001, -4.65, -0.19999999999999973})) == "");
  CHECK(value_mismatch(x.grad(), tensor_of({1.7199999999999998, -4.010000000000001, 1.8225000000000005,
                                            -0.12000000000000006, -0.95, 0.21999999999999997, 0.27,
                                            -0.29999999999999993},
                                           {2, 4})) == "");
}

TEST_CASE("pruning again prunes among the entries still kept (PyTorch's PruningContainer)") {
  struct Row {
    const char* what;
    std::function<void(nn::Module&)> prune_more;
    std::vector<double> mask;
  };
  // Masks printed by the reference script after each step, in sequence.
  const std::vector<Row> rows = {
      {"l1 0.5", [](nn::Module& m) { prune::l1_unstructured(m, "weight", 0.5); }, {1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0}},
      {"l1 2 (a count)", [](nn::Module& m) { prune::l1_unstructured(m, "weight", 2); },
       {1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0}},
      {"l1 0.5 of the 4 kept", [](nn::Module& m) { prune::l1_unstructured(m, "weight", 0.5); },
       {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}},
  };
  nn::Linear lin = make_linear();
  Tensor mask_buffer;
  for (const Row& row : rows) {
    CAPTURE(row.what);
    row.prune_more(*lin);
    if (!mask_buffer.defined()) mask_buffer = lin->buffer("weight_mask");
    CHECK(lin->buffer("weight_mask").is_same(mask_buffer));
    CHECK(value_mismatch(values_of(lin->buffer("weight_mask")), row.mask, 0, 0) == "");
    CHECK(value_mismatch(lin(X()), X().matmul((W() * tensor_of(row.mask, {3, 4})).t()) + B()) == "");
  }
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"bias", "weight_orig", "weight_mask"});

  // remove: weight is a plain parameter again, the module's own handle, holding orig * mask.
  Tensor handle = lin->weight;
  prune::remove(*lin, "weight");
  CHECK_FALSE(prune::is_pruned(*lin));
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"bias", "weight"});  // as PyTorch
  CHECK(lin->weight.is_same(handle));
  CHECK(lin->named_parameters()["weight"].is_same(lin->weight));
  CHECK(lin->weight.is_leaf());
  CHECK(lin->weight.requires_grad());
  CHECK(value_mismatch(values_of(lin->weight), {0.9, 0, 0, 0, 0, 0.8, 0, 0, 0, 0, 0, 0}, 0, 0) == "");
  // No hook is left: gradients land in the weight, and all of its entries train.
  lin(X()).sum().backward();
  CHECK(value_mismatch(lin->weight.grad(), X().sum({0}).unsqueeze(0).expand({3, 4})) == "");
}

TEST_CASE("l1_unstructured with importance scores, custom_from_mask, identity") {
  nn::Linear a = make_linear();
  prune::l1_unstructured(*a, "weight", 3, gd::arange(12, 0, -1, gd::kFloat64).reshape({3, 4}));
  CHECK(value_mismatch(values_of(a->buffer("weight_mask")), {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, 0, 0) == "");

  nn::Linear b = make_linear();
  prune::custom_from_mask(*b, "weight", tensor_of({1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1}, {3, 4}));
  prune::l1_unstructured(*b, "weight", 0.25);  // round(0.25 * 9 kept) = 2 more
  CHECK(value_mismatch(values_of(b->buffer("weight_mask")), {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0}, 0, 0) == "");

  nn::Linear c = make_linear();
  prune::identity(*c, "weight");
  CHECK(keys_of(c->state_dict()) == std::vector<std::string>{"bias", "weight_orig", "weight_mask"});
  CHECK(zeros_in(c->buffer("weight_mask")) == 0);
  CHECK(value_mismatch(c(X()), X().matmul(W().t()) + B()) == "");
}

TEST_CASE("random_unstructured prunes round(amount * n) entries (Python's rounding), counts as given") {
  struct Row {
    int64_t n;
    prune::PruningAmount amount;
    int64_t pruned;
  };
  // Counts from the reference script.
  const std::vector<Row> rows = {{12, 0.3, 4}, {10, 0.25, 2}, {10, 0.35, 4}, {10, 0.45, 4},
                                 {12, 5, 5},   {12, 0.0, 0},  {12, 1.0, 12}, {12, 12, 12}};
  gd::manual_seed(7);
  for (const Row& row : rows) {
    CAPTURE(row.n);
    nn::Linear lin(row.n, 1);
    prune::random_unstructured(*lin, "weight", row.amount);
    CHECK(zeros_in(lin->buffer("weight_mask")) == row.pruned);
  }
  // A second random pruning draws among the kept entries only: 4 more after 8
  // prune all 12 (drawing from all 12 would hit only the 4 kept with odds 1/495).
  nn::Linear lin(12, 1);
  prune::random_unstructured(*lin, "weight", 8);
  Tensor first = lin->buffer("weight_mask").clone();
  prune::random_unstructured(*lin, "weight", 4);
  CHECK(zeros_in(first) == 8);
  CHECK(zeros_in(lin->buffer("weight_mask")) == 12);
  CHECK(zeros_in(lin->weight) == 12);
}

TEST_CASE("prune: two SGD steps on weight_orig and bias match PyTorch; pruned entries stay put") {
  nn::Linear lin = make_linear();
  prune::l1_unstructured(*lin, "weight", 0.25);
  std::vector<Tensor> params = lin->parameters();  // bias, weight_orig: collected after pruning
  CHECK(params.size() == 2);
  const std::vector<double> losses = {2.7414583333333336, 1.6158901114004627};
  for (double want : losses) {
    Tensor loss = (lin(X()) - 1.0).square().mean();
    CHECK(loss.item<double>() == doctest::Approx(want).epsilon(1e-13));
    loss.backward();
    gd::NoGradGuard no_grad;
    for (Tensor& p : params) {
      p.sub_(p.grad() * 0.1);
      p.set_grad(Tensor());
    }
  }
  CHECK(value_mismatch(lin->parameter("weight_orig"),
                       tensor_of({0.9417708333333333, -0.15, 0.3410416666666667, -0.5395833333333333, 0.05,
                                  0.5699583333333333, -0.18352083333333333, 0.3493125, -0.5547638888888888,
                                  0.05952777777777776, 0.1, -0.03026736111111114},
                                 {3, 4}),
                       1e-12, 1e-15) == "");
  CHECK(value_mismatch(lin->bias, tensor_of({0.15520833333333334, 0.05433333333333332, 0.43396527777777777}), 1e-12,
                       1e-15) == "");
  // recompute gives the pruned weight after the step without a forward.
  CHECK(value_mismatch(prune::recompute(*lin, "weight"),
                       tensor_of({0.9417708333333333, 0.0, 0.3410416666666667, -0.5395833333333333, 0.0,
                                  0.5699583333333333, -0.18352083333333333, 0.3493125, -0.5547638888888888,
                                  0.05952777777777776, 0.0, -0.03026736111111114},
                                 {3, 4}),
                       1e-12, 1e-15) == "");
}

TEST_CASE("prune: is_pruned looks into submodules; state_dict round trip") {
  nn::Sequential net(nn::Tanh(), make_linear());
  CHECK_FALSE(prune::is_pruned(*net));
  auto second = net->ptr<nn::LinearImpl>(1);
  prune::l1_unstructured(*second, "weight", 0.5);
  CHECK(prune::is_pruned(*net));
  CHECK(keys_of(net->state_dict()) == std::vector<std::string>{"1.bias", "1.weight_orig", "1.weight_mask"});

  nn::Sequential copy(nn::Tanh(), nn::Linear(4, 3));
  copy->to(gd::kFloat64);
  prune::identity(*copy->ptr<nn::LinearImpl>(1), "weight");
  copy->load_state_dict(net->state_dict());
  Tensor x = tensor_of({0.5, -1, 0.25, 2, 1, 0, -0.5, 0.5, -0.25, 1, 2, -1}, {3, 4});
  CHECK(value_mismatch(copy(x), net(x), 0, 0) == "");
  Tensor kept = tensor_of({1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {3, 4});
  CHECK(value_mismatch(copy->ptr<nn::LinearImpl>(1)->weight, W() * kept, 0, 0) == "");
  prune::remove(*second, "weight");
  CHECK_FALSE(prune::is_pruned(*net));
}

TEST_CASE("prune: errors with PyTorch's messages") {
  nn::Linear lin = make_linear();
  // Checked before the module is looked at, as PyTorch's method constructors do.
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", 1.5); }) ==
        "amount=1.5 should either be a float in the range [0, 1] or a non-negative integer");
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", -0.1); }) ==
        "amount=-0.1 should either be a float in the range [0, 1] or a non-negative integer");
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", 2.0); }) ==
        "amount=2.0 should either be a float in the range [0, 1] or a non-negative integer");
  CHECK(error_of([&] { prune::random_unstructured(*lin, "weight", -1); }) ==
        "amount=-1 should either be a float in the range [0, 1] or a non-negative integer");
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", 13); }) ==
        "amount=13 should be smaller than the number of parameters to prune=12");
  CHECK_FALSE(prune::is_pruned(*lin));  // a refused pruning changes nothing
  CHECK(keys_of(lin->state_dict()) == std::vector<std::string>{"weight", "bias"});
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "foo", 0.5); }) == "'Linear' object has no attribute 'foo'");
  CHECK(error_of([&] { prune::remove(*lin, "weight"); }) ==
        "Parameter 'weight' of module Linear(in_features=4, out_features=3, bias=True) has to be pruned before "
        "pruning can be removed");
  nn::Module holder;
  holder.register_buffer("scale", gd::ones({2}));
  CHECK(error_of([&] { prune::l1_unstructured(holder, "scale", 0.5); }) ==
        "cannot assign 'torch.FloatTensor' object to parameter 'scale_orig' (torch.nn.Parameter or None required)");
  // PyTorch's text, without the run of spaces its source line break leaves in it.
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", 0.5, gd::ones({2}, gd::kFloat64)); }) ==
        "importance_scores should have the same shape as parameter weight of Linear(in_features=4, out_features=3, "
        "bias=True)");
  // A pruned tensor can be pruned again past its kept entries only by count, checked against what is left.
  prune::l1_unstructured(*lin, "weight", 10);
  CHECK(error_of([&] { prune::l1_unstructured(*lin, "weight", 3); }) ==
        "amount=3 should be smaller than the number of parameters to prune=2");
}

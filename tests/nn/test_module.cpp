// nn::Module and the containers: registration, names and order (against
// PyTorch's), state_dict round trips and errors, to(dtype) keeping tensor
// identity, hooks, train/eval, printing, and Linear against its closed form.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::sample;
using gd::testing::value_mismatch;

namespace {

// PyTorch's Outer from the tests' reference script: an encoder Sequential, a head and a buffer.
class OuterImpl : public nn::Module {
 public:
  OuterImpl() {
    encoder = register_module("encoder", nn::Sequential(nn::Linear(2, 2)));
    head = register_module("head", nn::Linear(2, 1));
    register_buffer("steps", gd::zeros({1}));
  }
  Tensor forward(const Tensor& x) { return head(encoder(x)); }
  nn::Sequential encoder{nullptr};
  nn::Linear head{nullptr};
};
GRADIENS_MODULE(Outer);

std::vector<std::string> keys_of(const gd::OrderedDict<std::string, Tensor>& d) { return d.keys(); }

}  // namespace

TEST_CASE("nn::Module: names, order and printing match PyTorch") {
  // Expected strings printed by PyTorch 1.13 for the same modules.
  nn::Sequential net(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1, false));
  CHECK(keys_of(net->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight"});
  CHECK(keys_of(net->state_dict()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight"});
  CHECK(net->repr() ==
        "Sequential(\n  (0): Linear(in_features=3, out_features=4, bias=True)\n  (1): Tanh()\n"
        "  (2): Linear(in_features=4, out_features=1, bias=False)\n)");
  Outer outer;
  CHECK(outer->repr() ==
        "Outer(\n  (encoder): Sequential(\n    (0): Linear(in_features=2, out_features=2, bias=True)\n  )\n"
        "  (head): Linear(in_features=2, out_features=1, bias=True)\n)");
  CHECK(outer->named_modules().keys() == std::vector<std::string>{"", "encoder", "encoder.0", "head"});
  CHECK(keys_of(outer->state_dict()) ==
        std::vector<std::string>{"steps", "encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"});
  CHECK(outer->parameters().size() == 4);
  CHECK(outer->buffers().size() == 1);
  CHECK(outer->children().size() == 2);
  CHECK(nn::GELU("tanh")->repr() == "GELU(approximate='tanh')");
  CHECK(nn::Softplus()->repr() == "Softplus(beta=1, threshold=20)");
  CHECK(nn::Softplus(2.5, 10)->repr() == "Softplus(beta=2.5, threshold=10)");
  nn::ModuleDict dict({{"a", nn::Tanh().ptr()}, {"b", nn::Linear(1, 1).ptr()}});
  CHECK(dict->repr() == "ModuleDict(\n  (a): Tanh()\n  (b): Linear(in_features=1, out_features=1, bias=True)\n)");
  nn::ModuleList list{nn::Tanh(), nn::ReLU()};
  std::ostringstream printed;
  printed << list;
  CHECK(printed.str() == "ModuleList(\n  (0): Tanh()\n  (1): ReLU()\n)");
}

TEST_CASE("nn::Linear: forward is x W^T + b, with PyTorch's initialization bounds") {
  gd::manual_seed(0);
  nn::Linear lin(5, 3);
  double bound = 1 / std::sqrt(5.0);
  CHECK(lin->weight.sizes() == gd::IntArrayRef({3, 5}));
  CHECK(lin->weight.abs().max().item<double>() <= bound);
  CHECK(lin->bias.abs().max().item<double>() <= bound);
  CHECK(lin->weight.requires_grad());
  lin->to(gd::kFloat64);
  Tensor x = sample({4, 5}, -1, 1, 1);
  Tensor want = x.matmul(lin->weight.detach().t()) + lin->bias.detach();
  CHECK(value_mismatch(lin(x), want) == "");
  CHECK(error_of([&] { lin(sample({4, 6}, -1, 1, 2)); }) == "mat1 and mat2 shapes cannot be multiplied (4x6 and 5x3)");
  // The gradient reaches the parameters.
  lin(x).sum().backward();
  CHECK(value_mismatch(lin->bias.grad(), gd::full({3}, 4.0, gd::kFloat64)) == "");
  CHECK(value_mismatch(lin->weight.grad(), x.sum({0}).unsqueeze(0).expand({3, 5})) == "");
}

TEST_CASE("nn::Module: to(dtype) converts in place and keeps the tensors an optimizer holds") {
  nn::Sequential net(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1));
  std::vector<Tensor> held = net->parameters();
  net->to(gd::kFloat64);
  for (size_t i = 0; i < held.size(); ++i) {
    CHECK(held[i].dtype() == gd::kFloat64);
    CHECK(held[i].is_same(net->parameters()[i]));
    CHECK(held[i].requires_grad());
  }
  CHECK(net(gd::ones({2, 3}, gd::kFloat64)).dtype() == gd::kFloat64);
  CHECK(error_of([&] { net->to(gd::kInt64); }) ==
        "nn.Module.to only accepts floating point dtypes, but got desired dtype=int64");
}

TEST_CASE("nn::Module: state_dict round trip and load_state_dict errors (PyTorch's text)") {
  nn::Sequential a(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1, false));
  nn::Sequential b(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 1, false));
  b->load_state_dict(a->state_dict());
  for (const auto& item : a->state_dict()) CHECK(value_mismatch(item.value(), b->state_dict()[item.key()], 0, 0) == "");
  // The state_dict shares storage with the module.
  a->state_dict()["0.bias"].fill_(3.0);
  CHECK(value_mismatch(a->parameters()[1], gd::full({4}, 3.0)) == "");

  std::map<std::string, Tensor> bad{{"0.weight", gd::zeros({2, 3})}, {"junk", gd::zeros({1})},
                                    {"2.weight", gd::zeros({1, 4})}};
  CHECK(error_of([&] { b->load_state_dict(bad); }) ==
        "Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: \"0.bias\". \n\t"
        "Unexpected key(s) in state_dict: \"junk\". \n\tsize mismatch for 0.weight: copying a param with shape "
        "torch.Size([2, 3]) from checkpoint, the shape in current model is torch.Size([4, 3]).");
  // Non-strict loads what matches, but still refuses a wrong shape.
  std::map<std::string, Tensor> partial{{"2.weight", gd::ones({1, 4})}, {"junk", gd::zeros({1})}};
  b->load_state_dict(partial, /*strict=*/false);
  CHECK(value_mismatch(b->parameters()[2], gd::ones({1, 4})) == "");
}

TEST_CASE("nn::Module: train/eval, zero_grad, apply, registration errors") {
  Outer outer;
  CHECK(outer->is_training());
  outer->eval();
  for (const auto& m : outer->modules()) CHECK_FALSE(m->is_training());
  outer->train();
  CHECK(outer->encoder->is_training());

  outer->to(gd::kFloat64);
  outer(gd::ones({1, 2}, gd::kFloat64)).sum().backward();
  CHECK(outer->head->weight.grad().defined());
  outer->zero_grad(/*set_to_none=*/false);
  CHECK(value_mismatch(outer->head->weight.grad(), gd::zeros({1, 2}, gd::kFloat64)) == "");
  outer->zero_grad();
  CHECK_FALSE(outer->head->weight.grad().defined());

  int linears = 0;
  outer->apply([&](nn::Module& m) { linears += m.name() == "Linear"; });
  CHECK(linears == 2);

  nn::Module m;
  m.register_parameter("w", gd::zeros({1}));
  CHECK(error_of([&] { m.register_parameter("w", gd::zeros({1})); }) == "Parameter 'w' already defined");
  CHECK(error_of([&] { m.register_buffer("w", gd::zeros({1})); }) == "attribute 'w' already exists");
  CHECK(error_of([&] { m.register_parameter("a.b", gd::zeros({1})); }) ==
        "Parameter name must not contain a dot (got 'a.b')");
  // A non-persistent buffer is not in the state_dict.
  m.register_buffer("scratch", gd::zeros({2}), /*persistent=*/false);
  CHECK(keys_of(m.state_dict()) == std::vector<std::string>{"w"});
}

TEST_CASE("nn::Module: forward hooks and pre-hooks run through the holder and Sequential") {
  nn::Linear lin(2, 2);
  lin->to(gd::kFloat64);
  std::vector<std::string> calls;
  auto pre = lin->register_forward_pre_hook([&](nn::Module& m, const std::vector<Tensor>& in) {
    calls.push_back("pre " + m.name());
    return std::optional<std::vector<Tensor>>(std::vector<Tensor>{in[0] * 0.0});  // zero the input
  });
  auto post = lin->register_forward_hook([&](nn::Module&, const std::vector<Tensor>&, const Tensor& out) {
    calls.push_back("post");
    return std::optional<Tensor>(out + 1.0);
  });
  Tensor x = gd::ones({1, 2}, gd::kFloat64);
  // With a zero input the output is the bias, plus one from the post-hook.
  CHECK(value_mismatch(lin(x), lin->bias.detach().unsqueeze(0) + 1.0) == "");
  nn::Sequential seq(lin);
  seq(x);
  CHECK(calls == std::vector<std::string>{"pre Linear", "post", "pre Linear", "post"});
  // Calling forward directly bypasses hooks, as in PyTorch.
  lin->forward(x);
  CHECK(calls.size() == 4);
  pre.remove();
  post.remove();
  CHECK(value_mismatch(lin(x), x.matmul(lin->weight.detach().t()) + lin->bias.detach()) == "");
  CHECK(calls.size() == 4);
}

TEST_CASE("nn containers: indexing, typed access, ModuleList insert, ModuleDict update/pop") {
  nn::Sequential seq({{"fc", nn::Linear(2, 3)}, {"act", nn::ReLU()}});
  CHECK(keys_of(seq->named_parameters()) == std::vector<std::string>{"fc.weight", "fc.bias"});
  CHECK(seq->ptr<nn::LinearImpl>(0)->options.out_features_ == 3);
  CHECK(seq[-1]->name() == "ReLU");
  CHECK(error_of([&] { seq[2]; }) == "Index out of range: 2 for a Sequential of size 2");
  CHECK(error_of([&] { seq->ptr<nn::LinearImpl>(1); }) == "AnyModule: the module is a ReLU, not the requested type");

  nn::ModuleList list{nn::Linear(1, 1), nn::Tanh()};
  list->insert(1, nn::ReLU().ptr());
  CHECK(list->named_children().keys() == std::vector<std::string>{"0", "1", "2"});
  CHECK(list[1]->name() == "ReLU");
  CHECK(list[2]->name() == "Tanh");

  nn::ModuleDict dict;
  dict->update("a", nn::Linear(1, 2));
  dict->update("b", nn::Tanh());
  dict->update("a", nn::Linear(1, 3));  // replaced in place
  CHECK(dict->keys() == std::vector<std::string>{"a", "b"});
  CHECK(dict->ptr<nn::LinearImpl>("a")->options.out_features_ == 3);
  CHECK(dict->pop("a")->name() == "Linear");
  CHECK(dict->keys() == std::vector<std::string>{"b"});
  CHECK(error_of([&] { dict["zzz"]; }) == "Submodule 'zzz' is not defined");  // libtorch's message
}

TEST_CASE("loss modules call their functional form and carry weights as buffers") {
  Tensor logits = sample({4, 3}, -2, 2, 50);
  Tensor target = gd::tensor({0, 2, 1, 2}, gd::kInt64);
  Tensor weight = gd::tensor({1.0, 2.0, 0.5}, gd::kFloat32);
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(weight).label_smoothing(0.1));
  CHECK(ce->repr() == "CrossEntropyLoss()");  // as PyTorch prints it
  CHECK(keys_of(ce->named_buffers()) == std::vector<std::string>{"weight"});
  ce->to(gd::kFloat64);  // the weight follows the module's dtype
  CHECK(ce->options.weight().dtype() == gd::kFloat64);
  Tensor want = nn::functional::cross_entropy(
      logits, target, nn::functional::CrossEntropyFuncOptions().weight(weight.to(gd::kFloat64)).label_smoothing(0.1));
  CHECK(value_mismatch(ce(logits, target), want) == "");
  nn::MSELoss mse(gd::nn::Reduction::Sum);
  Tensor y = sample({4, 3}, -1, 1, 51);
  CHECK(value_mismatch(mse(logits, y), (logits - y).square().sum()) == "");
  CHECK(nn::BCEWithLogitsLoss()->name() == "BCEWithLogitsLoss");
}

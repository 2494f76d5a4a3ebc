// libtorch behaviours of indexing, tensor(), TensorOptions and a few tensor
// functions that libtorch's own C++ API tests rely on: our cases, one per fix.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "data/array_ref.h"
#include "engine/warning.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
using gd::Tensor;
using gd::indexing::Ellipsis;
using gd::indexing::INDEX_MAX;
using gd::indexing::INDEX_MIN;
using gd::indexing::None;
using gd::indexing::Slice;
using gd::indexing::TensorIndex;
using gd::testing::error_of;
using gd::testing::shape_value_mismatch;
using gd::testing::values_of;

namespace {

template <class T>
std::string printed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Collects the warnings raised while it lives.
class WarningCollector : public gd::WarningHandler {
 public:
  WarningCollector() : previous_(gd::Warning::get_warning_handler()) { gd::Warning::set_warning_handler(this); }
  ~WarningCollector() override { gd::Warning::set_warning_handler(previous_); }
  void process(const gd::SourceLocation&, const std::string& msg, bool) override { messages.push_back(msg); }
  std::vector<std::string> messages;

 private:
  gd::WarningHandler* previous_;
};

}  // namespace

TEST_CASE("indexing: x.index({\"...\"}) and x.index({Slice()}) are new views, never x itself") {
  Tensor x = gd::arange(6.0).view({2, 3}).t();
  Tensor all = x.index({"..."});
  CHECK_FALSE(all.is_same(x));
  CHECK(all.data_ptr() == x.data_ptr());
  CHECK(all.strides() == x.strides());
  CHECK_FALSE(x.index({Slice()}).is_same(x));
  Tensor scalar = gd::tensor(5.0);
  CHECK_FALSE(scalar.index({Ellipsis}).is_same(scalar));
}

TEST_CASE("indexing: a lone integer index of a 0-dim tensor is libtorch's 'invalid index' error") {
  Tensor x = gd::tensor(10);
  CHECK(error_of([&] { x.index({0}); }) ==
        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a "
        "0-dim tensor to a number");
  CHECK(error_of([&] { x.index({0, 0}); }) == "too many indices for tensor of dimension 0");
}

TEST_CASE("indexing: each uint8 mask of an index or index_put_ call warns once, as libtorch") {
  Tensor v = gd::zeros({5, 3});
  Tensor rows = gd::tensor({1, 0, 1, 1, 0}, gd::kUInt8), cols = gd::tensor({1, 1, 1}, gd::kUInt8);
  WarningCollector warnings;
  CHECK(v.index({rows, cols}).sizes() == gd::IntArrayRef({3}));
  v.index_put_({rows}, gd::tensor(1.0f));
  CHECK(v.index({rows.to(gd::kBool)}).sum().item<double>() == 9);  // bool masks do not warn
  REQUIRE(warnings.messages.size() == 3);
  CHECK(warnings.messages[0] ==
        "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
}

TEST_CASE("indexing: Slice bounds and printing as libtorch") {
  Slice s(1, 2, 3);
  CHECK(s.start() == 1);
  CHECK(s.stop() == 2);
  CHECK(s.step() == 3);
  CHECK(printed(s) == "1:2:3");
  CHECK(Slice().start() == 0);
  CHECK(Slice().stop() == INDEX_MAX);
  CHECK(Slice().step() == 1);
  CHECK(Slice(None, None, -1).start() == INDEX_MAX);
  CHECK(Slice(None, None, -1).stop() == INDEX_MIN);
  CHECK(error_of([] { Slice(0, 1, 0); }) == "slice step cannot be zero");
  Tensor x = gd::arange(10.0);
  CHECK(values_of(x.index({Slice(7)})) == std::vector<double>{7, 8, 9});
  CHECK(values_of(x.index({Slice(None, 2)})) == std::vector<double>{0, 1});
  CHECK(values_of(x.index({Slice(-3, None, 2)})) == std::vector<double>{7, 9});
}

TEST_CASE("indexing: TensorIndex tells its kind and prints as libtorch") {
  std::vector<TensorIndex> indices = {None, "...", Ellipsis, 2, true, Slice(1, None, 2), gd::tensor({1, 2})};
  CHECK(indices[0].is_none());
  CHECK(indices[1].is_ellipsis());
  CHECK(indices[2].is_ellipsis());
  CHECK(indices[3].is_integer());
  CHECK(indices[3].integer() == 2);
  CHECK(indices[4].is_boolean());
  CHECK(indices[4].boolean());
  CHECK(indices[5].is_slice());
  CHECK(indices[5].slice().stop() == INDEX_MAX);
  CHECK(indices[6].is_tensor());
  CHECK(indices[6].tensor().equal(gd::tensor({1, 2})));
  CHECK_FALSE(indices[6].is_integer());
  indices.pop_back();
  CHECK(printed(indices) == "(None, ..., ..., 2, true, 1:9223372036854775807:2)");
  CHECK(printed(std::vector<TensorIndex>{Slice(None, None, -1)}) ==
        "(9223372036854775807:-9223372036854775808:-1)");
}

TEST_CASE("indexing: index / index_put_ with optional index tensors, as ATen's") {
  Tensor x = gd::arange(12.0).view({3, 4});
  Tensor rows = gd::tensor({2, 0});
  CHECK(gd::index(x, {rows}).equal(x.index({rows})));
  // An empty index takes the whole dim.
  CHECK(gd::index(x, {std::nullopt, gd::tensor({3})}).equal(x.index({Slice(), gd::tensor({3})})));
  Tensor y = x.clone();
  Tensor& same = gd::index_put_(y, {rows}, gd::ones({4}), /*accumulate=*/true);
  CHECK(same.is_same(y));
  CHECK(values_of(y.index({2})) == std::vector<double>{9, 10, 11, 12});
  CHECK(values_of(y.index({1})) == std::vector<double>{4, 5, 6, 7});
}

TEST_CASE("tensor(): ArrayRef and other contiguous lists of numbers, with libtorch's dtypes") {
  CHECK(gd::tensor(gd::ArrayRef<int>({1, 2, 3})).dtype() == gd::kInt64);
  CHECK(gd::tensor(gd::ArrayRef<double>({1.5, 2.5})).dtype() == gd::kFloat32);
  CHECK(gd::tensor(gd::ArrayRef<bool>({true, false})).dtype() == gd::kBool);
  CHECK(gd::tensor(gd::ArrayRef<int8_t>({1, -1})).dtype() == gd::kInt8);
  std::array<float, 3> values = {1.5f, 2.25f, 3.125f};
  Tensor t = gd::tensor(values, gd::kFloat64);
  CHECK(values_of(t) == std::vector<double>{1.5, 2.25, 3.125});
  CHECK(printed(gd::TensorDataContainer(gd::ArrayRef<double>({1.1, 2.2}))) == "{1.1, 2.2}");
}

TEST_CASE("tensor(): TensorDataContainer's accessors throw libtorch's messages on the wrong kind") {
  gd::TensorDataContainer number(1.5), list({1.5, 2.5}), values(std::vector<double>{1.5, 2.5});
  CHECK(number.is_scalar());
  CHECK(number.scalar().to_double() == 1.5);
  CHECK(list.is_init_list());
  CHECK(list.init_list().size() == 2);
  CHECK(values.is_tensor());
  CHECK(values.tensor().numel() == 2);
  CHECK(error_of([&] { number.init_list(); }) ==
        "Can only call `init_list()` on a TensorDataContainer that has `is_init_list() == true`");
  CHECK(error_of([&] { list.tensor(); }) ==
        "Can only call `tensor()` on a TensorDataContainer that has `is_tensor() == true`");
  CHECK(error_of([&] { values.scalar(); }) ==
        "Can only call `scalar()` on a TensorDataContainer that has `is_scalar() == true`");
}

TEST_CASE("var_mean / std_mean as PyTorch's") {
  Tensor x = gd::tensor({{1., 2., 4.}, {3., 7., -1.}}, gd::kFloat64);
  // values from PyTorch 1.13: torch.var_mean(x, 0), torch.std_mean(x, 1, unbiased=False), torch.var_mean(x)
  auto [v0, m0] = gd::var_mean(x, std::vector<int64_t>{0});
  CHECK(shape_value_mismatch(v0, {2.0, 12.5, 12.5}, {3}) == "");
  CHECK(shape_value_mismatch(m0, {2.0, 4.5, 1.5}, {3}) == "");
  auto [s1, m1] = gd::std_mean(x, {1}, false);
  CHECK(shape_value_mismatch(s1, {1.247219128924647, 3.265986323710904}, {2}, 1e-12) == "");
  CHECK(shape_value_mismatch(m1, {7.0 / 3, 3.0}, {2}, 1e-12) == "");
  auto [v, m] = gd::var_mean(x);
  CHECK(shape_value_mismatch(v, {7.466666666666667}, {}, 1e-12) == "");
  CHECK(shape_value_mismatch(m, {8.0 / 3}, {}, 1e-12) == "");
  auto [sk, mk] = gd::std_mean(x, std::vector<int64_t>{1}, 1, /*keepdim=*/true);
  CHECK(shape_value_mismatch(sk, {1.5275252316519468, 4.0}, {2, 1}, 1e-12) == "");
  CHECK(mk.sizes() == gd::IntArrayRef({2, 1}));
}

TEST_CASE("_reshape_alias is as_strided at the tensor's own offset, with its gradient") {
  Tensor x = gd::arange(9.0).view({3, 3});
  CHECK(gd::_reshape_alias(x, {2, 2}, {1, 2}).equal(gd::as_strided(x, {2, 2}, {1, 2})));
  Tensor row = x[1];
  CHECK(values_of(gd::_reshape_alias(row, {3}, {1})) == std::vector<double>{3, 4, 5});
  Tensor y = gd::tensor({1., 2., 3., 4.}, gd::kFloat64).requires_grad_();
  gd::_reshape_alias(y * y, {2, 2}, {2, 1}).sum().backward();
  CHECK(values_of(y.grad()) == std::vector<double>{2, 4, 6, 8});
}

TEST_CASE("to(options) accepts requires_grad(false) and refuses requires_grad(true), as libtorch") {
  Tensor x = gd::zeros({2}, gd::requires_grad());
  CHECK(x.to(gd::TensorOptions().requires_grad(false)).requires_grad());
  CHECK(x.to(gd::TensorOptions().dtype(gd::kFloat64).requires_grad(false)).dtype() == gd::kFloat64);
  CHECK(error_of([&] { x.to(gd::TensorOptions().requires_grad(true)); }) ==
        "to(options) expects unset requires_grad flag, but got options.requires_grad set as true");
}

TEST_CASE("requires_grad_ on a const handle and get_device, as libtorch") {
  const Tensor x = gd::zeros({2});
  x.requires_grad_(true);
  CHECK(x.requires_grad());
  const Tensor n = gd::zeros({2}, gd::kInt64);
  CHECK(error_of([&] { n.requires_grad_(true); }).find("floating point") != std::string::npos);
  CHECK(x.get_device() == -1);
}

TEST_CASE("set_default_dtype_unchecked takes an integer dtype, as libtorch's C++ set_default_dtype") {
  const gd::ScalarType before = gd::get_default_dtype();
  CHECK_FALSE(error_of([] { gd::set_default_dtype(gd::kInt32); }).empty());  // the Python-like one refuses
  gd::set_default_dtype_unchecked(gd::kInt32);
  CHECK(gd::TensorOptions().dtype() == gd::kInt32);
  CHECK(gd::ones({2}).dtype() == gd::kInt32);
  gd::set_default_dtype_unchecked(before);
  CHECK(gd::ones({2}).dtype() == before);
}

TEST_CASE("TensorOptions: device strings, device_index and libtorch's Backend") {
  CHECK(gd::Device("cpu:0") == gd::Device(gd::kCPU, 0));
  CHECK(gd::Device("cuda:12").index() == 12);
  for (const char* bad : {"", "cud:1", "cuda:", "cpu::1", ":1", "3", "tpu:4", "cuda:1x"})
    CHECK_FALSE(error_of([&] { gd::Device d(bad); }).empty());
  gd::TensorOptions options("cpu:0");
  CHECK(options.device() == gd::Device(gd::kCPU, 0));
  CHECK(gd::device_index(1).device() == gd::Device(gd::kCUDA, 1));
  gd::TensorOptions chained = gd::dtype(gd::kUInt8).layout(gd::kSparse).device(gd::kCUDA, 2).device_index(3);
  CHECK(chained.device() == gd::Device(gd::kCUDA, 3));
  CHECK(chained.dtype() == gd::kUInt8);
  gd::TensorOptions sparse = gd::backend_options(gd::Backend::SparseCPU, gd::kFloat64);
  CHECK(sparse.layout() == gd::kSparse);
  CHECK(sparse.device().is_cpu());
  CHECK(sparse.dtype() == gd::kFloat64);
  CHECK(gd::backend_options(gd::Backend::CUDA, gd::kFloat32).device().is_cuda());
}

TEST_CASE("var_mean, std_mean and _reshape_alias pass float64 gradcheck and gradgradcheck") {
  Tensor x = gd::tensor({{0.3, -1.2, 2.0}, {0.7, 1.1, -0.4}}, gd::kFloat64).requires_grad_();
  auto var_mean_fn = [](const std::vector<Tensor>& in) {
    auto [v, m] = gd::var_mean(in[0], std::vector<int64_t>{1});
    return std::vector<Tensor>{v, m};
  };
  auto std_mean_fn = [](const std::vector<Tensor>& in) {
    auto [s, m] = gd::std_mean(in[0], std::vector<int64_t>{0}, 1, /*keepdim=*/true);
    return std::vector<Tensor>{s, m};
  };
  auto alias_fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gd::_reshape_alias(in[0] * in[0], {3, 2}, {1, 3})};
  };
  for (const gd::autograd::TensorFunction& fn : {gd::autograd::TensorFunction(var_mean_fn),
                                                 gd::autograd::TensorFunction(std_mean_fn),
                                                 gd::autograd::TensorFunction(alias_fn)}) {
    CHECK(gd::autograd::gradcheck(fn, {x}));
    CHECK(gd::autograd::gradgradcheck(fn, {x}));
  }
}

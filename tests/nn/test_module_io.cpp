// Module::save / Module::load: state_dict through safetensors files, bit-exact
// round trips (NaN payloads and -0.0 included), strict-mode errors, and a
// file of PyTorch-named weights (written from a PyTorch model, see
// data/make_pytorch_mlp.py) loading into the matching gradiens model.
#include <doctest/doctest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace nn = gradiens::nn;
namespace fs = std::filesystem;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::tensor_of;
using gd::testing::value_mismatch;

namespace {

fs::path scratch_file(const std::string& stem) {
  static int counter = 0;
  return fs::temp_directory_path() /
         ("gradiens_module_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + stem);
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.element_size());
}

class NetImpl : public nn::Module {
 public:
  NetImpl() {
    body = register_module("body", nn::Sequential(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 2)));
    register_buffer("steps", gd::zeros({1}, gd::kInt64));
    register_buffer("scratch", gd::zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) { return body->forward(x); }
  nn::Sequential body{nullptr};
};
GRADIENS_MODULE(Net);

}  // namespace

TEST_CASE("Module::save/load: a round trip is bit-exact, NaN payloads and -0.0 included") {
  Net saved, restored;
  {
    gd::NoGradGuard no_grad;
    float* w = static_cast<float*>(saved->body->ptr<nn::LinearImpl>(0)->weight.data_ptr());
    w[0] = std::bit_cast<float>(uint32_t{0x7fc01234});  // quiet NaN with a payload
    w[1] = std::bit_cast<float>(uint32_t{0xffa00001});  // signalling NaN, negative
    w[2] = -0.0f;
    w[3] = std::bit_cast<float>(uint32_t{0x00000001});  // smallest subnormal
    saved->buffer("steps").fill_(123456789012LL);
  }
  fs::path path = scratch_file("net.safetensors");
  saved->save(path.string());
  restored->load(path.string());
  auto want = saved->state_dict(), got = restored->state_dict();
  REQUIRE(got.keys() == want.keys());
  for (const auto& item : want) CHECK_MESSAGE(bytes_of(got[item.key()]) == bytes_of(item.value()), item.key());
  // The file holds exactly the state_dict: PyTorch's names, the non-persistent buffer left out.
  auto file = gd::load_with_metadata(path.string());
  std::vector<std::string> names;
  for (const auto& [name, t] : file.tensors) names.push_back(name);
  CHECK(names == std::vector<std::string>{"body.0.bias", "body.0.weight", "body.2.bias", "body.2.weight", "steps"});
  CHECK(file.metadata == std::map<std::string, std::string>{{"format", "pt"}});
  fs::remove(path);
}

TEST_CASE("Module::load: values convert to the module's dtype; wrong files are errors") {
  nn::Linear lin(2, 2);
  fs::path path = scratch_file("lin64.safetensors");
  // A float64 file loads into the float32 module, converted as PyTorch's copy_.
  gd::save({{"weight", tensor_of({0.5, -1.25, 2.0, 1e-3}, {2, 2})}, {"bias", tensor_of({3.0, -4.0}, {2})}},
           path.string());
  lin->load(path.string());
  CHECK(lin->weight.dtype() == gd::kFloat32);
  CHECK(value_mismatch(lin->weight, tensor_of({0.5, -1.25, 2.0, 1e-3}, {2, 2}, gd::kFloat32)) == "");
  CHECK(value_mismatch(lin->bias, tensor_of({3.0, -4.0}, {2}, gd::kFloat32)) == "");

  // Strict loading names the missing, unexpected and wrong-shaped keys (PyTorch's text).
  gd::save({{"weight", gd::zeros({3, 2})}, {"extra", gd::zeros({1})}}, path.string());
  CHECK(error_of([&] { lin->load(path.string()); }) ==
        "Error(s) in loading state_dict for Linear:\n"
        "\tMissing key(s) in state_dict: \"bias\". \n"
        "\tUnexpected key(s) in state_dict: \"extra\". \n"
        "\tsize mismatch for weight: copying a param with shape torch.Size([3, 2]) from checkpoint, the shape in "
        "current model is torch.Size([2, 2]).");
  fs::remove(path);
  CHECK(error_of([&] { lin->load(path.string()); }).find(path.string()) != std::string::npos);
}

TEST_CASE("Module::load: PyTorch-named weights from a PyTorch model give PyTorch's outputs") {
  // data/pytorch_mlp.safetensors holds the state_dict of PyTorch's
  // Sequential(Linear(4, 8), BatchNorm1d(8), Tanh(), Linear(8, 3)) after two
  // training batches (so the running statistics are not the defaults).
  nn::Sequential model(nn::Linear(4, 8), nn::BatchNorm1d(8), nn::Tanh(), nn::Linear(8, 3));
  model->load(std::string(GRADIENS_NN_TEST_DATA) + "/pytorch_mlp.safetensors");
  CHECK(model->ptr<nn::BatchNorm1dImpl>(1)->num_batches_tracked.item<int64_t>() == 2);
  model->eval();
  Tensor x = tensor_of({0.5, -1.0, 2.0, 0.25, -0.75, 0.1, 0.0, 1.5, 1.25, 2.5, -0.5, -2.0}, {3, 4}, gd::kFloat32);
  // PyTorch 1.13's model(x) in eval mode, printed by data/make_pytorch_mlp.py.
  Tensor want = tensor_of({0.364354134, 0.420775473, -0.342013121, -0.371246934, -0.399814278, -0.0371189713,
                           -0.435682893, -0.232797742, 0.199999645},
                          {3, 3}, gd::kFloat32);
  CHECK(value_mismatch(model->forward(x), want, 1e-5, 1e-6) == "");

  // Saved again by gradiens, the file has the same names and values.
  fs::path path = scratch_file("again.safetensors");
  model->save(path.string());
  auto ours = gd::load(path.string());
  auto theirs = gd::load(std::string(GRADIENS_NN_TEST_DATA) + "/pytorch_mlp.safetensors");
  REQUIRE(ours.size() == theirs.size());
  for (const auto& [name, t] : theirs) {
    REQUIRE_MESSAGE(ours.count(name) == 1, name);
    CHECK_MESSAGE(bytes_of(ours.at(name)) == bytes_of(t), name);
  }
  fs::remove(path);
}

// A libtorch program, compiled through the drop-in <torch/torch.h>: the torch,
// at, c10 and torch::nn::functional spellings, TORCH_MODULE, TORCH_CHECK,
// c10::str, c10::irange and c10::optional, mapped onto gradiens. Expected
// values are closed forms.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace F = torch::nn::functional;

namespace {

struct NetImpl : torch::nn::Cloneable<NetImpl> {
  explicit NetImpl(int64_t width) : width(width) { reset(); }
  void reset() override {
    fc = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(width, 1).bias(false)));
  }
  torch::Tensor forward(torch::Tensor x) { return F::relu(fc(x)); }
  int64_t width;
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("torch::, at:: and c10:: name gradiens' tensors, dtypes and devices") {
  torch::Tensor x = torch::ones({2, 3}, torch::kFloat64);
  at::Tensor y = x * 2;
  CHECK(y.sum().item<double>() == 12.0);
  CHECK(y.scalar_type() == at::ScalarType::Double);
  torch::Dtype dtype = torch::kFloat;
  CHECK(torch::zeros({1}, dtype).dtype() == c10::ScalarType::Float);
  CHECK(x.device() == c10::Device(torch::kCPU));
  CHECK(torch::TensorOptions().dtype(torch::kLong).dtype() == torch::kInt64);
  c10::optional<int64_t> none = c10::nullopt;
  CHECK(!none.has_value());
}

TEST_CASE("TORCH_CHECK throws c10::Error with the message parts, or libtorch's default sentence") {
  CHECK(message_of([] { TORCH_CHECK(1 + 1 == 3, "expected ", 3, ", got ", 2); }) == "expected 3, got 2");
  CHECK(message_of([] { TORCH_CHECK(false); }) == "Expected false to be true, but got false.");
  CHECK(message_of([] { TORCH_CHECK(true, "never"); }) == "");
  CHECK(c10::str("a", 1, 'b', 2.5) == "a1b2.5");
  CHECK(c10::str() == "");
}

TEST_CASE("c10::irange counts from 0 or a start, and is empty when the end is before it") {
  std::vector<int64_t> seen;
  for (const auto i : c10::irange(3)) seen.push_back(i);
  for (const auto i : c10::irange(5, 7)) seen.push_back(i);
  for (const auto i : c10::irange(4, 2)) seen.push_back(i);
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 5, 6});
}

TEST_CASE("TORCH_MODULE holders, nn::Cloneable and F:: work as in libtorch") {
  Net net(2);
  net->fc->weight.detach().copy_(torch::tensor({{1.0f, -2.0f}}));
  const torch::Tensor x = torch::tensor({{3.0f, 1.0f}, {1.0f, 1.0f}});
  const torch::Tensor out = net(x);  // relu([3 - 2, 1 - 2]) = [1, 0]
  CHECK(out.flatten().allclose(torch::tensor({1.0f, 0.0f})));
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
  REQUIRE(copy != nullptr);
  CHECK(copy->fc->weight.allclose(net->fc->weight));
  CHECK(copy->fc->weight.data_ptr() != net->fc->weight.data_ptr());
  CHECK(net->as<NetImpl>() == net.get());
}

#define COUNT_TYPE(cpp_type, name) ++count;
TEST_CASE("AT_FORALL_SCALAR_TYPES_AND3 enumerates the dtypes gradiens has") {
  int count = 0;
  AT_FORALL_SCALAR_TYPES_AND3(Bool, Half, BFloat16, COUNT_TYPE)
  CHECK(count == 8);  // Byte, Int, Long, Float, Double + Bool, Half, BFloat16
}
#undef COUNT_TYPE

TEST_CASE("c10::str prints modules in libtorch's format, children indented") {
  // libtorch's strings for these modules (its test/cpp/api expectations).
  CHECK(c10::str(torch::nn::Linear(3, 4)) == "torch::nn::Linear(in_features=3, out_features=4, bias=true)");
  torch::nn::Sequential sequential(torch::nn::Linear(2, 3), torch::nn::Flatten());
  CHECK(c10::str(sequential) ==
        "torch::nn::Sequential(\n"
        "  (0): torch::nn::Linear(in_features=2, out_features=3, bias=true)\n"
        "  (1): torch::nn::Flatten(start_dim=1, end_dim=-1)\n"
        ")");
  CHECK(c10::str(torch::nn::LSTM(torch::nn::LSTMOptions(128, 64).num_layers(3).dropout(0.2))) ==
        "torch::nn::LSTM(input_size=128, hidden_size=64, num_layers=3, bias=true, batch_first=false, dropout=0.2, "
        "bidirectional=false)");
  // A module given no name prints name(): its class without the anonymous namespace and "Impl".
  CHECK(c10::str(Net(2)) == "Net(\n  (fc): torch::nn::Linear(in_features=2, out_features=1, bias=false)\n)");
}

TEST_CASE("TypeMeta, default dtype, nonlinearity tags and TORCH_WARN under libtorch's names") {
  CHECK(torch::typeMetaToScalarType(torch::get_default_dtype()) == torch::kFloat);
  torch::set_default_dtype(caffe2::TypeMeta::Make<double>());
  CHECK(torch::ones({1}).dtype() == torch::kDouble);
  torch::set_default_dtype(torch::scalarTypeToTypeMeta(torch::kFloat));
  CHECK(torch::ones({1}).dtype() == torch::kFloat);
  CHECK(torch::nn::init::calculate_gain(torch::kTanh) == doctest::Approx(5.0 / 3.0));
  struct Capture : c10::WarningHandler {
    void process(const c10::SourceLocation&, const std::string& msg, bool) override { messages.push_back(msg); }
    std::vector<std::string> messages;
  } capture;
  c10::Warning::set_warning_handler(&capture);
  for (int i = 0; i < 2; ++i) {
    TORCH_WARN("warned ", i);
    TORCH_WARN_ONCE("once");
  }
  c10::Warning::set_warning_handler(nullptr);
  CHECK(capture.messages == std::vector<std::string>{"warned 0", "once", "warned 1"});
}

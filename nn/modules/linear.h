// Linear (y = x W^T + b, PyTorch's default initialization), LazyLinear (its
// in_features taken from the first input) and Identity.
#pragma once

#include "nn/cloneable.h"
#include "nn/module.h"

namespace gradiens::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit LinearImpl(const LinearOptions& options);

  // Re-draws weight and bias as PyTorch's reset_parameters: kaiming_uniform_
  // with a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in)) for both.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;

  LinearOptions options;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined without bias
};
GRADIENS_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  BilinearOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in1_features_, in2_features_, out_features_;
  bool bias_ = true;
};

// y = x1^T A x2 + b (functional::bilinear): weight [out, in1, in2], bias [out].
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features)) {}
  explicit BilinearImpl(const BilinearOptions& options);

  // PyTorch's reset_parameters: weight and bias from U(-1/sqrt(in1), 1/sqrt(in1)).
  void reset_parameters();
  Tensor forward(const Tensor& input1, const Tensor& input2);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;

  BilinearOptions options;
  Tensor weight;  // [out_features, in1_features, in2_features]
  Tensor bias;    // [out_features], undefined without bias
};
GRADIENS_MODULE(Bilinear);

// A Linear whose in_features is the last dim of the first input it sees. Until
// then it has no parameters: parameters() and state_dict() are empty, so an
// optimizer (or load_state_dict) must come after a first forward, PyTorch's
// "dry run" (e.g. on one batch under NoGradGuard). The parameters are then
// created with Linear's initialization, in the dtype and on the device last
// given to to() (on it or on a module holding it), and from there on it
// computes and prints as a Linear.
class LazyLinearImpl : public Module {
 public:
  explicit LazyLinearImpl(int64_t out_features, bool bias = true);

  bool has_uninitialized_params() const { return !weight.defined(); }
  // Linear's reset_parameters once initialized; nothing before.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  // Before the first forward these record the dtype/device for the parameters to come.
  void to(ScalarType dtype) override;
  void to(Device device) override;

  LinearOptions options;  // in_features_ is 0 until the first forward
  Tensor weight;          // undefined until the first forward, then [out_features, in_features]
  Tensor bias;

 private:
  void initialize_parameters(const Tensor& input);
  TensorOptions pending_options_;
};
GRADIENS_MODULE(LazyLinear);

// Returns its input: a placeholder layer (e.g. an optional block switched off).
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  IdentityImpl() : Cloneable("Identity") {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input) { return input; }
};
GRADIENS_MODULE(Identity);

}  // namespace gradiens::nn

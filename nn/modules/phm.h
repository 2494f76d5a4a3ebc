// PHMLinear: the parameterized hypercomplex multiplication layer of Zhang et al.
// (ICLR 2021), a Linear whose weight is W = sum_i kron(A_i, S_i).
#pragma once

#include <cstdint>

#include "nn/functional/phm.h"
#include "nn/cloneable.h"
#include "nn/module.h"

namespace gradiens::nn {

struct PHMLinearOptions {
  PHMLinearOptions(int64_t in_features, int64_t out_features, int64_t n)
      : in_features_(in_features), out_features_(out_features), n_(n) {}
  PHMLinearOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  int64_t in_features_, out_features_, n_;
  bool bias_ = true;
};

// y = x W^T + b for x [..., in_features], with W [out, in] = sum_{i<n} kron(A[i], S[i]):
// n^3 + in * out / n (+ out) parameters instead of in * out (+ out). n must divide
// both in_features and out_features. forward takes the faster of building W and
// the structured product for the input's batch size (Note [PHM path choice] in
// nn/functional/phm.h); both give the same values and gradients.
class PHMLinearImpl : public Cloneable<PHMLinearImpl> {
 public:
  PHMLinearImpl(int64_t in_features, int64_t out_features, int64_t n, bool bias = true)
      : PHMLinearImpl(PHMLinearOptions(in_features, out_features, n).bias(bias)) {}
  explicit PHMLinearImpl(const PHMLinearOptions& options);

  // Note [PHM initialization]
  // W's entries are sums of n products A[i,a,b] S[i,d,e] of independent zero-mean
  // draws, so Var(W) = n Var(A) Var(S). Each A_i gets xavier_uniform_ (n x n:
  // U(-sqrt(3/n), sqrt(3/n)), variance 1/n) and S and the bias Linear's
  // U(-1/sqrt(in), 1/sqrt(in)) (variance 1/(3 in)), so Var(W) = 1/(3 in), the
  // variance of a PyTorch Linear weight: the layer's outputs have Linear's
  // scale at initialization.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  // The W that forward uses, [out_features, in_features] (differentiable).
  Tensor weight() const;
  std::string extra_repr() const override;

  PHMLinearOptions options;
  Tensor A;     // [n, n, n]
  Tensor S;     // [n, out_features / n, in_features / n]
  Tensor bias;  // [out_features], undefined without bias
};
GRADIENS_MODULE(PHMLinear);

}  // namespace gradiens::nn

// Flatten (merges the dims start_dim..end_dim into one) and Unflatten (splits
// one dim into the given sizes), as PyTorch's nn.Flatten and nn.Unflatten.
#pragma once

#include <string>
#include <vector>

#include "nn/cloneable.h"
#include "nn/module.h"

namespace gradiens::nn {

struct FlattenOptions {
  FlattenOptions& start_dim(int64_t v) {
    start_dim_ = v;
    return *this;
  }
  FlattenOptions& end_dim(int64_t v) {
    end_dim_ = v;
    return *this;
  }
  int64_t start_dim_ = 1;  // keeps the batch dim, unlike torch.flatten's 0
  int64_t end_dim_ = -1;
};

class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Cloneable("Flatten"), options(options) {}
  FlattenImpl(int64_t start_dim, int64_t end_dim = -1)
      : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;
  FlattenOptions options;
};
GRADIENS_MODULE(Flatten);

struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  int64_t dim_;
  std::vector<int64_t> sizes_;  // one entry may be -1, inferred from the others
};

namespace functional {
// A view of `input` with dim replaced by `sizes`, with PyTorch's errors.
Tensor unflatten(const Tensor& input, int64_t dim, IntArrayRef sizes);
}  // namespace functional

class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  explicit UnflattenImpl(const UnflattenOptions& options) : Cloneable("Unflatten"), options(options) {}
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;
  UnflattenOptions options;
};
GRADIENS_MODULE(Unflatten);

}  // namespace gradiens::nn

// Flatten and Unflatten: views over the engine's flatten and view.
#include "nn/modules/flatten.h"

#include <fmt/format.h>

#include <optional>
#include <ostream>

#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens::nn {

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim_, options.end_dim_); }

std::string FlattenImpl::extra_repr() const {
  return fmt::format("start_dim={}, end_dim={}", options.start_dim_, options.end_dim_);
}

void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::Flatten(start_dim={}, end_dim={})", options.start_dim_, options.end_dim_);
}

void UnflattenImpl::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::Unflatten(dim={}, unflattened_size={{{}}})", options.dim_,
                        fmt::join(options.sizes_, ", "));
}

namespace functional {

// The checks of PyTorch's infer_size, with unflatten's wording where PyTorch
// rewrites them (a size list that does not fit "doesn't multiply up").
Tensor unflatten(const Tensor& input, int64_t dim, IntArrayRef sizes) {
  GD_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  dim = wrap_dim(dim, input.dim());
  GD_CHECK(input.dim() > 0, fmt::format("Dimension specified as {} but tensor has no dimensions", dim));
  const int64_t size = input.size(dim);
  std::optional<size_t> inferred;
  int64_t product = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      GD_CHECK(!inferred, "unflatten got an unexpected error:\nonly one dimension can be inferred");
      inferred = i;
    } else {
      GD_CHECK(sizes[i] >= 0, fmt::format("invalid shape dimension {}", sizes[i]));
      product *= sizes[i];
    }
  }
  GD_CHECK(size == product || (inferred && product > 0 && size % product == 0),
           fmt::format("unflatten: Provided sizes {} don't multiply up to the size of dim {} ({}) in the input tensor",
                       shape_to_string(sizes), dim, size));
  GD_CHECK(!inferred || product != 0,
           fmt::format("cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 "
                       "can be any value and is ambiguous",
                       shape_to_string(sizes)));
  DimVector shape;
  for (int64_t d = 0; d < dim; ++d) shape.push_back(input.size(d));
  for (size_t i = 0; i < sizes.size(); ++i) shape.push_back(inferred == i ? size / product : sizes[i]);
  for (int64_t d = dim + 1; d < input.dim(); ++d) shape.push_back(input.size(d));
  return input.view(shape);
}

}  // namespace functional

Tensor UnflattenImpl::forward(const Tensor& input) { return functional::unflatten(input, options.dim_, options.sizes_); }

std::string UnflattenImpl::extra_repr() const {
  // Python prints the sizes as a tuple: (2, 3), and (6,) for one.
  std::string sizes;
  for (size_t i = 0; i < options.sizes_.size(); ++i) sizes += (i ? ", " : "") + std::to_string(options.sizes_[i]);
  if (options.sizes_.size() == 1) sizes += ",";
  return fmt::format("dim={}, unflattened_size=({})", options.dim_, sizes);
}

}  // namespace gradiens::nn

// AdaptiveLogSoftmaxWithLoss: PyTorch's formulas; the rows of each cluster are
// selected with masks (every cluster sees every row, the others' rows masked).
#include "nn/modules/adaptive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <set>

#include "engine/dims.h"
#include "engine/functions.h"
#include "nn/functional/activation.h"

namespace gradiens::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_)
    : Cloneable("AdaptiveLogSoftmaxWithLoss"), options(std::move(options_)) {
  reset();
}

void AdaptiveLogSoftmaxWithLossImpl::reset() {
  const std::vector<int64_t>& given = options.cutoffs();
  const std::set<int64_t> unique(given.begin(), given.end());
  GD_CHECK(!given.empty() && std::is_sorted(given.begin(), given.end()) && given.front() > 0 &&
               given.back() <= options.n_classes() - 1 && unique.size() == given.size(),
           "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each "
           "value is between 1 and n_classes-1");
  cutoffs = given;
  cutoffs.push_back(options.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module("head", Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const auto hidden = static_cast<int64_t>(std::floor(options.in_features() / std::pow(options.div_value(), i + 1)));
    const int64_t out = cutoffs[i + 1] - cutoffs[i];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hidden).bias(false)),
                               Linear(LinearOptions(hidden, out).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (const auto& cluster : *tail) {
    for (const auto& layer : cluster->children()) layer->as<LinearImpl>()->reset_parameters();
  }
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_in, const Tensor& target_in) {
  const int64_t target_dim = target_in.dim();
  if (target_dim == 1) {
    GD_CHECK(input_in.size(0) == target_in.size(0),
             "Input and target should have the same size in the batch dimension.");
    GD_CHECK(input_in.dim() == 2, "1D target tensor expects 2D input tensors, but found inputs with size " +
                                      shape_to_string(input_in.sizes()));
  } else if (target_dim == 0) {
    GD_CHECK(input_in.dim() == 1, "0D target tensor expects 1D input tensors, but found inputs with size " +
                                      shape_to_string(input_in.sizes()));
  } else {
    throw Error("0D or 1D target tensor expected, multi-target not supported");
  }
  const bool batched = target_dim > 0;
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  const Tensor target = batched ? target_in : target_in.unsqueeze(0);
  const int64_t batch = target.size(0);
  if (batch > 0) {
    const int64_t low = target.min().item<int64_t>(), high = target.max().item<int64_t>();
    GD_CHECK(low >= 0 && high < options.n_classes(),
             fmt::format("Target values should be in [0, {}], but values in range [{}, {}] were found. ",
                         options.n_classes() - 1, low, high));
  }
  // Each row's entry of the head: its class in the shortlist, or its cluster's index.
  Tensor gather_index = target.clone();
  Tensor output = zeros({batch}, input.options());
  for (int64_t i = 1; i <= n_clusters; ++i) {
    const int64_t low = cutoffs[i - 1], high = cutoffs[i];
    const Tensor in_cluster = logical_and(ge(target, low), lt(target, high));
    if (!in_cluster.any().item<bool>()) continue;
    gather_index = where(in_cluster, shortlist_size + i - 1, gather_index);
    const Tensor relative = where(in_cluster, target - low, 0).to(kInt64);
    const Tensor cluster_logprob = (*tail)[i - 1]->as<SequentialImpl>()->forward(input).log_softmax(1);
    const Tensor local = cluster_logprob.gather(1, relative.unsqueeze(1)).squeeze(1);
    output = output + where(in_cluster, local, 0.0);
  }
  const Tensor head_logprob = head(input).log_softmax(1);
  output = output + head_logprob.gather(1, gather_index.to(kInt64).unsqueeze(1)).squeeze(1);
  const double loss = (-output).mean().item<double>();
  return ASMoutput(batched ? output : output.squeeze(0), loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::full_log_prob(const Tensor& input, const Tensor& head_output) {
  const Tensor head_logprob = head_output.log_softmax(1);
  std::vector<Tensor> parts{head_logprob.slice(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    const Tensor cluster_logprob = (*tail)[i]->as<SequentialImpl>()->forward(input).log_softmax(1);
    parts.push_back(cluster_logprob + head_logprob.select(1, shortlist_size + i).unsqueeze(1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) { return full_log_prob(input, head(input)); }

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  const Tensor head_output = head(input);
  const Tensor output = head_output.argmax(1);
  const Tensor outside = ge(output, shortlist_size);
  if (!outside.any().item<bool>()) return output;
  // The rows whose best head entry is a cluster: the best class over all of them.
  return where(outside, full_log_prob(input, head_output).argmax(1), output);
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveLogSoftmaxWithLoss";
}

}  // namespace gradiens::nn

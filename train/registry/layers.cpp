// The layers a config's model may name: every layer of nn/ with its options,
// sizes that follow from the input derived, and Sequential nesting. Recurrent
// layers take the packed batch of sequences and hand on their last state.
#include <fmt/format.h>

#include "kernels/error.h"
#include "nn/modules/activation.h"
#include "nn/modules/batchnorm.h"
#include "nn/modules/conv.h"
#include "nn/modules/dropout.h"
#include "nn/modules/embedding.h"
#include "nn/modules/flatten.h"
#include "nn/modules/linear.h"
#include "nn/modules/normalization.h"
#include "nn/modules/phm.h"
#include "nn/modules/pooling.h"
#include "pinn/fourier.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"
#include "train/registry/sequence_encoder.h"

namespace gradiens::train {

namespace {

// A size that follows from the input: filled in when absent; a given value
// that disagrees is an error naming both.
int64_t derived_size(json& config, const std::string& key, int64_t actual, const std::string& path,
                     const std::string& source) {
  if (has(config, key) && integer(config, key) != actual)
    throw Error(fmt::format("{}: {} is {}, but {} is {}", join_path(path, key), key, integer(config, key), source,
                            actual));
  config[key] = actual;
  return actual;
}

const std::vector<int64_t>& shape_of(const LayerContext& context, size_t min_dims, const std::string& path,
                                     const std::string& layer, const std::string& expected) {
  if (context.sequences)
    throw Error(fmt::format("{}: a {} cannot take a batch of sequences; the first layer must be RNN, LSTM or GRU", path,
                            layer));
  if (context.sample_shape.size() < min_dims)
    throw Error(fmt::format("{}: a {} needs {} per sample, but its input has {} dimension{}", path, layer, expected,
                            context.sample_shape.size(), context.sample_shape.size() == 1 ? "" : "s"));
  return context.sample_shape;
}

// kernel_size, stride, padding, dilation: an integer or a pair.
TypePtr IntOrPair(double minimum) { return AnyOf({Integer(minimum), Array(Integer(minimum), 2, 2)}); }

nn::ExpandingArray<2> pair(const json& value) {
  if (value.is_array()) return nn::ExpandingArray<2>(std::vector<int64_t>{value[0].get<int64_t>(), value[1].get<int64_t>()});
  return nn::ExpandingArray<2>(value.get<int64_t>());
}

ObjectSpec spec(std::string name, std::string description) { return ObjectSpec(std::move(name), std::move(description)); }

// A layer without options.
template <class Holder>
void add_plain(Builders& b, const std::string& name, const std::string& description) {
  b.add(b.layers, kLayer, spec(name, description),
        LayerFactory([](json&, const std::string&, LayerContext&, bool&, const Builders&) { return nn::AnyModule(Holder()); }));
}

void add_containers(Builders& b) {
  ObjectSpec sequential = spec("Sequential", "the layers in order, each taking the previous one's output");
  sequential.add("layers", Array(Typed(kLayer), 1), "the layers").require();
  b.add(b.layers, kLayer, std::move(sequential),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool& updated, const Builders& builders) {
          nn::Sequential sequential;
          json& layers = config["layers"];
          for (size_t i = 0; i < layers.size(); ++i)
            sequential->push_back(builders.build_layer(layers[i], join_path(join_path(path, "layers"), i), context));
          updated = true;
          return nn::AnyModule(sequential);
        }));
}

void add_linear(Builders& b) {
  ObjectSpec linear = spec("Linear", "y = x W^T + b over the last dimension");
  linear.add("in_features", Integer(1), "input features; derived from the input").derive();
  linear.add("out_features", Integer(1), "output features").require();
  linear.add("bias", Bool(), "learn an additive bias").default_(true);
  b.add(b.layers, kLayer, std::move(linear),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 1, path, "Linear", "features");
          const int64_t in = derived_size(config, "in_features", shape.back(), path, "the input's last dimension");
          return nn::AnyModule(nn::Linear(nn::LinearOptions(in, integer(config, "out_features")).bias(flag(config, "bias"))));
        }));

  ObjectSpec lazy = spec("LazyLinear", "a Linear whose in_features come from the first input");
  lazy.add("out_features", Integer(1), "output features").require();
  lazy.add("bias", Bool(), "learn an additive bias").default_(true);
  b.add(b.layers, kLayer, std::move(lazy),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          shape_of(context, 1, path, "LazyLinear", "features");
          return nn::AnyModule(nn::LazyLinear(integer(config, "out_features"), flag(config, "bias")));
        }));

  ObjectSpec phm = spec("PHMLinear", "a Linear whose weight is a sum of n Kronecker products (n^3 + in*out/n parameters)");
  phm.add("in_features", Integer(1), "input features; derived from the input").derive();
  phm.add("out_features", Integer(1), "output features").require();
  phm.add("n", Integer(1), "the number of Kronecker products; divides in_features and out_features").require();
  phm.add("bias", Bool(), "learn an additive bias").default_(true);
  b.add(b.layers, kLayer, std::move(phm),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 1, path, "PHMLinear", "features");
          const int64_t in = derived_size(config, "in_features", shape.back(), path, "the input's last dimension");
          const int64_t out = integer(config, "out_features"), n = integer(config, "n");
          if (in % n != 0 || out % n != 0)
            throw Error(fmt::format("{}: n = {} must divide in_features ({}) and out_features ({})", join_path(path, "n"),
                                    n, in, out));
          return nn::AnyModule(nn::PHMLinear(nn::PHMLinearOptions(in, out, n).bias(flag(config, "bias"))));
        }));

  ObjectSpec fourier = spec("FourierFeatures", "[sin(2 pi x B), cos(2 pi x B)] with a fixed Gaussian B (a PINN's "
                            "input embedding for high frequencies)");
  fourier.add("in_features", Integer(1), "input features; derived from the input").derive();
  fourier.add("features", Integer(1), "columns of B; the output has twice as many").require();
  fourier.add("sigma", AnyOf({PositiveNumber(), Array(PositiveNumber(), 1)}),
              "the standard deviation of B's entries, or one per input feature (row of B)").default_(1.0);
  b.add(b.layers, kLayer, std::move(fourier),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 1, path, "FourierFeatures", "features");
          const int64_t in = derived_size(config, "in_features", shape.back(), path, "the input's last dimension");
          const int64_t features = integer(config, "features");
          if (!config["sigma"].is_array()) return nn::AnyModule(pinn::FourierFeatures(in, features, number(config, "sigma")));
          const std::vector<double> sigmas = config["sigma"].get<std::vector<double>>();
          if (static_cast<int64_t>(sigmas.size()) != in)
            throw Error(fmt::format("{}: sigma has {} values, but the input has {} features (give one per feature, or "
                                    "one number for all)", join_path(path, "sigma"), sigmas.size(), in));
          return nn::AnyModule(pinn::FourierFeatures(features, sigmas));
        }));

  ObjectSpec periodic = spec("PeriodicEmbedding", "each periodic coordinate x of period P becomes [cos(2 pi k x / P), "
                             "sin(2 pi k x / P)], k = 1 .. harmonics; the others pass through (a PINN's exact "
                             "periodic boundary condition)");
  periodic.add("periods", Array(Number(0), 1), "per input coordinate: its period, or 0 if it is not periodic").require();
  periodic.add("harmonics", Integer(1), "the harmonics k of each periodic coordinate").default_(1);
  b.add(b.layers, kLayer, std::move(periodic),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 1, path, "PeriodicEmbedding", "features");
          const std::vector<double> periods = config["periods"].get<std::vector<double>>();
          if (static_cast<int64_t>(periods.size()) != shape.back())
            throw Error(fmt::format("{}: periods has {} values, but the input has {} features (give one per "
                                    "feature, 0 for a feature that is not periodic)", join_path(path, "periods"),
                                    periods.size(), shape.back()));
          return nn::AnyModule(pinn::PeriodicEmbedding(periods, integer(config, "harmonics")));
        }));
}

void add_convolution_and_pooling(Builders& b) {
  ObjectSpec conv = spec("Conv2d", "2-D convolution over [C, H, W] samples");
  conv.add("in_channels", Integer(1), "input channels; derived from the input").derive();
  conv.add("out_channels", Integer(1), "output channels").require();
  conv.add("kernel_size", IntOrPair(1), "kernel size: k or [kh, kw]").require();
  conv.add("stride", IntOrPair(1), "stride").default_(1);
  conv.add("padding", AnyOf({Integer(0), Array(Integer(0), 2, 2), Enum({"same", "valid"})}),
           "zero padding: p, [ph, pw], \"same\" or \"valid\"").default_(0);
  conv.add("dilation", IntOrPair(1), "dilation").default_(1);
  conv.add("groups", Integer(1), "blocked connections from input to output channels").default_(1);
  conv.add("bias", Bool(), "learn an additive bias").default_(true);
  conv.add("padding_mode", Enum({"zeros", "reflect", "replicate", "circular"}), "how padding is filled").default_("zeros");
  b.add(b.layers, kLayer, std::move(conv),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 3, path, "Conv2d", "[channels, height, width]");
          const int64_t in = derived_size(config, "in_channels", shape[shape.size() - 3], path, "the input's channel count");
          nn::Conv2dOptions options(in, integer(config, "out_channels"), pair(config["kernel_size"]));
          const json& padding = config["padding"];
          if (padding.is_string()) options.padding(padding.get<std::string>().c_str());
          else options.padding(pair(padding));
          options.stride(pair(config["stride"])).dilation(pair(config["dilation"])).groups(integer(config, "groups"))
              .bias(flag(config, "bias")).padding_mode(text(config, "padding_mode"));
          return nn::AnyModule(nn::Conv2d(options));
        }));

  ObjectSpec max_pool = spec("MaxPool2d", "2-D max pooling");
  max_pool.add("kernel_size", IntOrPair(1), "window size").require();
  max_pool.add("stride", OrNull(IntOrPair(1)), "stride; null: the kernel size").default_(nullptr);
  max_pool.add("padding", IntOrPair(0), "implicit -inf padding").default_(0);
  max_pool.add("dilation", IntOrPair(1), "dilation").default_(1);
  max_pool.add("ceil_mode", Bool(), "ceil instead of floor for the output size").default_(false);
  b.add(b.layers, kLayer, std::move(max_pool),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          shape_of(context, 3, path, "MaxPool2d", "[channels, height, width]");
          nn::MaxPool2dOptions options(pair(config["kernel_size"]));
          if (has(config, "stride")) options.stride(pair(config["stride"]));
          options.padding(pair(config["padding"])).dilation(pair(config["dilation"])).ceil_mode(flag(config, "ceil_mode"));
          return nn::AnyModule(nn::MaxPool2d(options));
        }));

  ObjectSpec avg_pool = spec("AvgPool2d", "2-D average pooling");
  avg_pool.add("kernel_size", IntOrPair(1), "window size").require();
  avg_pool.add("stride", OrNull(IntOrPair(1)), "stride; null: the kernel size").default_(nullptr);
  avg_pool.add("padding", IntOrPair(0), "implicit zero padding").default_(0);
  avg_pool.add("ceil_mode", Bool(), "ceil instead of floor for the output size").default_(false);
  avg_pool.add("count_include_pad", Bool(), "count the padding in the average").default_(true);
  avg_pool.add("divisor_override", OrNull(Integer(1)), "divide by this instead of the window size").default_(nullptr);
  b.add(b.layers, kLayer, std::move(avg_pool),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          shape_of(context, 3, path, "AvgPool2d", "[channels, height, width]");
          nn::AvgPool2dOptions options(pair(config["kernel_size"]));
          if (has(config, "stride")) options.stride(pair(config["stride"]));
          options.padding(pair(config["padding"])).ceil_mode(flag(config, "ceil_mode"))
              .count_include_pad(flag(config, "count_include_pad"));
          if (has(config, "divisor_override")) options.divisor_override(integer(config, "divisor_override"));
          return nn::AnyModule(nn::AvgPool2d(options));
        }));

  ObjectSpec adaptive = spec("AdaptiveAvgPool2d", "2-D average pooling to a fixed output size");
  adaptive.add("output_size", IntOrPair(1), "output height and width").require();
  b.add(b.layers, kLayer, std::move(adaptive),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          shape_of(context, 3, path, "AdaptiveAvgPool2d", "[channels, height, width]");
          const json& size = config["output_size"];
          std::vector<int64_t> sizes = size.is_array() ? size.get<std::vector<int64_t>>()
                                                       : std::vector<int64_t>{size.get<int64_t>(), size.get<int64_t>()};
          return nn::AnyModule(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({sizes[0], sizes[1]})));
        }));
}

void add_normalization(Builders& b) {
  for (const bool two_d : {false, true}) {
    const std::string name = two_d ? "BatchNorm2d" : "BatchNorm1d";
    ObjectSpec batch_norm = spec(name, two_d ? "batch normalization over the channels of [C, H, W] samples"
                                             : "batch normalization over the features of [C] or [C, L] samples");
    batch_norm.add("num_features", Integer(1), "channels; derived from the input").derive();
    batch_norm.add("eps", PositiveNumber(), "added to the variance").default_(1e-5);
    batch_norm.add("momentum", OrNull(Number(0, 1)), "running-statistics momentum; null: cumulative average").default_(0.1);
    batch_norm.add("affine", Bool(), "learn a scale and shift").default_(true);
    batch_norm.add("track_running_stats", Bool(), "keep running statistics for eval").default_(true);
    b.add(b.layers, kLayer, std::move(batch_norm),
          LayerFactory([two_d, name](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
            const auto& shape = shape_of(context, two_d ? 3 : 1, path, name, two_d ? "[channels, height, width]" : "features");
            if (!two_d && shape.size() > 2)
              throw Error(fmt::format("{}: BatchNorm1d takes [C] or [C, L] samples, not {} dimensions", path, shape.size()));
            const int64_t channels = two_d ? shape[shape.size() - 3] : shape[0];
            nn::BatchNormOptions options(derived_size(config, "num_features", channels, path, "the input's channel count"));
            options.eps(number(config, "eps")).affine(flag(config, "affine")).track_running_stats(flag(config, "track_running_stats"));
            options.momentum(has(config, "momentum") ? std::optional<double>(number(config, "momentum")) : std::nullopt);
            if (two_d) return nn::AnyModule(nn::BatchNorm2d(options));
            return nn::AnyModule(nn::BatchNorm1d(options));
          }));
  }

  ObjectSpec layer_norm = spec("LayerNorm", "layer normalization over the trailing dimensions");
  layer_norm.add("normalized_shape", Array(Integer(1), 1), "the trailing sizes to normalize; derived: the last dimension").derive();
  layer_norm.add("eps", PositiveNumber(), "added to the variance").default_(1e-5);
  layer_norm.add("elementwise_affine", Bool(), "learn a scale and shift").default_(true);
  b.add(b.layers, kLayer, std::move(layer_norm),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          const auto& shape = shape_of(context, 1, path, "LayerNorm", "features");
          if (!has(config, "normalized_shape")) config["normalized_shape"] = std::vector<int64_t>{shape.back()};
          auto normalized = config["normalized_shape"].get<std::vector<int64_t>>();
          const bool fits = normalized.size() <= shape.size() &&
                            std::equal(normalized.begin(), normalized.end(), shape.end() - static_cast<ptrdiff_t>(normalized.size()));
          if (!fits) throw Error(fmt::format("{}: {} does not match the input's trailing sizes {}", join_path(path, "normalized_shape"),
                                             config["normalized_shape"].dump(), json(shape).dump()));
          return nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions(normalized).eps(number(config, "eps"))
                                                 .elementwise_affine(flag(config, "elementwise_affine"))));
        }));

  ObjectSpec dropout = spec("Dropout", "zeroes elements with probability p in training, scaling the rest by 1/(1-p)");
  dropout.add("p", Number(0, 1), "drop probability").default_(0.5);
  b.add(b.layers, kLayer, std::move(dropout),
        LayerFactory([](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
          return nn::AnyModule(nn::Dropout(nn::DropoutOptions(number(config, "p"))));
        }));
}

void add_shape_layers(Builders& b) {
  ObjectSpec flatten = spec("Flatten", "flattens dimensions start_dim..end_dim into one (dim 0 is the batch)");
  flatten.add("start_dim", Integer(), "first dimension to flatten").default_(1);
  flatten.add("end_dim", Integer(), "last dimension to flatten").default_(-1);
  b.add(b.layers, kLayer, std::move(flatten),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          shape_of(context, 0, path, "Flatten", "");
          return nn::AnyModule(nn::Flatten(integer(config, "start_dim"), integer(config, "end_dim")));
        }));

  ObjectSpec embedding = spec("Embedding", "a lookup table from integer indices to vectors");
  embedding.add("num_embeddings", Integer(1), "the table's size").require();
  embedding.add("embedding_dim", Integer(1), "the vectors' size").require();
  embedding.add("padding_idx", OrNull(Integer()), "an index whose vector gets no gradient").default_(nullptr);
  embedding.add("max_norm", OrNull(PositiveNumber()), "renormalize looked-up vectors to at most this norm").default_(nullptr);
  embedding.add("norm_type", PositiveNumber(), "the p of max_norm's p-norm").default_(2.0);
  b.add(b.layers, kLayer, std::move(embedding),
        LayerFactory([](json& config, const std::string& path, LayerContext& context, bool&, const Builders&) {
          if (!is_integral(context.sample_dtype, /*include_bool=*/false))
            throw Error(fmt::format("{}: an Embedding takes integer indices, but its input is {}", path,
                                    dtype_name(context.sample_dtype)));
          nn::EmbeddingOptions options(integer(config, "num_embeddings"), integer(config, "embedding_dim"));
          if (has(config, "padding_idx")) options.padding_idx(integer(config, "padding_idx"));
          if (has(config, "max_norm")) options.max_norm(number(config, "max_norm"));
          options.norm_type(number(config, "norm_type"));
          return nn::AnyModule(nn::Embedding(options));
        }));
}

void add_activations(Builders& b) {
  add_plain<nn::ReLU>(b, "ReLU", "max(x, 0)");
  add_plain<nn::Tanh>(b, "Tanh", "tanh(x)");
  add_plain<nn::Sigmoid>(b, "Sigmoid", "1 / (1 + exp(-x))");
  add_plain<nn::SiLU>(b, "SiLU", "x * sigmoid(x)");
  add_plain<nn::Identity>(b, "Identity", "returns its input");

  ObjectSpec gelu = spec("GELU", "x * Phi(x), exact or tanh-approximated");
  gelu.add("approximate", Enum({"none", "tanh"}), "the approximation").default_("none");
  b.add(b.layers, kLayer, std::move(gelu), LayerFactory([](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
          return nn::AnyModule(nn::GELU(text(config, "approximate")));
        }));
  ObjectSpec softplus = spec("Softplus", "log(1 + exp(beta x)) / beta");
  softplus.add("beta", PositiveNumber(), "sharpness").default_(1.0);
  softplus.add("threshold", Number(), "linear above beta x > threshold").default_(20.0);
  b.add(b.layers, kLayer, std::move(softplus),
        LayerFactory([](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
          return nn::AnyModule(nn::Softplus(number(config, "beta"), number(config, "threshold")));
        }));
  ObjectSpec leaky = spec("LeakyReLU", "x for x > 0, negative_slope * x otherwise");
  leaky.add("negative_slope", Number(), "slope for x < 0").default_(0.01);
  b.add(b.layers, kLayer, std::move(leaky), LayerFactory([](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
          return nn::AnyModule(nn::LeakyReLU(nn::LeakyReLUOptions(number(config, "negative_slope"))));
        }));
  ObjectSpec elu = spec("ELU", "x for x > 0, alpha (exp(x) - 1) otherwise");
  elu.add("alpha", Number(), "the saturation value").default_(1.0);
  b.add(b.layers, kLayer, std::move(elu), LayerFactory([](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
          return nn::AnyModule(nn::ELU(nn::ELUOptions(number(config, "alpha"))));
        }));
  for (const bool log : {false, true}) {
    ObjectSpec softmax = spec(log ? "LogSoftmax" : "Softmax", log ? "log(softmax(x)) along dim" : "exp(x) / sum(exp(x)) along dim");
    softmax.add("dim", Integer(), "the dimension (dim 0 is the batch)").default_(-1);
    b.add(b.layers, kLayer, std::move(softmax),
          LayerFactory([log](json& config, const std::string&, LayerContext&, bool&, const Builders&) {
            if (log) return nn::AnyModule(nn::LogSoftmax(nn::LogSoftmaxOptions(integer(config, "dim"))));
            return nn::AnyModule(nn::Softmax(nn::SoftmaxOptions(integer(config, "dim"))));
          }));
  }
}

void add_recurrent(Builders& b) {
  for (const std::string kind : {"RNN", "LSTM", "GRU"}) {
    ObjectSpec recurrent = spec(kind, fmt::format("a {} over the packed batch of sequences; hands on the last layer's final "
                                                  "hidden state (both directions concatenated)", kind));
    recurrent.add("input_size", Integer(1), "features per time step; derived from the data").derive();
    recurrent.add("hidden_size", Integer(1), "hidden state size").require();
    recurrent.add("num_layers", Integer(1), "stacked layers").default_(1);
    recurrent.add("bias", Bool(), "learn biases").default_(true);
    recurrent.add("dropout", Number(0, 1), "dropout between stacked layers, in training").default_(0.0);
    recurrent.add("bidirectional", Bool(), "run a second direction backwards").default_(false);
    if (kind == "RNN") recurrent.add("nonlinearity", Enum({"tanh", "relu"}), "the cell's activation").default_("tanh");
    if (kind == "LSTM") recurrent.add("proj_size", Integer(0), "project h to this size (0: no projection)").default_(0);
    b.add(b.layers, kLayer, std::move(recurrent),
          LayerFactory([kind](json& config, const std::string& path, LayerContext& context, bool& updated, const Builders&) {
            if (!context.sequences)
              throw Error(fmt::format("{}: a {} layer takes the batch of sequences, so it must come first and the data "
                                      "must be sequences", path, kind));
            if (context.sample_shape.size() != 1)
              throw Error(fmt::format("{}: each time step must be a vector of features", path));
            derived_size(config, "input_size", context.sample_shape[0], path, "the sequences' feature count");
            auto encoder = std::make_shared<SequenceEncoderImpl>(kind, config);
            context.sample_shape = {encoder->output_size()};
            context.sequences = false;
            updated = true;
            return nn::AnyModule(encoder);
          }));
  }
}

}  // namespace

void register_layers(Builders& b) {
  add_containers(b);
  add_linear(b);
  add_convolution_and_pooling(b);
  add_normalization(b);
  add_shape_layers(b);
  add_activations(b);
  add_recurrent(b);
}

}  // namespace gradiens::train

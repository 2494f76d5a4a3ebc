// The parameter initializations a config may name (nn::init), applied by the
// model builder to every weight (a parameter of two or more dimensions) or bias.
#include "nn/init.h"
#include "train/registry/registry.h"

namespace gradiens::train {

namespace {

ObjectSpec with_gain(const std::string& name, const std::string& description) {
  ObjectSpec spec(name, description);
  spec.add("gain", PositiveNumber(), "scaling factor").default_(1.0);
  return spec;
}

ObjectSpec kaiming(const std::string& name, const std::string& description) {
  ObjectSpec spec(name, description);
  spec.add("a", Number(0), "the negative slope of the rectifier after the layer").default_(0.0);
  spec.add("mode", Enum({"fan_in", "fan_out"}), "preserve the variance of the forward or the backward pass").default_("fan_in");
  spec.add("nonlinearity", Enum({"relu", "leaky_relu", "tanh", "sigmoid", "linear", "selu"}), "the activation after the layer")
      .default_("leaky_relu");
  return spec;
}

}  // namespace

void register_inits(Builders& b) {
  b.add(b.inits, kInit, with_gain("xavier_uniform", "U(-a, a), a = gain sqrt(6 / (fan_in + fan_out))"),
        InitFactory([](Tensor t, const json& c) { nn::init::xavier_uniform_(t, number(c, "gain")); }));
  b.add(b.inits, kInit, with_gain("xavier_normal", "N(0, std), std = gain sqrt(2 / (fan_in + fan_out))"),
        InitFactory([](Tensor t, const json& c) { nn::init::xavier_normal_(t, number(c, "gain")); }));
  b.add(b.inits, kInit, with_gain("orthogonal", "a (semi-)orthogonal matrix times gain"),
        InitFactory([](Tensor t, const json& c) { nn::init::orthogonal_(t, number(c, "gain")); }));
  b.add(b.inits, kInit, kaiming("kaiming_uniform", "He et al.'s uniform initialization"),
        InitFactory([](Tensor t, const json& c) {
          nn::init::kaiming_uniform_(t, number(c, "a"), text(c, "mode"), text(c, "nonlinearity"));
        }));
  b.add(b.inits, kInit, kaiming("kaiming_normal", "He et al.'s normal initialization"),
        InitFactory([](Tensor t, const json& c) {
          nn::init::kaiming_normal_(t, number(c, "a"), text(c, "mode"), text(c, "nonlinearity"));
        }));
  ObjectSpec normal("normal", "N(mean, std^2)");
  normal.add("mean", Number(), "mean").default_(0.0);
  normal.add("std", Number(0), "standard deviation").default_(1.0);
  b.add(b.inits, kInit, std::move(normal),
        InitFactory([](Tensor t, const json& c) { nn::init::normal_(t, number(c, "mean"), number(c, "std")); }));
  ObjectSpec trunc("trunc_normal", "N(mean, std^2) truncated to [a, b]");
  trunc.add("mean", Number(), "mean").default_(0.0);
  trunc.add("std", Number(0), "standard deviation").default_(1.0);
  trunc.add("a", Number(), "lower bound").default_(-2.0);
  trunc.add("b", Number(), "upper bound").default_(2.0);
  b.add(b.inits, kInit, std::move(trunc), InitFactory([](Tensor t, const json& c) {
          nn::init::trunc_normal_(t, number(c, "mean"), number(c, "std"), number(c, "a"), number(c, "b"));
        }));
  ObjectSpec uniform("uniform", "U(a, b)");
  uniform.add("a", Number(), "lower bound").default_(0.0);
  uniform.add("b", Number(), "upper bound").default_(1.0);
  b.add(b.inits, kInit, std::move(uniform),
        InitFactory([](Tensor t, const json& c) { nn::init::uniform_(t, number(c, "a"), number(c, "b")); }));
  ObjectSpec constant("constant", "every element set to value");
  constant.add("value", Number(), "the value").require();
  b.add(b.inits, kInit, std::move(constant), InitFactory([](Tensor t, const json& c) { nn::init::constant_(t, number(c, "value")); }));
  b.add(b.inits, kInit, ObjectSpec("zeros", "every element 0"), InitFactory([](Tensor t, const json&) { nn::init::zeros_(t); }));
  b.add(b.inits, kInit, ObjectSpec("ones", "every element 1"), InitFactory([](Tensor t, const json&) { nn::init::ones_(t); }));
}

}  // namespace gradiens::train

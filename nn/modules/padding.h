// The padding layers ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ZeroPad2d
// and ConstantPad1d/2d/3d over F::pad, with libtorch's options.
#pragma once

#include <iosfwd>
#include <string>

#include "nn/functional/padding.h"
#include "nn/module.h"
#include "nn/modules/conv.h"  // ExpandingArray

namespace gradiens::nn {

template <size_t D>
struct ReflectionPadOptions {
  ReflectionPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}
  GRADIENS_ARG(ExpandingArray<D * 2>, padding);
};
using ReflectionPad1dOptions = ReflectionPadOptions<1>;
using ReflectionPad2dOptions = ReflectionPadOptions<2>;
using ReflectionPad3dOptions = ReflectionPadOptions<3>;

template <size_t D>
struct ReplicationPadOptions {
  ReplicationPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}
  GRADIENS_ARG(ExpandingArray<D * 2>, padding);
};
using ReplicationPad1dOptions = ReplicationPadOptions<1>;
using ReplicationPad2dOptions = ReplicationPadOptions<2>;
using ReplicationPad3dOptions = ReplicationPadOptions<3>;

struct ZeroPad2dOptions {
  ZeroPad2dOptions(ExpandingArray<4> padding) : padding_(padding) {}
  GRADIENS_ARG(ExpandingArray<4>, padding);
};

template <size_t D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value) : padding_(padding), value_(value) {}
  GRADIENS_ARG(ExpandingArray<D * 2>, padding);
  GRADIENS_ARG(double, value);
};
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

// One padding layer: `Options` holds padding_ (F::pad's order: last dim first)
// and, for ConstantPad, value_; its type gives the F::pad mode.
template <size_t D, class Options>
class PadImpl : public Module {
 public:
  explicit PadImpl(Options options) : options(std::move(options)) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const;
  Options options;
};

#define GRADIENS_PAD_MODULE(Name, D, Options)                                    \
  using Name##Base = PadImpl<D, Options>;                                        \
  class Name##Impl : public Name##Base {                                         \
   public:                                                                       \
    using Name##Base::Name##Base;                                                \
    Name##Impl(ExpandingArray<D * 2> padding) : Name##Base(Options(padding)) {}  \
  };                                                                             \
  GRADIENS_MODULE(Name)
GRADIENS_PAD_MODULE(ReflectionPad1d, 1, ReflectionPad1dOptions);
GRADIENS_PAD_MODULE(ReflectionPad2d, 2, ReflectionPad2dOptions);
GRADIENS_PAD_MODULE(ReflectionPad3d, 3, ReflectionPad3dOptions);
GRADIENS_PAD_MODULE(ReplicationPad1d, 1, ReplicationPad1dOptions);
GRADIENS_PAD_MODULE(ReplicationPad2d, 2, ReplicationPad2dOptions);
GRADIENS_PAD_MODULE(ReplicationPad3d, 3, ReplicationPad3dOptions);
GRADIENS_PAD_MODULE(ZeroPad2d, 2, ZeroPad2dOptions);
#undef GRADIENS_PAD_MODULE

#define GRADIENS_CONSTANT_PAD_MODULE(D)                                                               \
  using ConstantPad##D##dBase = PadImpl<D, ConstantPad##D##dOptions>;                                 \
  class ConstantPad##D##dImpl : public ConstantPad##D##dBase {                                        \
   public:                                                                                            \
    using ConstantPad##D##dBase::ConstantPad##D##dBase;                                               \
    ConstantPad##D##dImpl(ExpandingArray<D * 2> padding, double value)                                \
        : ConstantPad##D##dBase(ConstantPad##D##dOptions(padding, value)) {}                          \
  };                                                                                                  \
  GRADIENS_MODULE(ConstantPad##D##d)
GRADIENS_CONSTANT_PAD_MODULE(1);
GRADIENS_CONSTANT_PAD_MODULE(2);
GRADIENS_CONSTANT_PAD_MODULE(3);
#undef GRADIENS_CONSTANT_PAD_MODULE

}  // namespace gradiens::nn

// The padding layers over F::pad, and their PyTorch and libtorch prints.
#include "nn/modules/padding.h"

#include <fmt/format.h>

#include <ostream>

namespace gradiens::nn {

namespace {

template <size_t D>
const char* mode_of(const ReflectionPadOptions<D>&) {
  return "reflect";
}
template <size_t D>
const char* mode_of(const ReplicationPadOptions<D>&) {
  return "replicate";
}
const char* mode_of(const ZeroPad2dOptions&) { return "constant"; }
template <size_t D>
const char* mode_of(const ConstantPadOptions<D>&) {
  return "constant";
}

template <class Options>
double value_of(const Options&) {
  return 0;
}
template <size_t D>
double value_of(const ConstantPadOptions<D>& options) {
  return options.value_;
}

template <class Options>
constexpr bool has_value = false;
template <size_t D>
constexpr bool has_value<ConstantPadOptions<D>> = true;

}  // namespace

template <size_t D, class Options>
Tensor PadImpl<D, Options>::forward(const Tensor& input) {
  return functional::pad(input,
                         functional::PadFuncOptions(*options.padding_).mode(mode_of(options)).value(value_of(options)));
}

template <size_t D, class Options>
std::string PadImpl<D, Options>::extra_repr() const {
  if constexpr (has_value<Options>)
    return fmt::format("padding={}, value={}", options.padding_.tuple_repr(), options.value_);
  return options.padding_.tuple_repr();
}

template <size_t D, class Options>
void PadImpl<D, Options>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::" << name() << "(padding=" << options.padding_.libtorch_repr();
  if constexpr (has_value<Options>) stream << ", value=" << fmt::format("{}", options.value_);
  stream << ")";
}

template class PadImpl<1, ReflectionPad1dOptions>;
template class PadImpl<2, ReflectionPad2dOptions>;
template class PadImpl<3, ReflectionPad3dOptions>;
template class PadImpl<1, ReplicationPad1dOptions>;
template class PadImpl<2, ReplicationPad2dOptions>;
template class PadImpl<3, ReplicationPad3dOptions>;
template class PadImpl<2, ZeroPad2dOptions>;
template class PadImpl<1, ConstantPad1dOptions>;
template class PadImpl<2, ConstantPad2dOptions>;
template class PadImpl<3, ConstantPad3dOptions>;

}  // namespace gradiens::nn

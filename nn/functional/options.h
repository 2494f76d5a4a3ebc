// What the conv, pooling, padding and upsampling options share: GRADIENS_ARG
// (libtorch's TORCH_ARG: a chainable setter, a getter, and the member `name_`)
// and the mode tags libtorch spells torch::kReflect, torch::kBilinear, ...;
// a tag converts to PyTorch's name for the mode ("reflect", "bilinear"), which
// is what the options store.
#pragma once

#include <concepts>
#include <string>

#include "nn/init.h"

#ifndef GRADIENS_ARG
// In an options struct: `GRADIENS_ARG(int64_t, groups) = 1;` gives
// `options.groups(2)` (returns the options, to chain), `options.groups()`, and
// the public member `groups_`.
#define GRADIENS_ARG(T, name)                                 \
 public:                                                      \
  auto name(const T& new_##name)->decltype(*this) {           \
    this->name##_ = new_##name;                               \
    return *this;                                             \
  }                                                           \
  const T& name() const noexcept { return this->name##_; }    \
  T& name() noexcept { return this->name##_; }                \
  T name##_
#endif

namespace gradiens {

namespace enumtype {
// The base of the mode tags; `name` is PyTorch's string for the mode and
// `enum_name` libtorch's ("kReflect"), which its pretty_print shows.
struct ModeTag {};
#define GRADIENS_MODE_TAG(Tag, python_name)                                   \
  struct Tag : ModeTag {                                                      \
    static constexpr const char* name = python_name;                          \
    static constexpr const char* enum_name = #Tag;                            \
    operator std::string() const { return name; }                             \
  }
GRADIENS_MODE_TAG(kZeros, "zeros");
GRADIENS_MODE_TAG(kConstant, "constant");
GRADIENS_MODE_TAG(kReflect, "reflect");
GRADIENS_MODE_TAG(kReplicate, "replicate");
GRADIENS_MODE_TAG(kCircular, "circular");
GRADIENS_MODE_TAG(kValid, "valid");
GRADIENS_MODE_TAG(kSame, "same");
GRADIENS_MODE_TAG(kNearest, "nearest");
GRADIENS_MODE_TAG(kBilinear, "bilinear");
GRADIENS_MODE_TAG(kBicubic, "bicubic");
GRADIENS_MODE_TAG(kTrilinear, "trilinear");
GRADIENS_MODE_TAG(kArea, "area");
GRADIENS_MODE_TAG(kBorder, "border");
GRADIENS_MODE_TAG(kReflection, "reflection");
#undef GRADIENS_MODE_TAG
// "linear" is also a nonlinearity of nn::init::calculate_gain, where libtorch's
// one torch::kLinear is accepted too.
struct kLinear : ModeTag {
  static constexpr const char* name = "linear";
  static constexpr const char* enum_name = "kLinear";
  operator std::string() const { return name; }
  operator nn::init::Nonlinearity() const { return nn::init::Nonlinearity::Linear; }
};
}  // namespace enumtype

template <class Tag>
concept ModeTagType = std::derived_from<Tag, enumtype::ModeTag>;

inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kBorder kBorder{};
inline constexpr enumtype::kReflection kReflection{};

namespace nn::detail {
// libtorch's name of a mode PyTorch names `mode` ("reflect" -> "kReflect").
std::string mode_enum_name(const std::string& mode);
}  // namespace nn::detail

}  // namespace gradiens

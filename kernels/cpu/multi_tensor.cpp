// The CPU's multi-tensor update kernels of the first-order optimizers
// (kernels/multi_tensor.h) in Highway, compiled once per SIMD target and chosen at runtime (Note [Compiled SIMD targets] in kernels/cpu/vector_math.cpp).

// Note [No contraction in the optimizer kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The AVX2 and AVX-512 copies may use FMA, and GCC fuses a vector a * b + c
// into one fused multiply-add (rounded once) unless told not to. The updates
// must round every product and sum as PyTorch's do, so that trajectories do not
// depend on the CPU they run on: contraction is off for this whole file.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "kernels/cpu/multi_tensor.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <variant>

#include "kernels/cpu/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/multi_tensor.cpp"
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)  // as kernels/cpu/vector_math.cpp
#include "hwy/foreach_target.h"  // must come before highway.h

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls f(std::bool_constant<flags>{}...) for the runtime flags, so that a
// kernel's options become template arguments and its loops carry no branches.
template <class F, class... Done>
HWY_INLINE void with_constants_from(F& f, std::tuple<Done...>) {
  f(Done{}...);
}
template <class F, class... Done, class... Rest>
HWY_INLINE void with_constants_from(F& f, std::tuple<Done...>, bool flag, Rest... rest) {
  if (flag)
    with_constants_from(f, std::tuple<Done..., std::true_type>{}, rest...);
  else
    with_constants_from(f, std::tuple<Done..., std::false_type>{}, rest...);
}
template <class F, class... Flags>
HWY_INLINE void with_constants(F&& f, Flags... flags) {
  with_constants_from(f, std::tuple<>{}, static_cast<bool>(flags)...);
}

// Calls update(slot, from, n) for the elements [from, from + n) of each slot
// that lie in [begin, end) of the list's range (slots are in offset order).
template <class T, class Update>
HWY_INLINE void for_each_slot_part(const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end,
                                   const Update& update) {
  const TensorSlot<T>* slot = std::upper_bound(
      slots, slots + count, begin, [](int64_t i, const TensorSlot<T>& s) { return i < s.offset + s.numel; });
  for (; slot != slots + count && slot->offset < end; ++slot) {
    const int64_t from = std::max(begin, slot->offset) - slot->offset;
    const int64_t to = std::min(end, slot->offset + slot->numel) - slot->offset;
    update(*slot, from, to - from);
  }
}

// Calls body(d, i) for the elements [i, i + Lanes(d)) of [0, n): full vectors,
// then one lane at a time for the rest (the same operations on fewer lanes).
template <class T, class Body>
HWY_INLINE void for_each_vector(int64_t n, const Body& body) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) body(d, i);
  const hn::CappedTag<T, 1> one;
  for (; i < n; ++i) body(one, i);
}

// The update direction: the gradient, negated with maximize (an exact sign flip,
// as -g), plus weight_decay * param with L2 weight decay.
template <bool L2, class D, class V>
HWY_INLINE V direction(D d, V grad, V param, hn::TFromD<D> sign, hn::TFromD<D> weight_decay) {
  V dir = hn::Xor(grad, hn::Set(d, sign));
  if constexpr (L2) dir = hn::Add(dir, hn::Mul(hn::Set(d, weight_decay), param));
  return dir;
}

template <class T>
constexpr T sign_of(bool maximize) {
  return maximize ? T(-0.0) : T(0.0);
}

// ---- SGD: state[0] = momentum_buffer ----

template <class T, bool L2, bool Momentum, bool Fresh, bool Nesterov>
HWY_INLINE void sgd_part(const SGDKernel::Scalars& s, T sign, const TensorSlot<T>& slot, int64_t from, int64_t n) {
  const T momentum = static_cast<T>(s.momentum), one_minus_dampening = static_cast<T>(s.one_minus_dampening);
  const T weight_decay = static_cast<T>(s.weight_decay), neg_lr = static_cast<T>(s.neg_lr);
  T* HWY_RESTRICT p = slot.param + from;
  const T* HWY_RESTRICT g = slot.grad + from;
  T* HWY_RESTRICT buf = Momentum ? slot.state[0] + from : nullptr;
  for_each_vector<T>(n, [&](auto d, int64_t i) HWY_ATTR {
    const auto param = hn::LoadU(d, p + i);
    auto dir = direction<L2>(d, hn::LoadU(d, g + i), param, sign, weight_decay);
    if constexpr (Momentum) {
      // PyTorch's first momentum step clones the direction into the new buffer.
      decltype(dir) b;
      if constexpr (Fresh)
        b = dir;
      else
        b = hn::Add(hn::Mul(hn::LoadU(d, buf + i), hn::Set(d, momentum)),
                    hn::Mul(hn::Set(d, one_minus_dampening), dir));
      hn::StoreU(b, d, buf + i);
      dir = Nesterov ? hn::Add(dir, hn::Mul(hn::Set(d, momentum), b)) : b;
    }
    hn::StoreU(hn::Add(param, hn::Mul(hn::Set(d, neg_lr), dir)), d, p + i);
  });
}

template <class T>
void update_list(const SGDKernel& k, const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end) {
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2, auto momentum, auto nesterov) HWY_ATTR {
        for_each_slot_part(slots, count, begin, end, [&](const TensorSlot<T>& slot, int64_t from, int64_t n) HWY_ATTR {
          if constexpr (momentum()) {
            if (slot.fresh) return sgd_part<T, l2(), true, true, nesterov()>(*k.scalars, sign, slot, from, n);
          }
          sgd_part<T, l2(), momentum(), false, nesterov()>(*k.scalars, sign, slot, from, n);
        });
      },
      k.weight_decay, k.momentum, k.momentum && k.nesterov);
}

// ---- Adam and AdamW: state[0] = exp_avg, [1] = exp_avg_sq, [2] = max_exp_avg_sq ----

template <class T, AdamKernel::WeightDecay kDecay, bool Amsgrad>
HWY_INLINE void adam_part(const AdamKernel::Scalars& s, T sign, const TensorSlot<T>& slot, int64_t from, int64_t n) {
  const T beta1 = static_cast<T>(s.beta1), one_minus_beta1 = static_cast<T>(s.one_minus_beta1);
  const T beta2 = static_cast<T>(s.beta2), one_minus_beta2 = static_cast<T>(s.one_minus_beta2);
  const T l2 = static_cast<T>(s.l2), decay = static_cast<T>(s.decay);
  const T bias_correction2_sqrt = static_cast<T>(s.bias_correction2_sqrt), eps = static_cast<T>(s.eps);
  const T neg_step_size = static_cast<T>(s.neg_step_size);
  T* HWY_RESTRICT p = slot.param + from;
  const T* HWY_RESTRICT g = slot.grad + from;
  T* HWY_RESTRICT exp_avg = slot.state[0] + from;
  T* HWY_RESTRICT exp_avg_sq = slot.state[1] + from;
  T* HWY_RESTRICT max_exp_avg_sq = Amsgrad ? slot.state[2] + from : nullptr;
  for_each_vector<T>(n, [&](auto d, int64_t i) HWY_ATTR {
    const auto param = hn::LoadU(d, p + i);
    const auto dir = direction<kDecay == AdamKernel::WeightDecay::L2>(d, hn::LoadU(d, g + i), param, sign, l2);
    const auto m =
        hn::Add(hn::Mul(hn::LoadU(d, exp_avg + i), hn::Set(d, beta1)), hn::Mul(hn::Set(d, one_minus_beta1), dir));
    const auto v = hn::Add(hn::Mul(hn::LoadU(d, exp_avg_sq + i), hn::Set(d, beta2)),
                           hn::Mul(hn::Mul(hn::Set(d, one_minus_beta2), dir), dir));
    hn::StoreU(m, d, exp_avg + i);
    hn::StoreU(v, d, exp_avg_sq + i);
    auto second_moment = v;
    if constexpr (Amsgrad) {
      // torch.maximum: a NaN on either side wins.
      const auto old_max = hn::LoadU(d, max_exp_avg_sq + i);
      second_moment = hn::IfThenElse(hn::Or(hn::IsNaN(old_max), hn::Gt(old_max, v)), old_max, v);
      hn::StoreU(second_moment, d, max_exp_avg_sq + i);
    }
    const auto denom = hn::Add(hn::Div(hn::Sqrt(second_moment), hn::Set(d, bias_correction2_sqrt)), hn::Set(d, eps));
    // AdamW decays the parameter before the step (which reads only m and v).
    auto start = param;
    if constexpr (kDecay == AdamKernel::WeightDecay::Decoupled) start = hn::Mul(param, hn::Set(d, decay));
    hn::StoreU(hn::Add(start, hn::Div(hn::Mul(hn::Set(d, neg_step_size), m), denom)), d, p + i);
  });
}

template <class T, AdamKernel::WeightDecay kDecay>
void adam_list_with(const AdamKernel& k, const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end) {
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto amsgrad) HWY_ATTR {
        for_each_slot_part(slots, count, begin, end, [&](const TensorSlot<T>& slot, int64_t from, int64_t n) HWY_ATTR {
          adam_part<T, kDecay, amsgrad()>(k.scalars[slot.scalars], sign, slot, from, n);
        });
      },
      k.amsgrad);
}

template <class T>
void update_list(const AdamKernel& k, const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end) {
  switch (k.weight_decay) {
    case AdamKernel::WeightDecay::None:
      return adam_list_with<T, AdamKernel::WeightDecay::None>(k, slots, count, begin, end);
    case AdamKernel::WeightDecay::L2:
      return adam_list_with<T, AdamKernel::WeightDecay::L2>(k, slots, count, begin, end);
    case AdamKernel::WeightDecay::Decoupled:
      return adam_list_with<T, AdamKernel::WeightDecay::Decoupled>(k, slots, count, begin, end);
  }
}

// ---- RMSprop: state[0] = square_avg, [1] = grad_avg, [2] = momentum_buffer ----

template <class T, bool L2, bool Centered, bool Momentum>
HWY_INLINE void rmsprop_part(const RMSpropKernel::Scalars& s, T sign, const TensorSlot<T>& slot, int64_t from,
                             int64_t n) {
  const T alpha = static_cast<T>(s.alpha), one_minus_alpha = static_cast<T>(s.one_minus_alpha);
  const T weight_decay = static_cast<T>(s.weight_decay), eps = static_cast<T>(s.eps);
  const T momentum = static_cast<T>(s.momentum), neg_lr = static_cast<T>(s.neg_lr);
  T* HWY_RESTRICT p = slot.param + from;
  const T* HWY_RESTRICT g = slot.grad + from;
  T* HWY_RESTRICT square_avg = slot.state[0] + from;
  T* HWY_RESTRICT grad_avg = Centered ? slot.state[1] + from : nullptr;
  T* HWY_RESTRICT buf = Momentum ? slot.state[2] + from : nullptr;
  for_each_vector<T>(n, [&](auto d, int64_t i) HWY_ATTR {
    const auto param = hn::LoadU(d, p + i);
    const auto dir = direction<L2>(d, hn::LoadU(d, g + i), param, sign, weight_decay);
    const auto sq = hn::Add(hn::Mul(hn::LoadU(d, square_avg + i), hn::Set(d, alpha)),
                            hn::Mul(hn::Mul(hn::Set(d, one_minus_alpha), dir), dir));
    hn::StoreU(sq, d, square_avg + i);
    auto variance = sq;
    if constexpr (Centered) {
      const auto ga =
          hn::Add(hn::Mul(hn::LoadU(d, grad_avg + i), hn::Set(d, alpha)), hn::Mul(hn::Set(d, one_minus_alpha), dir));
      hn::StoreU(ga, d, grad_avg + i);
      // PyTorch's square_avg.addcmul(grad_avg, grad_avg, value=-1).
      variance = hn::Add(sq, hn::Mul(hn::Mul(hn::Set(d, T(-1)), ga), ga));
    }
    const auto avg = hn::Add(hn::Sqrt(variance), hn::Set(d, eps));
    if constexpr (Momentum) {
      const auto b = hn::Add(hn::Mul(hn::LoadU(d, buf + i), hn::Set(d, momentum)), hn::Div(dir, avg));
      hn::StoreU(b, d, buf + i);
      hn::StoreU(hn::Add(param, hn::Mul(hn::Set(d, neg_lr), b)), d, p + i);
    } else {
      hn::StoreU(hn::Add(param, hn::Div(hn::Mul(hn::Set(d, neg_lr), dir), avg)), d, p + i);
    }
  });
}

template <class T>
void update_list(const RMSpropKernel& k, const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end) {
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2, auto centered, auto momentum) HWY_ATTR {
        for_each_slot_part(slots, count, begin, end, [&](const TensorSlot<T>& slot, int64_t from, int64_t n) HWY_ATTR {
          rmsprop_part<T, l2(), centered(), momentum()>(*k.scalars, sign, slot, from, n);
        });
      },
      k.weight_decay, k.centered, k.momentum);
}

// ---- Adagrad: state[0] = sum ----

template <class T, bool L2>
HWY_INLINE void adagrad_part(const AdagradKernel::Scalars& s, T sign, const TensorSlot<T>& slot, int64_t from,
                             int64_t n) {
  const T weight_decay = static_cast<T>(s.weight_decay), eps = static_cast<T>(s.eps);
  const T neg_clr = static_cast<T>(s.neg_clr);
  T* HWY_RESTRICT p = slot.param + from;
  const T* HWY_RESTRICT g = slot.grad + from;
  T* HWY_RESTRICT state_sum = slot.state[0] + from;
  for_each_vector<T>(n, [&](auto d, int64_t i) HWY_ATTR {
    const auto param = hn::LoadU(d, p + i);
    const auto dir = direction<L2>(d, hn::LoadU(d, g + i), param, sign, weight_decay);
    const auto sum = hn::Add(hn::LoadU(d, state_sum + i), hn::Mul(dir, dir));
    hn::StoreU(sum, d, state_sum + i);
    const auto denom = hn::Add(hn::Sqrt(sum), hn::Set(d, eps));
    hn::StoreU(hn::Add(param, hn::Div(hn::Mul(hn::Set(d, neg_clr), dir), denom)), d, p + i);
  });
}

template <class T>
void update_list(const AdagradKernel& k, const TensorSlot<T>* slots, size_t count, int64_t begin, int64_t end) {
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2) HWY_ATTR {
        for_each_slot_part(slots, count, begin, end, [&](const TensorSlot<T>& slot, int64_t from, int64_t n) HWY_ATTR {
          adagrad_part<T, l2()>(k.scalars[slot.scalars], sign, slot, from, n);
        });
      },
      k.weight_decay);
}

// HWY_EXPORT needs plain (non-template) functions, one per dtype.
void update_float(const AnyKernel& kernel, const TensorSlot<float>* slots, size_t count, int64_t begin, int64_t end) {
  std::visit([&](const auto& k) HWY_ATTR { update_list(k, slots, count, begin, end); }, kernel);
}
void update_double(const AnyKernel& kernel, const TensorSlot<double>* slots, size_t count, int64_t begin,
                   int64_t end) {
  std::visit([&](const auto& k) HWY_ATTR { update_list(k, slots, count, begin, end); }, kernel);
}

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gradiens::kernels::cpu {

HWY_EXPORT(update_float);
HWY_EXPORT(update_double);

// The list's range of elements is split between threads; each part goes to the
// best target's copy of the kernel.
void multi_tensor_update(const AnyKernel& kernel, const TensorList<float>& list) {
  parallel_for(0, list.numel, kElementwiseGrainSize, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(update_float)(kernel, list.slots.data(), list.slots.size(), begin, end);
  });
}
void multi_tensor_update(const AnyKernel& kernel, const TensorList<double>& list) {
  parallel_for(0, list.numel, kElementwiseGrainSize, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(update_double)(kernel, list.slots.data(), list.slots.size(), begin, end);
  });
}

}  // namespace gradiens::kernels::cpu
#endif  // HWY_ONCE

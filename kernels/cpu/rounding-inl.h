// rounded(): a value the compiler may not fuse with the operation that uses it,
// for the Highway kernels that must round a product before they add it.
// Included once per SIMD target, after hwy/highway.h (Highway's -inl.h pattern).

// Per-target include guard: toggled by foreach_target.h on each pass.
#if defined(GRADIENS_KERNELS_CPU_ROUNDING_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GRADIENS_KERNELS_CPU_ROUNDING_INL_H_
#undef GRADIENS_KERNELS_CPU_ROUNDING_INL_H_
#else
#define GRADIENS_KERNELS_CPU_ROUNDING_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gradiens::kernels::cpu {
namespace HWY_NAMESPACE {

// Note [Accumulating outputs round twice]
// An output that accumulates must equal the separate add it replaces: the
// result rounded, then the sum rounded. GCC contracts a product followed by an
// add into one fused multiply-add (-ffp-contract=fast, its default), even
// through vector intrinsics, which rounds once; rounded() hides the result
// from that optimization by passing it through an empty asm statement.
template <class X>
HWY_INLINE X rounded(X x) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+x"(x));
#endif
  return x;
}

}  // namespace HWY_NAMESPACE
}  // namespace gradiens::kernels::cpu
HWY_AFTER_NAMESPACE();

#endif  // GRADIENS_KERNELS_CPU_ROUNDING_INL_H_

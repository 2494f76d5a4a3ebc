// The CPU's in-place accumulation (kernels/cpu/accumulate.h).
#include "kernels/cpu/accumulate.h"

namespace gradiens::kernels::cpu {

void add_into(ScalarType dtype, const ElementwiseIterator& iter, int64_t grain, std::string_view name) {
  dispatch_numeric_and_reduced(dtype, name, [&]<class T>() {
    elementwise_kernel<T, T, T>(iter, [](T acc, T v) { return acc + v; }, grain);
  });
}

}  // namespace gradiens::kernels::cpu

// Tests for the device-neutral kernel entry points (kernels/*.h) on CPU
// buffers: broadcasting operands described by their own sizes and strides,
// the scalar and one-element paths, comparisons, where, casts, fills, the
// reductions and the dense fused kernels, each against a plain loop.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/unary.h"

namespace {

namespace k = gradiens::kernels;
using gradiens::DimVector;
using gradiens::IntArrayRef;
using gradiens::kBool;
using gradiens::kFloat32;
using gradiens::kFloat64;
using gradiens::kInt64;

const k::DeviceRef cpu{};

// A row-major operand of `sizes` over `data`.
struct Buffer {
  DimVector sizes, strides;
  k::StridedRef ref(void* data) const { return {data, sizes, strides}; }
};
Buffer row_major(std::initializer_list<int64_t> sizes) {
  Buffer b{DimVector(sizes.begin(), sizes.end()), DimVector(sizes.size(), 1)};
  for (size_t d = b.sizes.size(); d-- > 1;) b.strides[d - 1] = b.strides[d] * b.sizes[d];
  return b;
}

}  // namespace

TEST_CASE("seam: binary broadcasts operands given by their own sizes and strides") {
  // out [2, 3] = a [2, 3] (transposed storage) - 2 * b [3]
  std::vector<double> a_storage{1, 4, 2, 5, 3, 6};  // a = [[1, 2, 3], [4, 5, 6]] stored column-major
  std::vector<double> b{10, 20, 30}, out(6);
  Buffer a_desc{{2, 3}, {1, 2}}, b_desc = row_major({3}), out_desc = row_major({2, 3});
  k::binary(k::Binary::Sub, kFloat64, out_desc.ref(out.data()), a_desc.ref(a_storage.data()), b_desc.ref(b.data()),
            out_desc.sizes, k::Number::of_integer(2), cpu, "sub");
  const std::vector<double> expected{1 - 20, 2 - 40, 3 - 60, 4 - 20, 5 - 40, 6 - 60};
  for (size_t i = 0; i < 6; ++i) CHECK(out[i] == expected[i]);
}

TEST_CASE("seam: the dense path and the iterator agree") {
  std::vector<float> a(1000), b(1000), dense(1000), strided(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = 0.37f * static_cast<float>(i) - 100;
    b[i] = 1.0f / (1 + static_cast<float>(i));
  }
  Buffer flat = row_major({1000});
  k::binary(k::Binary::Mul, kFloat32, flat.ref(dense.data()), flat.ref(a.data()), flat.ref(b.data()), flat.sizes,
            k::Number::of_integer(1), cpu, "mul");
  // The same memory seen as a permuted [100, 10] (strides not row-major): the iterator runs.
  Buffer permuted{{100, 10}, {1, 100}};
  k::binary(k::Binary::Mul, kFloat32, permuted.ref(strided.data()), permuted.ref(a.data()), permuted.ref(b.data()),
            permuted.sizes, k::Number::of_integer(1), cpu, "mul");
  for (int i = 0; i < 1000; ++i) CHECK(dense[i] == strided[i]);
}

TEST_CASE("seam: arithmetic with a scalar, one element and many") {
  double x = 3, y = 0;
  Buffer one = row_major({1, 1});
  k::binary_scalar_one<k::Binary::Sub>(kFloat64, &y, &x, 2, k::Number::of_real(10), /*scalar_first=*/true,
                                       k::Number::of_integer(1), cpu, "rsub");
  CHECK(y == 7);
  k::binary_scalar(k::Binary::Pow, kFloat64, one.ref(&y), one.ref(&x), one.sizes, k::Number::of_real(2), false,
                   k::Number::of_integer(1), cpu, "pow");
  CHECK(y == 9);
  std::vector<int64_t> v{1, -2, 3, (int64_t{1} << 60) + 1}, r(4);
  Buffer four = row_major({4});
  // An int64 scalar beyond 2^53 keeps every bit.
  k::binary_scalar(k::Binary::Add, kInt64, four.ref(r.data()), four.ref(v.data()), four.sizes,
                   k::Number::of_integer((int64_t{1} << 60) + 3), false, k::Number::of_integer(1), cpu, "add");
  CHECK(r[0] == (int64_t{1} << 60) + 4);
  CHECK(r[3] == (int64_t{1} << 61) + 4);
  bool flags[2] = {true, false}, ored[2] = {false, false};
  Buffer two = row_major({2});
  k::binary_scalar(k::Binary::Add, kBool, two.ref(ored), two.ref(flags), two.sizes, k::Number::of_integer(0), false,
                   k::Number::of_integer(1), cpu, "add");
  CHECK(ored[0]);
  CHECK_FALSE(ored[1]);
}

TEST_CASE("seam: compare, where, copy and fill") {
  std::vector<double> a{1, 2, 3}, b{3, 2, 1}, chosen(3);
  bool lt[3];
  Buffer three = row_major({3});
  k::compare(k::Compare::Lt, kFloat64, three.ref(lt), three.ref(a.data()), three.ref(b.data()), three.sizes, cpu, "lt");
  CHECK(lt[0]);
  CHECK_FALSE(lt[1]);
  CHECK_FALSE(lt[2]);
  k::where(kFloat64, three.ref(chosen.data()), three.ref(lt), three.ref(a.data()), three.ref(b.data()), three.sizes,
           cpu);
  CHECK(chosen == std::vector<double>{1, 2, 1});
  std::vector<float> narrowed(3);
  k::copy(kFloat32, three.ref(narrowed.data()), kFloat64, three.ref(a.data()), three.sizes, cpu);
  CHECK(narrowed == std::vector<float>{1, 2, 3});
  std::vector<int64_t> filled(6, 0);
  Buffer every_other{{3}, {2}};
  k::fill(kInt64, every_other.ref(filled.data()), every_other.sizes, k::Number::of_integer(7), cpu);
  CHECK(filled == std::vector<int64_t>{7, 0, 7, 0, 7, 0});
  CHECK(k::is_row_major(IntArrayRef({2, 1, 3}), IntArrayRef({3, 99, 1})));
  CHECK_FALSE(k::is_row_major(IntArrayRef({2, 3}), IntArrayRef({1, 2})));
}

TEST_CASE("seam: reductions over a layout") {
  // x [2, 3] row-major, reduced over dim 1: kept [2] (stride 3), reduced [3] (stride 1).
  std::vector<double> x{1, 5, 2, -1, std::numeric_limits<double>::quiet_NaN(), 4}, out(2);
  k::ReductionLayout layout;
  layout.kept_sizes = {2};
  layout.kept_strides = {3};
  layout.reduced_sizes = {3};
  layout.reduced_strides = {1};
  k::reduce(k::Reduce::Sum, kFloat64, x.data(), layout, kFloat64, out.data(), cpu, "sum");
  CHECK(out[0] == 8);
  CHECK(std::isnan(out[1]));
  k::reduce(k::Reduce::Max, kFloat64, x.data(), layout, kFloat64, out.data(), cpu, "amax");
  CHECK(out[0] == 5);
  CHECK(std::isnan(out[1]));  // NaN is the largest value
  k::reduce(k::Reduce::Prod, kFloat64, x.data(), layout, kFloat64, out.data(), cpu, "prod");
  CHECK(out[0] == 10);
  int64_t where_max[2];
  k::arg_extremum(true, kFloat64, x.data(), layout, where_max, nullptr, false, cpu, "argmax");
  CHECK(where_max[0] == 1);
  CHECK(where_max[1] == 1);
  k::vector_norm(1, kFloat64, x.data(), layout, out.data(), cpu, "norm");
  CHECK(out[0] == 8);
}

TEST_CASE("seam: dense fused kernels") {
  std::vector<double> g{1, 2, 3}, y{0.5, -0.25, 0}, out(3);
  k::tanh_backward(kFloat64, g.data(), y.data(), out.data(), 3, cpu);
  for (int i = 0; i < 3; ++i) CHECK(out[i] == g[i] * (1 - y[i] * y[i]));
  k::threshold_backward(kFloat64, g.data(), y.data(), k::Number::of_integer(0), out.data(), 3, cpu);
  CHECK(out == std::vector<double>{1, 0, 0});
  k::scaled_product(kFloat64, g.data(), g.data(), y.data(), -2, out.data(), 3, cpu);
  for (int i = 0; i < 3; ++i) CHECK(out[i] == -2 * (g[i] * g[i] * y[i]));
  k::unary_math(k::UnaryMath::Exp, kFloat64, y.data(), out.data(), 0, cpu);  // empty: nothing to do
  k::unary_math(k::UnaryMath::Sqrt, kFloat64, g.data(), out.data(), 3, cpu);
  for (int i = 0; i < 3; ++i) CHECK(out[i] == std::sqrt(g[i]));
}

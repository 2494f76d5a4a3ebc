// Tests for the entry points of the indexing, sorting and cumulative loops
// (kernels/indexing.h, kernels/sorting.h, kernels/ordering.h, and
// kernels::add_into) on CPU buffers, each against values worked out by hand:
// bad indices reported and skipped, repeated targets, negative indices, NaN
// orders, strided operands, the row fast paths and nonzero.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/ordering.h"
#include "kernels/sorting.h"

namespace {

namespace k = gradiens::kernels;
using gradiens::DimVector;
using gradiens::kFloat32;
using gradiens::kFloat64;
using gradiens::kInt32;
using gradiens::kInt64;

const k::DeviceRef cpu{};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("kernels::sort_lines on the CPU: stable, NaN last ascending and first descending") {
  // Two lines of five keys; ties keep their order.
  std::vector<double> keys = {3, kNaN, 1, 3, -0.0, 2, 2, kNaN, 0.0, -1};
  std::vector<int64_t> positions(10, -1);
  k::sort_lines(kFloat64, keys.data(), 2, 5, false, positions.data(), cpu);
  CHECK(positions == std::vector<int64_t>{4, 2, 0, 3, 1, 4, 3, 0, 1, 2});
  k::sort_lines(kFloat64, keys.data(), 2, 5, true, positions.data(), cpu);
  CHECK(positions == std::vector<int64_t>{1, 0, 3, 2, 4, 2, 0, 1, 3, 4});
}

TEST_CASE("kernels::select_positions and median_positions along a strided dim") {
  // in is 3 x 2 read along dim 0 through strides {1, 3} (a transposed 2 x 3 buffer).
  std::vector<float> data = {5, 1, 4, 2, 2, 9};  // column 0: 5, 1, 4; column 1: 2, 2, 9
  const DimVector sizes{3, 2}, in_strides{1, 3};
  std::vector<int64_t> out(4, -1);
  const DimVector out_sizes{2, 2}, out_strides{2, 1};
  k::select_positions(k::Selection::Partial, kFloat32, sizes, 0, 2, true, {out.data(), out_sizes, out_strides},
                      {data.data(), sizes, in_strides}, cpu, "topk");
  CHECK(out == std::vector<int64_t>{0, 2, 2, 0});  // the two largest of each column, ties by position
  std::vector<int64_t> nth(2, -1);
  const DimVector one_sizes{1, 2}, one_strides{2, 1};
  k::select_positions(k::Selection::Nth, kFloat32, sizes, 0, 2, false, {nth.data(), one_sizes, one_strides},
                      {data.data(), sizes, in_strides}, cpu, "kthvalue");
  CHECK(nth == std::vector<int64_t>{2, 1});  // second smallest: 4 at 2; the later 2 at 1
  std::vector<double> with_nan = {3, kNaN, 1, 7};  // lines [3, NaN] and [1, 7] along dim 1
  const DimVector nan_sizes{2, 2}, nan_strides{2, 1};
  std::vector<int64_t> median(2, -1);
  const DimVector median_sizes{2, 1}, median_strides{1, 1};
  k::median_positions(kFloat64, nan_sizes, 1, {median.data(), median_sizes, median_strides},
                      {with_nan.data(), nan_sizes, nan_strides}, cpu);
  CHECK(median == std::vector<int64_t>{1, 0});  // the NaN; the lower median of [1, 7]
}

TEST_CASE("kernels::cumulative: sums and products along a dim, integers wrapping") {
  std::vector<double> in = {1, 2, 3, 4, 5, 6};  // 2 x 3, cumulated along dim 1
  std::vector<double> out(6);
  const DimVector sizes{2, 3}, strides{3, 1};
  k::cumulative(false, kFloat64, sizes, 1, {out.data(), sizes, strides}, {in.data(), sizes, strides}, cpu);
  CHECK(out == std::vector<double>{1, 3, 6, 4, 9, 15});
  k::cumulative(true, kFloat64, sizes, 0, {out.data(), sizes, strides}, {in.data(), sizes, strides}, cpu);
  CHECK(out == std::vector<double>{1, 2, 3, 4, 10, 18});
  std::vector<int32_t> big = {std::numeric_limits<int32_t>::max(), 1};
  std::vector<int32_t> wrapped(2);
  const DimVector line{2}, unit{1};
  k::cumulative(false, kInt32, line, 0, {wrapped.data(), line, unit}, {big.data(), line, unit}, cpu);
  CHECK(wrapped[1] == std::numeric_limits<int32_t>::min());
}

TEST_CASE("kernels::index_scatter and index_add: the last write wins, repeats add, bad indices reported") {
  // dst is 3 x 2; src and index are 2 x 2, scattered along dim 0 (dst's stride 2, pinned at 0).
  std::vector<double> dst(6, 0);
  std::vector<double> src = {1, 2, 3, 4};
  std::vector<int64_t> index = {2, 0, 2, 5};
  const DimVector shape{2, 2}, dst_strides{0, 1}, src_strides{2, 1};
  auto bad = k::index_scatter(kFloat64, shape, {dst.data(), shape, dst_strides}, {src.data(), shape, src_strides},
                              {index.data(), shape, src_strides}, 2, 3, false, cpu);
  REQUIRE(bad.has_value());
  CHECK(*bad == 5);
  CHECK(dst == std::vector<double>{0, 2, 0, 0, 3, 0});  // [2][0] = 1 then 3; [0][1] = 2; the 5 skipped
  std::vector<int64_t> ints(6, 10);
  std::vector<int64_t> int_src = {1, 2, 3, 4};
  std::vector<int64_t> good = {1, 1, 1, 0};
  bad = k::index_add(kInt64, shape, {ints.data(), shape, dst_strides}, {int_src.data(), shape, src_strides},
                     {good.data(), shape, src_strides}, 2, 3, k::Number::of_integer(3), false, cpu);
  CHECK_FALSE(bad.has_value());
  CHECK(ints == std::vector<int64_t>{10, 22, 22, 16, 10, 10});  // row 1 gets 3 * (1 + 3), 3 * 2; row 0 col 1 3 * 4
}

TEST_CASE("kernels advanced-indexing loops: offsets from negative indices, gather and put through them") {
  // A view of 4 elements with stride 3 indexed by [-1, 0, 2, -4] plus one bad index.
  std::vector<int64_t> offsets(4, 100);
  std::vector<int64_t> index = {-1, 0, 2, -4};
  const DimVector shape{4}, unit{1};
  auto bad = k::add_index_offsets(shape, {offsets.data(), shape, unit}, {index.data(), shape, unit}, 4, 3, cpu);
  CHECK_FALSE(bad.has_value());
  CHECK(offsets == std::vector<int64_t>{109, 100, 106, 100});
  std::vector<int64_t> wrong = {0, 4, -5, 1};
  bad = k::add_index_offsets(shape, {offsets.data(), shape, unit}, {wrong.data(), shape, unit}, 4, 3, cpu);
  REQUIRE(bad.has_value());
  CHECK(*bad == 4);

  std::vector<float> view = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<int64_t> at = {9, 0, 6, 0};
  std::vector<float> picked(4);
  const DimVector zero{0};
  k::gather_at_offsets(kFloat32, shape, {picked.data(), shape, unit}, {view.data(), shape, zero},
                       {at.data(), shape, unit}, cpu);
  CHECK(picked == std::vector<float>{9, 0, 6, 0});
  std::vector<float> values = {1, 2, 3, 4};
  k::put_at_offsets(kFloat32, shape, {view.data(), shape, zero}, {values.data(), shape, unit},
                    {at.data(), shape, unit}, true, false, cpu);
  CHECK(view == std::vector<float>{6, 1, 2, 3, 4, 5, 9, 7, 8, 10});  // offset 0 gets 2 + 4
  k::put_at_offsets(kFloat32, shape, {view.data(), shape, zero}, {values.data(), shape, unit},
                    {at.data(), shape, unit}, false, false, cpu);
  CHECK(view[0] == 4);  // the last write wins
}

TEST_CASE("kernels::add_into: a dst whose elements alias each other gets every addition when serial") {
  // dst: 5 windows of 2 over a buffer of 6 with step 1 (an unfold), src all ones.
  std::vector<double> buffer(6, 0);
  std::vector<double> ones(10, 1);
  const DimVector shape{5, 2}, windows{1, 1}, dense{2, 1};
  k::add_into(kFloat64, {buffer.data(), shape, windows}, {ones.data(), shape, dense}, shape, true, cpu, "test");
  CHECK(buffer == std::vector<double>{1, 2, 2, 2, 2, 1});
  // A broadcast src (one row) into a dense dst.
  std::vector<double> dst(10, 1);
  std::vector<double> row = {10, 20};
  const DimVector row_sizes{2}, unit{1};
  k::add_into(kFloat64, {dst.data(), shape, dense}, {row.data(), row_sizes, unit}, shape, false, cpu, "test");
  CHECK(dst == std::vector<double>{11, 21, 11, 21, 11, 21, 11, 21, 11, 21});
}

TEST_CASE("kernels row fast paths and nonzero: whole rows in index order, multi-indices in row-major order") {
  std::vector<int32_t> table = {0, 1, 10, 11, 20, 21};  // three rows of two
  std::vector<int64_t> picks = {2, 0, 2};
  std::vector<int32_t> rows(6, -1);
  CHECK(k::gather_rows(table.data(), 3, 8, picks.data(), 3, rows.data(), cpu));
  CHECK(rows == std::vector<int32_t>{20, 21, 0, 1, 20, 21});
  std::vector<int64_t> wrong = {1, 3};
  std::vector<int32_t> untouched(4, -1);
  CHECK_FALSE(k::gather_rows(table.data(), 3, 8, wrong.data(), 2, untouched.data(), cpu));
  CHECK(untouched == std::vector<int32_t>(4, -1));

  std::vector<float> dst(6, 0);
  std::vector<float> src = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> at = {1, 7, 1};
  auto bad = k::add_rows(kFloat32, dst.data(), 3, src.data(), 2, at.data(), 3, k::Number::of_real(0.5), cpu);
  REQUIRE(bad.has_value());
  CHECK(*bad == 7);
  CHECK(dst == std::vector<float>{0, 0, 3, 4, 0, 0});  // row 1 gets 0.5 * ([1, 2] + [5, 6])

  std::vector<double> values = {0, 1.5, -0.0, 0, kNaN, 0};  // 2 x 3: NaN counts as nonzero
  const DimVector sizes{2, 3};
  std::vector<int64_t> where;
  k::nonzero_indices(
      kFloat64, values.data(), sizes,
      [&](int64_t count) {
        where.assign(static_cast<size_t>(count * 2), -1);
        return where.data();
      },
      cpu);
  CHECK(where == std::vector<int64_t>{0, 1, 1, 1});
  // A 0-dim input: one row of no columns when nonzero, none when zero.
  int64_t found = -1;
  const double one = 1, zero = 0;
  k::nonzero_indices(
      kFloat64, &one, {},
      [&](int64_t count) {
        found = count;
        return static_cast<int64_t*>(nullptr);
      },
      cpu);
  CHECK(found == 1);
  k::nonzero_indices(
      kFloat64, &zero, {},
      [&](int64_t count) {
        found = count;
        return static_cast<int64_t*>(nullptr);
      },
      cpu);
  CHECK(found == 0);
}

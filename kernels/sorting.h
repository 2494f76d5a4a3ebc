// Device-neutral entry points of the order statistics (sort, argsort, topk,
// kthvalue, median): the positions of selected elements within lines along one
// dim. NaN orders above every number and ties keep their original order.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/device_ref.h"
#include "kernels/scalar_type.h"
#include "kernels/small_vector.h"

namespace gradiens::kernels {

// What a selection does with each line: order its first `count` entries (Sort
// orders all of them, Partial the `count` smallest, or largest when
// descending), or find the entry that would be at place `count - 1` (Nth).
enum class Selection { Sort, Partial, Nth };

// For each line of `in` along `dim` (sizes: in's sizes, a 0-dim tensor passed
// as [1]), the int64 positions within the line of its selected entries, written
// along `dim` of `out` (count of them, one for Nth; out has in's sizes
// elsewhere), any dtype. `name` is the op dtype errors name. CPU only: a cuda
// device selects from sort_lines's full sort.
void select_positions(Selection how, ScalarType dtype, IntArrayRef sizes, int64_t dim, int64_t count,
                      bool descending, const StridedRef& out, const StridedRef& in, const DeviceRef& device,
                      std::string_view name);
// The position of each line's lower median, or of its first NaN when it holds
// one, written to `out` (size 1 along dim); numeric dtypes. CPU only.
void median_positions(ScalarType dtype, IntArrayRef sizes, int64_t dim, const StridedRef& out, const StridedRef& in,
                      const DeviceRef& device);

// A stable sort of each of `lines` contiguous lines of `length` keys: for each
// sorted place, the position of its key within the line (int64, lines x
// length). On a cuda device the keys are float32, float64, uint8, int8, int16,
// int32 or int64 (kernels/cuda/indexing.h); on the CPU any dtype.
void sort_lines(ScalarType dtype, const void* keys, int64_t lines, int64_t length, bool descending,
                int64_t* positions, const DeviceRef& device);

}  // namespace gradiens::kernels

// The CUDA kernels of ops.h that reduce along lines and use the result in one
// launch: softmax and log_softmax with their backward, the first position of
// the extremum (with its value), and the vector norm. A line of at most
// kSerialLineMax values is done by one thread, a longer one by a block with the
// fixed tree of device_math.cuh, so results are the same run to run.
#include <algorithm>
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/ops.h"

namespace gradiens::kernels::cuda {
namespace {

constexpr int64_t kSerialLineMax = 64;

// Who works on one line: one thread (kBlock false: lane 0 of 1) or a whole
// block (kBlock true: lane threadIdx.x of blockDim.x), and the lines each
// worker takes in turn.
template <bool kBlock>
struct LineWorkers {
  __device__ static int64_t first_line() {
    if constexpr (kBlock) return blockIdx.x;
    else return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  }
  __device__ static int64_t line_stride() {
    if constexpr (kBlock) return gridDim.x;
    else return static_cast<int64_t>(blockDim.x) * gridDim.x;
  }
  __device__ static int64_t lane() {
    if constexpr (kBlock) return threadIdx.x;
    else return 0;
  }
  __device__ static int64_t lanes() {
    if constexpr (kBlock) return blockDim.x;
    else return 1;
  }
  // Every lane's value combined (Note [Fixed reduction tree]), returned to
  // every lane; `n` values were spread over the lanes (lane t holds one when
  // t < n). A single thread has it already.
  template <class Acc, class Combine>
  __device__ static Acc all_reduce(Acc value, int64_t n, Combine combine) {
    if constexpr (!kBlock) {
      return value;
    } else {
      __shared__ Acc shared_result;
      const int count = static_cast<int>(n < kThreadsPerBlock ? n : kThreadsPerBlock);
      const Acc result = block_tree_reduce(value, count < 1 ? 1 : count, combine);
      if (threadIdx.x == 0) shared_result = result;
      __syncthreads();
      const Acc broadcast = shared_result;
      __syncthreads();  // the next call overwrites shared_result
      return broadcast;
    }
  }
};

template <class F>
void launch_lines(int64_t lines, int64_t line_length, F&& launch) {
  if (lines == 0) return;
  if (line_length <= kSerialLineMax) {
    launch.template operator()<false>(blocks_for(lines));
  } else {
    launch.template operator()<true>(static_cast<unsigned int>(lines < kMaxBlocks ? lines : kMaxBlocks));
  }
  GD_CUDA_LAUNCH_CHECK();
}

// Lines along one dim of a shape: the offset of each operand's first element
// of line `line`, and each operand's stride along the line.
template <int kOperands>
struct LineGeometry {
  StridedIndexer<kOperands> outer;
  int64_t strides[kOperands] = {};
  int64_t lines = 0;
  int64_t length = 0;
  __device__ void offsets_of(int64_t line, int64_t (&offsets)[kOperands]) const {
    outer.offsets_of(static_cast<uint64_t>(line), offsets);
  }
};

template <int kOperands>
LineGeometry<kOperands> line_geometry(const Shape& shape, int dim, const int64_t* const (&strides)[kOperands]) {
  LineGeometry<kOperands> geometry;
  Shape outer = shape;
  outer.sizes[dim] = 1;
  geometry.outer = make_indexer<kOperands>(outer, 0, outer.ndim, strides);
  for (int k = 0; k < kOperands; ++k) geometry.strides[k] = strides[k][dim];
  geometry.lines = outer.numel();
  geometry.length = shape.sizes[dim];
  return geometry;
}

// ---- softmax ---------------------------------------------------------------------
// The formulas of kernels/cpu/softmax.cpp: the line's max (a NaN is never
// taken, so a NaN line stays NaN through x - max), exp(x - max) summed in
// double, then a scale by 1 / sum or a shift by log(sum).

template <class T>
struct LargerOf {  // NaN-ignoring: the accumulator starts at -inf and never becomes NaN
  __device__ T operator()(T a, T b) const { return b > a ? b : a; }
};
struct SumOf {
  __device__ double operator()(double a, double b) const { return a + b; }
};

template <bool Log, bool kBlock, class T>
__global__ void __launch_bounds__(kThreadsPerBlock) softmax_kernel(const T* x, T* y, LineGeometry<2> geometry) {
  using W = LineWorkers<kBlock>;
  const int64_t n = geometry.length, xs = geometry.strides[0], ys = geometry.strides[1];
  for (int64_t line = W::first_line(); line < geometry.lines; line += W::line_stride()) {
    int64_t offsets[2];
    geometry.offsets_of(line, offsets);
    const T* xl = x + offsets[0];
    T* yl = y + offsets[1];
    T max = -std::numeric_limits<T>::infinity();
    for (int64_t j = W::lane(); j < n; j += W::lanes()) max = LargerOf<T>()(max, xl[j * xs]);
    max = W::all_reduce(max, n, LargerOf<T>());
    double total = 0;
    for (int64_t j = W::lane(); j < n; j += W::lanes()) {
      const T e = math_exp(xl[j * xs] - max);
      yl[j * ys] = e;
      total += static_cast<double>(e);
    }
    total = W::all_reduce(total, n, SumOf());
    if constexpr (Log) {
      const T log_total = static_cast<T>(math_log(total));
      for (int64_t j = W::lane(); j < n; j += W::lanes()) yl[j * ys] = (xl[j * xs] - max) - log_total;
    } else {
      const T inverse = static_cast<T>(1 / total);
      for (int64_t j = W::lane(); j < n; j += W::lanes()) yl[j * ys] = yl[j * ys] * inverse;
    }
  }
}

// softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g).
template <bool Log, bool kBlock, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    softmax_backward_kernel(const T* g, const T* y, T* out, LineGeometry<3> geometry) {
  using W = LineWorkers<kBlock>;
  const int64_t n = geometry.length, gs = geometry.strides[0], ys = geometry.strides[1], os = geometry.strides[2];
  for (int64_t line = W::first_line(); line < geometry.lines; line += W::line_stride()) {
    int64_t offsets[3];
    geometry.offsets_of(line, offsets);
    const T* gl = g + offsets[0];
    const T* yl = y + offsets[1];
    T* ol = out + offsets[2];
    double total = 0;
    for (int64_t j = W::lane(); j < n; j += W::lanes()) {
      if constexpr (Log) total += static_cast<double>(gl[j * gs]);
      else total += multiply_rounded(static_cast<double>(gl[j * gs]), static_cast<double>(yl[j * ys]));
    }
    total = W::all_reduce(total, n, SumOf());
    const T line_total = static_cast<T>(total);
    for (int64_t j = W::lane(); j < n; j += W::lanes()) {
      if constexpr (Log) ol[j * os] = gl[j * gs] - multiply_rounded(math_exp(yl[j * ys]), line_total);
      else ol[j * os] = multiply_rounded(yl[j * ys], gl[j * gs] - line_total);
    }
  }
}

// ---- reductions over trailing dims ---------------------------------------------------
// Note [Split line reductions]: output m reduces `count` values. Outputs of
// at most kSerialLineMax values take one thread each; longer ones a block
// each, and when there are too few outputs to fill the GPU each output is cut
// into `parts` consecutive chunks of part_length values (at least
// kMinPartLength), a block per chunk writing a partial to scratch memory, and
// one thread per output then combines its partials in order. The cut depends
// on the shape alone, so the order of every combination is fixed.
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMinPartLength = 16 * kThreadsPerBlock;

// Output m reduces the values at kept.offset(m) + reduced.offset(r), r < count.
struct TrailingReduction {
  StridedIndexer<1> kept;
  StridedIndexer<1> reduced;
  int64_t outputs = 0;
  int64_t count = 0;
  int64_t parts = 1;
  int64_t part_length = 0;
  __device__ int64_t base_of(int64_t m) const {
    int64_t offsets[1];
    kept.offsets_of(static_cast<uint64_t>(m), offsets);
    return offsets[0];
  }
  __device__ int64_t offset_of(int64_t r) const {
    int64_t offsets[1];
    reduced.offsets_of(static_cast<uint64_t>(r), offsets);
    return offsets[0];
  }
  __host__ __device__ int64_t tasks() const { return outputs * parts; }
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

TrailingReduction trailing_reduction(const Strided& in, const Shape& shape, int reduced_ndim, const char* op) {
  check_shape(shape, op);
  GD_CHECK(reduced_ndim >= 0 && reduced_ndim <= shape.ndim,
           std::string(op) + ": cannot reduce " + std::to_string(reduced_ndim) + " trailing dimensions of a " +
               std::to_string(shape.ndim) + "-dimensional shape");
  const int kept_ndim = shape.ndim - reduced_ndim;
  const int64_t* const strides[1] = {in.strides};
  TrailingReduction reduction;
  reduction.kept = make_indexer<1>(shape, 0, kept_ndim, strides);
  reduction.reduced = make_indexer<1>(shape, kept_ndim, shape.ndim, strides);
  reduction.outputs = 1;
  for (int d = 0; d < kept_ndim; ++d) reduction.outputs *= shape.sizes[d];
  reduction.count = 1;
  for (int d = kept_ndim; d < shape.ndim; ++d) reduction.count *= shape.sizes[d];
  // Note [Split line reductions]
  if (reduction.count > kSerialLineMax && reduction.outputs > 0) {
    const int64_t most_parts = std::max<int64_t>(1, reduction.count / kMinPartLength);
    reduction.parts = std::clamp<int64_t>(ceil_div(kTargetBlocks, reduction.outputs), 1, most_parts);
  }
  reduction.part_length = ceil_div(std::max<int64_t>(reduction.count, 1), reduction.parts);
  reduction.parts = ceil_div(std::max<int64_t>(reduction.count, 1), reduction.part_length);  // none empty
  return reduction;
}

// Runs launch<kBlock>(blocks) over the reduction's tasks (Note [Split line reductions]).
template <class F>
void launch_tasks(const TrailingReduction& reduction, F&& launch) {
  launch_lines(reduction.tasks(), reduction.count, std::forward<F>(launch));
}

// The chunk of task `task`: its output and the values [begin, end) it reduces.
struct Chunk {
  int64_t output, begin, end;
};
__device__ inline Chunk chunk_of(const TrailingReduction& reduction, int64_t task) {
  const int64_t m = task / reduction.parts;
  const int64_t begin = (task - m * reduction.parts) * reduction.part_length;
  const int64_t end = begin + reduction.part_length < reduction.count ? begin + reduction.part_length : reduction.count;
  return {m, begin, end};
}

// ---- arg extremum --------------------------------------------------------------------
// A candidate (value, position); the better of two is the NaN, else the larger
// (smaller) value, and between equals (two NaNs too) the earlier position: the
// first extremum, as the CPU's left-to-right loop finds it, in any order.

template <class V>
struct Candidate {
  V value;
  int64_t index;
};

template <bool IsMax, class V>
__device__ bool better(const Candidate<V>& a, const Candidate<V>& b) {
  const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
  if (a_nan || b_nan) return a_nan && (!b_nan || a.index < b.index);
  if (a.value != b.value) return IsMax ? a.value > b.value : a.value < b.value;
  return a.index < b.index;
}

// The candidates of the lanes combined with the tree of Note [Fixed reduction
// tree], the result returned to every lane (a block-wide version of
// block_tree_reduce for a pair).
template <bool IsMax, class V>
__device__ Candidate<V> block_pick(Candidate<V> mine, int count) {
  __shared__ V values[kThreadsPerBlock];
  __shared__ int64_t indices[kThreadsPerBlock];
  const int t = static_cast<int>(threadIdx.x);
  values[t] = mine.value;
  indices[t] = mine.index;
  __syncthreads();
  for (int s = kThreadsPerBlock / 2; s >= 1; s /= 2) {
    if (t < s && t + s < count) {
      const Candidate<V> other{values[t + s], indices[t + s]};
      const Candidate<V> own{values[t], indices[t]};
      if (better<IsMax>(other, own)) {
        values[t] = other.value;
        indices[t] = other.index;
      }
    }
    __syncthreads();
  }
  const Candidate<V> result{values[0], indices[0]};
  __syncthreads();  // the next call overwrites the arrays
  return result;
}

// The output's index, and its value read back from the input (so a NaN keeps its bits).
template <class T>
__device__ void store_extremum(const TrailingReduction& reduction, const T* in, int64_t m, int64_t index,
                               int64_t* indices, T* values) {
  indices[m] = index;
  if (values != nullptr) values[m] = in[reduction.base_of(m) + reduction.offset_of(index)];
}

// One task's best candidate: to the output directly, or to the partials.
template <bool IsMax, bool kBlock, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    arg_extremum_kernel(const T* in, int64_t* indices, T* values, opmath_type<T>* partial_values,
                        int64_t* partial_indices, TrailingReduction reduction) {
  using W = LineWorkers<kBlock>;
  using V = opmath_type<T>;
  for (int64_t task = W::first_line(); task < reduction.tasks(); task += W::line_stride()) {
    const Chunk chunk = chunk_of(reduction, task);
    const T* row = in + reduction.base_of(chunk.output);
    Candidate<V> best{V(0), -1};
    for (int64_t r = chunk.begin + W::lane(); r < chunk.end; r += W::lanes()) {
      const Candidate<V> here{load_as_opmath(row[reduction.offset_of(r)]), r};
      if (best.index < 0 || better<IsMax>(here, best)) best = here;
    }
    if constexpr (kBlock) {
      const int64_t n = chunk.end - chunk.begin;
      best = block_pick<IsMax>(best, static_cast<int>(n < kThreadsPerBlock ? n : kThreadsPerBlock));
    }
    if (W::lane() == 0) {
      if (partial_indices != nullptr) {
        partial_values[task] = best.value;
        partial_indices[task] = best.index;
      } else {
        store_extremum(reduction, in, chunk.output, best.index, indices, values);
      }
    }
  }
}

template <bool IsMax, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    arg_extremum_partials_kernel(const T* in, int64_t* indices, T* values, const opmath_type<T>* partial_values,
                                 const int64_t* partial_indices, TrailingReduction reduction) {
  using V = opmath_type<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < reduction.outputs; m += stride) {
    const int64_t first = m * reduction.parts;
    Candidate<V> best{partial_values[first], partial_indices[first]};
    for (int64_t k = 1; k < reduction.parts; ++k) {
      const Candidate<V> here{partial_values[first + k], partial_indices[first + k]};
      if (better<IsMax>(here, best)) best = here;
    }
    store_extremum(reduction, in, m, best.index, indices, values);
  }
}

// ---- vector norm ------------------------------------------------------------------
// kernels/cpu/reduce_ops.cpp's vector_norm: |x| in double, summed (p = 0, 1,
// 2, other p) or the largest / smallest taken (+-inf, a NaN winning), then
// sqrt or the 1/p power; an empty reduction gives what 0 gives (pow(0, 1/p)
// for other p).

template <NormKind kKind>
struct NormStep {
  double p;
  __device__ double map(double a) const {
    if constexpr (kKind == NormKind::Zero) return a != 0 ? 1.0 : 0.0;
    if constexpr (kKind == NormKind::One) return a;
    if constexpr (kKind == NormKind::Two) return multiply_rounded(a, a);
    if constexpr (kKind == NormKind::General) return math_pow(a, p);
    return a;  // Inf, NegInf
  }
  __device__ double operator()(double a, double b) const {
    if constexpr (kKind == NormKind::Inf) return (a != a || a >= b) ? a : b;
    if constexpr (kKind == NormKind::NegInf) return (a != a || a <= b) ? a : b;
    return a + b;
  }
  __device__ double finish(double total, int64_t count) const {
    if constexpr (kKind == NormKind::Two) return math_sqrt(total);
    if constexpr (kKind == NormKind::General) return math_pow(total, 1.0 / p);
    if (count == 0) return 0;
    return total;
  }
};

template <NormKind kKind, bool kBlock, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    vector_norm_kernel(const T* in, T* out, double* partials, TrailingReduction reduction, double p) {
  using W = LineWorkers<kBlock>;
  const NormStep<kKind> step{p};
  for (int64_t task = W::first_line(); task < reduction.tasks(); task += W::line_stride()) {
    const Chunk chunk = chunk_of(reduction, task);
    const T* row = in + reduction.base_of(chunk.output);
    double total = 0;
    const int64_t first = chunk.begin + W::lane();
    for (int64_t r = first; r < chunk.end; r += W::lanes()) {
      const double value = step.map(math_abs(static_cast<double>(load_as_opmath(row[reduction.offset_of(r)]))));
      total = r == first ? value : step(total, value);
    }
    total = W::all_reduce(total, chunk.end - chunk.begin, step);
    if (W::lane() == 0) {
      if (partials != nullptr) partials[task] = total;
      else out[chunk.output] = convert_value<T>(step.finish(total, reduction.count));
    }
  }
}

template <NormKind kKind, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    vector_norm_partials_kernel(T* out, const double* partials, TrailingReduction reduction, double p) {
  const NormStep<kKind> step{p};
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < reduction.outputs; m += stride) {
    const int64_t first = m * reduction.parts;
    double total = partials[first];
    for (int64_t k = 1; k < reduction.parts; ++k) total = step(total, partials[first + k]);
    out[m] = convert_value<T>(step.finish(total, reduction.count));
  }
}

template <bool IsMax>
void launch_arg_extremum(ScalarType dtype, const void* in, int64_t* indices, void* values,
                         const TrailingReduction& reduction, bool allow_bool, int device, StreamHandle stream) {
  const char* op = IsMax ? "argmax" : "argmin";
  if (dtype == ScalarType::Bool && !allow_bool)
    throw Error(std::string("\"") + op + "_cuda\" not implemented for 'Bool'");
  dispatch_cuda_all(dtype, op, [&]<class T>() {
    using V = opmath_type<T>;
    const T* typed_in = static_cast<const T*>(in);
    T* typed_values = static_cast<T*>(values);
    if (reduction.parts == 1) {
      launch_tasks(reduction, [&]<bool kBlock>(unsigned int blocks) {
        arg_extremum_kernel<IsMax, kBlock, T><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
            typed_in, indices, typed_values, nullptr, nullptr, reduction);
      });
      return;
    }
    const size_t tasks = static_cast<size_t>(reduction.tasks());
    DeviceScratch partial_values(tasks * sizeof(V), device), partial_indices(tasks * sizeof(int64_t), device);
    launch_tasks(reduction, [&]<bool kBlock>(unsigned int blocks) {
      arg_extremum_kernel<IsMax, kBlock, T><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
          typed_in, indices, typed_values, partial_values.get<V>(), partial_indices.get<int64_t>(), reduction);
    });
    arg_extremum_partials_kernel<IsMax, T><<<blocks_for(reduction.outputs), kThreadsPerBlock, 0,
                                             as_cuda_stream(stream)>>>(
        typed_in, indices, typed_values, partial_values.get<V>(), partial_indices.get<int64_t>(), reduction);
    GD_CUDA_LAUNCH_CHECK();
  });
}

template <NormKind kKind>
void launch_vector_norm(ScalarType dtype, const void* in, void* out, const TrailingReduction& reduction, double p,
                        int device, StreamHandle stream) {
  dispatch_cuda_floating_and_reduced(dtype, "norm", [&]<class T>() {
    const T* typed_in = static_cast<const T*>(in);
    T* typed_out = static_cast<T*>(out);
    if (reduction.parts == 1) {
      launch_tasks(reduction, [&]<bool kBlock>(unsigned int blocks) {
        vector_norm_kernel<kKind, kBlock, T>
            <<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(typed_in, typed_out, nullptr, reduction, p);
      });
      return;
    }
    DeviceScratch partials(static_cast<size_t>(reduction.tasks()) * sizeof(double), device);
    launch_tasks(reduction, [&]<bool kBlock>(unsigned int blocks) {
      vector_norm_kernel<kKind, kBlock, T><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(
          typed_in, typed_out, partials.get<double>(), reduction, p);
    });
    vector_norm_partials_kernel<kKind, T><<<blocks_for(reduction.outputs), kThreadsPerBlock, 0,
                                            as_cuda_stream(stream)>>>(typed_out, partials.get<double>(), reduction,
                                                                      p);
    GD_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace

// ---- host entry points ------------------------------------------------------------

void softmax(bool log, ScalarType dtype, const Strided& x, const Strided& y, const Shape& shape, int dim,
             StreamHandle stream) {
  check_shape(shape, "softmax");
  GD_CHECK(dim >= 0 && dim < shape.ndim, "softmax: dim " + std::to_string(dim) + " out of range");
  const int64_t* const strides[2] = {x.strides, y.strides};
  const LineGeometry<2> geometry = line_geometry<2>(shape, dim, strides);
  if (geometry.length == 0) return;
  dispatch_cuda_floating(dtype, log ? "log_softmax" : "softmax", [&]<class T>() {
    const T* xp = static_cast<const T*>(x.data);
    T* yp = static_cast<T*>(y.data);
    launch_lines(geometry.lines, geometry.length, [&]<bool kBlock>(unsigned int blocks) {
      if (log) {
        softmax_kernel<true, kBlock, T><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(xp, yp, geometry);
      } else {
        softmax_kernel<false, kBlock, T><<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(xp, yp, geometry);
      }
    });
  });
}

void softmax_backward(bool log, ScalarType dtype, const Strided& g, const Strided& y, const Strided& out,
                      const Shape& shape, int dim, StreamHandle stream) {
  check_shape(shape, "softmax_backward");
  GD_CHECK(dim >= 0 && dim < shape.ndim, "softmax_backward: dim " + std::to_string(dim) + " out of range");
  const int64_t* const strides[3] = {g.strides, y.strides, out.strides};
  const LineGeometry<3> geometry = line_geometry<3>(shape, dim, strides);
  if (geometry.length == 0) return;
  dispatch_cuda_floating(dtype, log ? "log_softmax_backward" : "softmax_backward", [&]<class T>() {
    const T* gp = static_cast<const T*>(g.data);
    const T* yp = static_cast<const T*>(y.data);
    T* op = static_cast<T*>(out.data);
    launch_lines(geometry.lines, geometry.length, [&]<bool kBlock>(unsigned int blocks) {
      if (log) {
        softmax_backward_kernel<true, kBlock, T>
            <<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(gp, yp, op, geometry);
      } else {
        softmax_backward_kernel<false, kBlock, T>
            <<<blocks, kThreadsPerBlock, 0, as_cuda_stream(stream)>>>(gp, yp, op, geometry);
      }
    });
  });
}

void arg_extremum(bool is_max, ScalarType dtype, const Strided& in, const Shape& shape, int reduced_ndim,
                  int64_t* indices, void* values, bool allow_bool, int device, StreamHandle stream) {
  const TrailingReduction reduction = trailing_reduction(in, shape, reduced_ndim, is_max ? "argmax" : "argmin");
  if (reduction.outputs == 0) return;
  GD_CHECK(reduction.count > 0, std::string(is_max ? "argmax" : "argmin") + ": cannot reduce an empty dimension");
  if (is_max) launch_arg_extremum<true>(dtype, in.data, indices, values, reduction, allow_bool, device, stream);
  else launch_arg_extremum<false>(dtype, in.data, indices, values, reduction, allow_bool, device, stream);
}

void vector_norm(double p, ScalarType dtype, const Strided& in, const Shape& shape, int reduced_ndim, void* out,
                 int device, StreamHandle stream) {
  const TrailingReduction reduction = trailing_reduction(in, shape, reduced_ndim, "norm");
  if (reduction.outputs == 0) return;
  switch (norm_kind(p)) {
    case NormKind::Zero: return launch_vector_norm<NormKind::Zero>(dtype, in.data, out, reduction, p, device, stream);
    case NormKind::One: return launch_vector_norm<NormKind::One>(dtype, in.data, out, reduction, p, device, stream);
    case NormKind::Two: return launch_vector_norm<NormKind::Two>(dtype, in.data, out, reduction, p, device, stream);
    case NormKind::Inf: return launch_vector_norm<NormKind::Inf>(dtype, in.data, out, reduction, p, device, stream);
    case NormKind::NegInf: return launch_vector_norm<NormKind::NegInf>(dtype, in.data, out, reduction, p, device, stream);
    case NormKind::General: return launch_vector_norm<NormKind::General>(dtype, in.data, out, reduction, p, device, stream);
  }
}

}  // namespace gradiens::kernels::cuda

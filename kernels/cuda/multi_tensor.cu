// The optimizers' multi-tensor update kernels on CUDA: SGD, Adam/AdamW, RMSprop
// and Adagrad over a TensorList of device buffers, the CUDA twins of
// optim/detail/multi_tensor.cpp, formula for formula (Note [Bitwise parity with the CPU update]).

// Note [Bitwise parity with the CPU update]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An optimizer step on the GPU must give the same bits as on the CPU, so a
// trajectory does not depend on the device. The CPU kernels round every
// product, quotient, square root and sum once (Note [No contraction in the
// optimizer kernels] in optim/detail/multi_tensor.cpp); here each one goes
// through an _rn intrinsic, which nvcc never fuses into an fma, and each
// formula repeats its CPU twin operation by operation, operands in the same
// order. The scalars are rounded from double to T on the host with static_cast,
// as the CPU kernels round them. maximize flips the gradient's sign bit with
// an XOR, as the CPU does. Only NaN payloads may differ (the GPU's arithmetic
// returns its canonical NaN where x86 keeps the operand's payload).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/multi_tensor.h"

namespace gradiens::kernels::cuda {
namespace {

// ---- arithmetic rounded once per operation, never contracted -------------------

__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ inline double sqrt_rn(double a) { return __dsqrt_rn(a); }

// x with its sign bit XORed with sign's (sign is +0 or -0): the CPU's exact negation.
__device__ inline float xor_sign(float x, float sign) { return __int_as_float(__float_as_int(x) ^ __float_as_int(sign)); }
__device__ inline double xor_sign(double x, double sign) {
  return __longlong_as_double(__double_as_longlong(x) ^ __double_as_longlong(sign));
}

template <class T>
constexpr T sign_of(bool maximize) {
  return maximize ? T(-0.0) : T(0.0);
}

// The update direction: the gradient, negated with maximize, plus
// weight_decay * param with L2 weight decay.
template <bool L2, class T>
__device__ inline T direction(T grad, T param, T sign, T weight_decay) {
  T dir = xor_sign(grad, sign);
  if constexpr (L2) dir = add_rn(dir, mul_rn(weight_decay, param));
  return dir;
}

// torch.maximum as the CPU kernel computes it: a NaN on either side wins.
template <class T>
__device__ inline T nan_propagating_max(T old_max, T value) {
  const bool old_is_nan = old_max != old_max;
  return (old_is_nan || old_max > value) ? old_max : value;
}

// ---- each kernel's scalars, rounded to T on the host -----------------------------

template <class T>
struct RoundedSGDScalars {
  T momentum, one_minus_dampening, weight_decay, neg_lr;
};
template <class T>
RoundedSGDScalars<T> round_scalars(const SGDKernel::Scalars& s) {
  return {static_cast<T>(s.momentum), static_cast<T>(s.one_minus_dampening), static_cast<T>(s.weight_decay),
          static_cast<T>(s.neg_lr)};
}

template <class T>
struct RoundedAdamScalars {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, bias_correction2_sqrt, eps, neg_step_size;
};
template <class T>
RoundedAdamScalars<T> round_scalars(const AdamKernel::Scalars& s) {
  return {static_cast<T>(s.beta1),
          static_cast<T>(s.one_minus_beta1),
          static_cast<T>(s.beta2),
          static_cast<T>(s.one_minus_beta2),
          static_cast<T>(s.l2),
          static_cast<T>(s.decay),
          static_cast<T>(s.bias_correction2_sqrt),
          static_cast<T>(s.eps),
          static_cast<T>(s.neg_step_size)};
}

template <class T>
struct RoundedRMSpropScalars {
  T alpha, one_minus_alpha, weight_decay, eps, momentum, neg_lr;
};
template <class T>
RoundedRMSpropScalars<T> round_scalars(const RMSpropKernel::Scalars& s) {
  return {static_cast<T>(s.alpha), static_cast<T>(s.one_minus_alpha), static_cast<T>(s.weight_decay),
          static_cast<T>(s.eps), static_cast<T>(s.momentum), static_cast<T>(s.neg_lr)};
}

template <class T>
struct RoundedAdagradScalars {
  T weight_decay, eps, neg_clr;
};
template <class T>
RoundedAdagradScalars<T> round_scalars(const AdagradKernel::Scalars& s) {
  return {static_cast<T>(s.weight_decay), static_cast<T>(s.eps), static_cast<T>(s.neg_clr)};
}

// ---- the per-element updates ------------------------------------------------------
// Each updates element i of one slot in place; `table` is the kernel's scalars
// on the device. The flags are template arguments, so the loops carry no branches
// (but SGD's per-slot `fresh`).

// SGD: state[0] = momentum_buffer.
template <class T, bool L2, bool Momentum, bool Nesterov>
struct SGDUpdate {
  using Scalars = RoundedSGDScalars<T>;
  T sign;
  __device__ void operator()(const TensorSlot<T>& slot, int64_t i, const Scalars* table) const {
    const Scalars& s = table[0];
    const T param = slot.param[i];
    T dir = direction<L2>(slot.grad[i], param, sign, s.weight_decay);
    if constexpr (Momentum) {
      // PyTorch's first momentum step clones the direction into the new buffer.
      T* buf = slot.state[0];
      const T b = slot.fresh ? dir : add_rn(mul_rn(buf[i], s.momentum), mul_rn(s.one_minus_dampening, dir));
      buf[i] = b;
      dir = Nesterov ? add_rn(dir, mul_rn(s.momentum, b)) : b;
    }
    slot.param[i] = add_rn(param, mul_rn(s.neg_lr, dir));
  }
};

// Adam and AdamW: state[0] = exp_avg, [1] = exp_avg_sq, [2] = max_exp_avg_sq.
template <class T, AdamKernel::WeightDecay kDecay, bool Amsgrad>
struct AdamUpdate {
  using Scalars = RoundedAdamScalars<T>;
  T sign;
  __device__ void operator()(const TensorSlot<T>& slot, int64_t i, const Scalars* table) const {
    const Scalars& s = table[slot.scalars];
    T* exp_avg = slot.state[0];
    T* exp_avg_sq = slot.state[1];
    const T param = slot.param[i];
    const T dir = direction<kDecay == AdamKernel::WeightDecay::L2>(slot.grad[i], param, sign, s.l2);
    const T m = add_rn(mul_rn(exp_avg[i], s.beta1), mul_rn(s.one_minus_beta1, dir));
    const T v = add_rn(mul_rn(exp_avg_sq[i], s.beta2), mul_rn(mul_rn(s.one_minus_beta2, dir), dir));
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    T second_moment = v;
    if constexpr (Amsgrad) {
      T* max_exp_avg_sq = slot.state[2];
      second_moment = nan_propagating_max(max_exp_avg_sq[i], v);
      max_exp_avg_sq[i] = second_moment;
    }
    const T denom = add_rn(div_rn(sqrt_rn(second_moment), s.bias_correction2_sqrt), s.eps);
    // AdamW decays the parameter before the step (which reads only m and v).
    T start = param;
    if constexpr (kDecay == AdamKernel::WeightDecay::Decoupled) start = mul_rn(param, s.decay);
    slot.param[i] = add_rn(start, div_rn(mul_rn(s.neg_step_size, m), denom));
  }
};

// RMSprop: state[0] = square_avg, [1] = grad_avg, [2] = momentum_buffer.
template <class T, bool L2, bool Centered, bool Momentum>
struct RMSpropUpdate {
  using Scalars = RoundedRMSpropScalars<T>;
  T sign;
  __device__ void operator()(const TensorSlot<T>& slot, int64_t i, const Scalars* table) const {
    const Scalars& s = table[0];
    T* square_avg = slot.state[0];
    const T param = slot.param[i];
    const T dir = direction<L2>(slot.grad[i], param, sign, s.weight_decay);
    const T sq = add_rn(mul_rn(square_avg[i], s.alpha), mul_rn(mul_rn(s.one_minus_alpha, dir), dir));
    square_avg[i] = sq;
    T variance = sq;
    if constexpr (Centered) {
      T* grad_avg = slot.state[1];
      const T ga = add_rn(mul_rn(grad_avg[i], s.alpha), mul_rn(s.one_minus_alpha, dir));
      grad_avg[i] = ga;
      // PyTorch's square_avg.addcmul(grad_avg, grad_avg, value=-1).
      variance = add_rn(sq, mul_rn(mul_rn(T(-1), ga), ga));
    }
    const T avg = add_rn(sqrt_rn(variance), s.eps);
    if constexpr (Momentum) {
      T* buf = slot.state[2];
      const T b = add_rn(mul_rn(buf[i], s.momentum), div_rn(dir, avg));
      buf[i] = b;
      slot.param[i] = add_rn(param, mul_rn(s.neg_lr, b));
    } else {
      slot.param[i] = add_rn(param, div_rn(mul_rn(s.neg_lr, dir), avg));
    }
  }
};

// Adagrad: state[0] = sum.
template <class T, bool L2>
struct AdagradUpdate {
  using Scalars = RoundedAdagradScalars<T>;
  T sign;
  __device__ void operator()(const TensorSlot<T>& slot, int64_t i, const Scalars* table) const {
    const Scalars& s = table[slot.scalars];
    T* state_sum = slot.state[0];
    const T param = slot.param[i];
    const T dir = direction<L2>(slot.grad[i], param, sign, s.weight_decay);
    const T sum = add_rn(state_sum[i], mul_rn(dir, dir));
    state_sum[i] = sum;
    const T denom = add_rn(sqrt_rn(sum), s.eps);
    slot.param[i] = add_rn(param, div_rn(mul_rn(s.neg_clr, dir), denom));
  }
};

// ---- the kernel and its launch --------------------------------------------------

// A grid-stride loop over the list's elements [0, numel): element j belongs to
// the first slot whose end (offset + numel) exceeds j, found by binary search
// over slot_ends (increasing; empty slots share their neighbour's end and are
// never chosen).
template <class T, class Update>
__global__ void __launch_bounds__(kThreadsPerBlock)
    multi_tensor_kernel(const TensorSlot<T>* slots, const int64_t* slot_ends, int64_t slot_count,
                        const typename Update::Scalars* scalars, int64_t numel, Update update) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < numel; j += stride) {
    int64_t low = 0, high = slot_count;
    while (low < high) {
      const int64_t middle = low + (high - low) / 2;
      if (slot_ends[middle] <= j)
        low = middle + 1;
      else
        high = middle;
    }
    // A local copy: the stores through the slot's pointers cannot alias it.
    const TensorSlot<T> slot = slots[low];
    update(slot, j - slot.offset, scalars);
  }
}

// Device memory from the stream's pool, freed in stream order (after the work
// queued before the free) when it goes out of scope, even when a launch throws.
class StreamOrderedBuffer {
 public:
  StreamOrderedBuffer(size_t bytes, cudaStream_t stream) : stream_(stream) {
    GD_CUDA_CHECK(cudaMallocAsync(&data_, bytes, stream_));
  }
  ~StreamOrderedBuffer() {
    if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
  }
  StreamOrderedBuffer(const StreamOrderedBuffer&) = delete;
  StreamOrderedBuffer& operator=(const StreamOrderedBuffer&) = delete;
  unsigned char* data() const { return static_cast<unsigned char*>(data_); }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

constexpr size_t round_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

// Up to kChunkSlots slots and kChunkScalars scalar entries travel inside the
// kernel's parameters (about 2 KB, under the 4 KB every architecture takes), so
// an update needs no host-to-device copy: a copy from pageable memory would
// wait for the stream, and the host would stop queueing work behind it. The
// parameter is a __grid_constant__, so indexing it reads the parameter space
// instead of copying the chunk into each thread's local memory.
constexpr int kChunkSlots = 24;
constexpr int kChunkScalars = 4;

template <class T, class Scalars>
struct SlotChunk {
  TensorSlot<T> slots[kChunkSlots];  // offsets relative to the chunk's first element
  int64_t ends[kChunkSlots];
  int64_t count;
  Scalars scalars[kChunkScalars];
};

template <class T, class Update>
__global__ void __launch_bounds__(kThreadsPerBlock)
    multi_tensor_chunk_kernel(const __grid_constant__ SlotChunk<T, typename Update::Scalars> chunk, int64_t numel,
                              Update update) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < numel; j += stride) {
    int64_t low = 0, high = chunk.count;
    while (low < high) {
      const int64_t middle = low + (high - low) / 2;
      if (chunk.ends[middle] <= j)
        low = middle + 1;
      else
        high = middle;
    }
    const TensorSlot<T> slot = chunk.slots[low];
    update(slot, j - slot.offset, chunk.scalars);
  }
}

// Stages the slot table, the slot ends and the rounded scalars: in the
// kernel's parameters, chunk by chunk, when the scalar table is small (the
// usual case: one entry per distinct step count), else in one device buffer
// (one allocation, one copy) before a single launch.
template <class T, class Update, class KernelScalars>
void launch_update(const TensorList<T>& list, const KernelScalars* host_scalars, size_t scalar_count, Update update,
                   cudaStream_t stream) {
  using Scalars = typename Update::Scalars;
  static_assert(std::is_trivially_copyable_v<TensorSlot<T>> && std::is_trivially_copyable_v<Scalars>);
  const size_t slot_count = list.slots.size();
  if (scalar_count <= static_cast<size_t>(kChunkScalars)) {
    static_assert(sizeof(SlotChunk<T, Scalars>) <= 4000, "the chunk must fit the kernel parameter space");
    SlotChunk<T, Scalars> chunk{};
    for (size_t k = 0; k < scalar_count; ++k) chunk.scalars[k] = round_scalars<T>(host_scalars[k]);
    for (size_t first = 0; first < slot_count; first += kChunkSlots) {
      const size_t count = std::min<size_t>(kChunkSlots, slot_count - first);
      const int64_t base = list.slots[first].offset;
      int64_t end = base;
      for (size_t k = 0; k < count; ++k) {
        TensorSlot<T> slot = list.slots[first + k];
        slot.offset -= base;
        chunk.slots[k] = slot;
        end = list.slots[first + k].offset + list.slots[first + k].numel;
        chunk.ends[k] = end - base;
      }
      chunk.count = static_cast<int64_t>(count);
      const int64_t numel = end - base;
      if (numel == 0) continue;
      multi_tensor_chunk_kernel<T, Update><<<blocks_for(numel), kThreadsPerBlock, 0, stream>>>(chunk, numel, update);
      GD_CUDA_LAUNCH_CHECK();
    }
    return;
  }
  const size_t slots_at = 0;
  const size_t ends_at = round_up(slots_at + slot_count * sizeof(TensorSlot<T>), alignof(int64_t));
  const size_t scalars_at = round_up(ends_at + slot_count * sizeof(int64_t), alignof(Scalars));
  const size_t total_bytes = scalars_at + scalar_count * sizeof(Scalars);

  std::vector<unsigned char> staging(total_bytes);
  std::memcpy(staging.data() + slots_at, list.slots.data(), slot_count * sizeof(TensorSlot<T>));
  for (size_t k = 0; k < slot_count; ++k) {
    const int64_t end = list.slots[k].offset + list.slots[k].numel;
    std::memcpy(staging.data() + ends_at + k * sizeof(int64_t), &end, sizeof end);
  }
  for (size_t k = 0; k < scalar_count; ++k) {
    const Scalars rounded = round_scalars<T>(host_scalars[k]);
    std::memcpy(staging.data() + scalars_at + k * sizeof(Scalars), &rounded, sizeof rounded);
  }

  StreamOrderedBuffer device_table(total_bytes, stream);
  // From pageable memory the copy is staged before it returns, so `staging` may go.
  GD_CUDA_CHECK(cudaMemcpyAsync(device_table.data(), staging.data(), total_bytes, cudaMemcpyHostToDevice, stream));
  multi_tensor_kernel<T, Update><<<blocks_for(list.numel), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const TensorSlot<T>*>(device_table.data() + slots_at),
      reinterpret_cast<const int64_t*>(device_table.data() + ends_at), static_cast<int64_t>(slot_count),
      reinterpret_cast<const Scalars*>(device_table.data() + scalars_at), list.numel, update);
  GD_CUDA_LAUNCH_CHECK();
}

// Calls f(std::bool_constant<flags>{}...) for the runtime flags, so that a
// kernel's options become template arguments (as the CPU kernels do).
template <class F, class... Done>
void with_constants_from(F& f, std::tuple<Done...>) {
  f(Done{}...);
}
template <class F, class... Done, class... Rest>
void with_constants_from(F& f, std::tuple<Done...>, bool flag, Rest... rest) {
  if (flag)
    with_constants_from(f, std::tuple<Done..., std::true_type>{}, rest...);
  else
    with_constants_from(f, std::tuple<Done..., std::false_type>{}, rest...);
}
template <class F, class... Flags>
void with_constants(F&& f, Flags... flags) {
  with_constants_from(f, std::tuple<>{}, static_cast<bool>(flags)...);
}

// Internal invariants the kernel relies on; a failure is a bug in the caller
// (optim/detail/first_order.cpp), caught here rather than as a device fault.
template <class T>
void check_list(const TensorList<T>& list, size_t scalar_count, bool indexes_scalars, const bool (&needs_state)[3],
                const char* kernel_name) {
  const std::string where = std::string("cuda multi_tensor_update (") + kernel_name + ")";
  GD_INTERNAL_ASSERT(scalar_count >= 1, where + ": no scalars");
  int64_t offset = 0;
  for (const TensorSlot<T>& slot : list.slots) {
    GD_INTERNAL_ASSERT(slot.offset == offset && slot.numel >= 0, where + ": slots are not laid out end to end");
    offset += slot.numel;
    if (slot.numel == 0) continue;
    GD_INTERNAL_ASSERT(slot.param != nullptr && slot.grad != nullptr, where + ": a slot lacks its param or grad");
    for (int k = 0; k < 3; ++k)
      GD_INTERNAL_ASSERT(!needs_state[k] || slot.state[k] != nullptr,
                         where + ": a slot lacks state buffer " + std::to_string(k));
    GD_INTERNAL_ASSERT(!indexes_scalars || slot.scalars < scalar_count,
                       where + ": a slot's scalars entry " + std::to_string(slot.scalars) + " is past the " +
                           std::to_string(scalar_count) + " given");
  }
  GD_INTERNAL_ASSERT(offset == list.numel, where + ": list.numel is not the sum of its slots' sizes");
}

template <class T>
void update_list(const SGDKernel& k, size_t scalar_count, const TensorList<T>& list, cudaStream_t stream) {
  check_list(list, scalar_count, false, {k.momentum, false, false}, "SGD");
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2, auto momentum, auto nesterov) {
        using Update = SGDUpdate<T, decltype(l2)::value, decltype(momentum)::value, decltype(nesterov)::value>;
        launch_update(list, k.scalars, scalar_count, Update{sign}, stream);
      },
      k.weight_decay, k.momentum, k.momentum && k.nesterov);
}

template <class T, AdamKernel::WeightDecay kDecay>
void adam_list_with(const AdamKernel& k, size_t scalar_count, const TensorList<T>& list, cudaStream_t stream) {
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto amsgrad) {
        using Update = AdamUpdate<T, kDecay, decltype(amsgrad)::value>;
        launch_update(list, k.scalars, scalar_count, Update{sign}, stream);
      },
      k.amsgrad);
}

template <class T>
void update_list(const AdamKernel& k, size_t scalar_count, const TensorList<T>& list, cudaStream_t stream) {
  check_list(list, scalar_count, true, {true, true, k.amsgrad}, "Adam");
  switch (k.weight_decay) {
    case AdamKernel::WeightDecay::None:
      return adam_list_with<T, AdamKernel::WeightDecay::None>(k, scalar_count, list, stream);
    case AdamKernel::WeightDecay::L2:
      return adam_list_with<T, AdamKernel::WeightDecay::L2>(k, scalar_count, list, stream);
    case AdamKernel::WeightDecay::Decoupled:
      return adam_list_with<T, AdamKernel::WeightDecay::Decoupled>(k, scalar_count, list, stream);
  }
  GD_INTERNAL_ASSERT(false, "cuda multi_tensor_update (Adam): unknown weight decay kind");
}

template <class T>
void update_list(const RMSpropKernel& k, size_t scalar_count, const TensorList<T>& list, cudaStream_t stream) {
  check_list(list, scalar_count, false, {true, k.centered, k.momentum}, "RMSprop");
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2, auto centered, auto momentum) {
        using Update = RMSpropUpdate<T, decltype(l2)::value, decltype(centered)::value, decltype(momentum)::value>;
        launch_update(list, k.scalars, scalar_count, Update{sign}, stream);
      },
      k.weight_decay, k.centered, k.momentum);
}

template <class T>
void update_list(const AdagradKernel& k, size_t scalar_count, const TensorList<T>& list, cudaStream_t stream) {
  check_list(list, scalar_count, true, {true, false, false}, "Adagrad");
  const T sign = sign_of<T>(k.maximize);
  with_constants(
      [&](auto l2) {
        using Update = AdagradUpdate<T, decltype(l2)::value>;
        launch_update(list, k.scalars, scalar_count, Update{sign}, stream);
      },
      k.weight_decay);
}

template <class T>
void update_any(const AnyKernel& kernel, size_t scalar_count, const TensorList<T>& list, StreamHandle stream) {
  if (list.numel == 0) return;
  std::visit([&](const auto& k) { update_list(k, scalar_count, list, as_cuda_stream(stream)); }, kernel);
}

}  // namespace

void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<float>& list,
                         StreamHandle stream) {
  update_any(kernel, scalar_count, list, stream);
}
void multi_tensor_update(const AnyKernel& kernel, size_t scalar_count, const TensorList<double>& list,
                         StreamHandle stream) {
  update_any(kernel, scalar_count, list, stream);
}

}  // namespace gradiens::kernels::cuda

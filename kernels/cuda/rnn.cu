// The fused LSTM/GRU cell kernels of rnn.h: one thread per (row, hidden unit),
// each computing every gate of that unit with the formulas of the CPU loops in
// nn/functional/rnn.cpp and kernels/cpu/vector_math.cpp, rounded as they are
// (multiply_rounded/add_rounded where the CPU rounds each step, fma where its
// Highway code uses MulAdd).
#include <string>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/rnn.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {
namespace {

// Arithmetic as the CPU rounds it.
using namespace rounded;

// Note [Stable sigmoid] (kernels/cpu/vector_math.cpp).
template <class T>
__device__ inline T stable_sigmoid(T x) {
  const T exp_minus_abs = math_exp(-math_abs(x));
  const T sigmoid_of_abs = T(1) / add(T(1), exp_minus_abs);
  return x < T(0) ? mul(exp_minus_abs, sigmoid_of_abs) : sigmoid_of_abs;
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    lstm_forward_kernel(const T* __restrict__ gates, const T* __restrict__ cx, int64_t hidden, int64_t total,
                        T* __restrict__ act, T* __restrict__ h, T* __restrict__ c, T* __restrict__ tanh_c) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid_stride) {
    const int64_t b = k / hidden, j = k - b * hidden;
    const T* g = gates + b * 4 * hidden;
    T* a = act + b * 4 * hidden;
    const T i = stable_sigmoid(g[j]), f = stable_sigmoid(g[hidden + j]), cell = math_tanh(g[2 * hidden + j]),
            o = stable_sigmoid(g[3 * hidden + j]);
    a[j] = i;
    a[hidden + j] = f;
    a[2 * hidden + j] = cell;
    a[3 * hidden + j] = o;
    const T c_new = add(mul(f, cx[k]), mul(i, cell));
    const T t = math_tanh(c_new);
    c[k] = c_new;
    tanh_c[k] = t;
    h[k] = mul(o, t);
  }
}

// kernels/cpu/vector_math.cpp's lstm_cell_backward_loop (its vector body).
template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    lstm_backward_kernel(const T* __restrict__ act, const T* __restrict__ tanh_c, const T* __restrict__ cprev,
                         const T* __restrict__ dh, const T* __restrict__ dc, int64_t hidden, int64_t total,
                         T* __restrict__ dgates, T* __restrict__ dcprev) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const T one = T(1);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid_stride) {
    const int64_t b = k / hidden, j = k - b * hidden;
    const T* a = act + b * 4 * hidden;
    T* dg = dgates + b * 4 * hidden;
    const T i = a[j], f = a[hidden + j], g = a[2 * hidden + j], o = a[3 * hidden + j], tc = tanh_c[k];
    const T dhv = dh ? dh[k] : T(0), dcv = dc ? dc[k] : T(0);
    const T dct = mul_add(mul(dhv, o), mul_add(-tc, tc, one), dcv);
    dg[j] = mul(mul(dct, g), mul(i, sub(one, i)));
    dg[hidden + j] = mul(mul(dct, cprev[k]), mul(f, sub(one, f)));
    dg[2 * hidden + j] = mul(mul(dct, i), mul_add(-g, g, one));
    dg[3 * hidden + j] = mul(mul(dhv, tc), mul(o, sub(one, o)));
    dcprev[k] = mul(dct, f);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    gru_forward_kernel(const T* __restrict__ gi, const T* __restrict__ gh, const T* __restrict__ hx, int64_t hidden,
                       int64_t total, T* __restrict__ act, T* __restrict__ h) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid_stride) {
    const int64_t b = k / hidden, j = k - b * hidden;
    const T* x = gi + b * 3 * hidden;
    const T* y = gh + b * 3 * hidden;
    T* a = act + b * 3 * hidden;
    const T r = stable_sigmoid(add(y[j], x[j]));
    const T z = stable_sigmoid(add(y[hidden + j], x[hidden + j]));
    const T n = math_tanh(add(x[2 * hidden + j], mul(y[2 * hidden + j], r)));
    a[j] = r;
    a[hidden + j] = z;
    a[2 * hidden + j] = n;
    h[k] = add(mul(sub(hx[k], n), z), n);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    gru_backward_kernel(const T* __restrict__ act, const T* __restrict__ gh, const T* __restrict__ hx,
                        const T* __restrict__ grad, int64_t hidden, int64_t total, T* __restrict__ dgi,
                        T* __restrict__ dgh, T* __restrict__ dhx) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const T one = T(1);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid_stride) {
    const int64_t b = k / hidden, j = k - b * hidden;
    const T* a = act + b * 3 * hidden;
    T* di = dgi + b * 3 * hidden;
    T* dhh = dgh + b * 3 * hidden;
    const T r = a[j], z = a[hidden + j], n = a[2 * hidden + j], gv = grad[k];
    const T dn = mul(mul(gv, sub(one, z)), sub(one, mul(n, n)));
    const T dz = mul(mul(mul(gv, sub(hx[k], n)), z), sub(one, z));
    const T dr = mul(mul(mul(dn, gh[b * 3 * hidden + 2 * hidden + j]), r), sub(one, r));
    di[j] = dr;
    di[hidden + j] = dz;
    di[2 * hidden + j] = dn;
    dhh[j] = dr;
    dhh[hidden + j] = dz;
    dhh[2 * hidden + j] = mul(dn, r);
    dhx[k] = mul(gv, z);
  }
}

void check_sizes(int64_t batch, int64_t hidden, const char* op) {
  GD_CHECK(batch >= 0 && hidden >= 0, std::string(op) + ": negative sizes (batch " + std::to_string(batch) +
                                          ", hidden " + std::to_string(hidden) + ")");
}

}  // namespace

void lstm_cell_forward(ScalarType dtype, const void* gates, const void* cx, int64_t batch, int64_t hidden, void* act,
                       void* h, void* c, void* tanh_c, int device) {
  check_sizes(batch, hidden, "lstm_cell");
  const int64_t total = batch * hidden;
  if (total == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_cuda_floating(dtype, "lstm_cell", [&]<class T>() {
    lstm_forward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(gates), static_cast<const T*>(cx), hidden, total, static_cast<T*>(act),
        static_cast<T*>(h), static_cast<T*>(c), static_cast<T*>(tanh_c));
    GD_CUDA_LAUNCH_CHECK();
  });
}

void lstm_cell_backward(ScalarType dtype, const void* act, const void* tanh_c, const void* cx, const void* dh,
                        const void* dc, int64_t batch, int64_t hidden, void* dgates, void* dcx, int device) {
  check_sizes(batch, hidden, "lstm_cell_backward");
  const int64_t total = batch * hidden;
  if (total == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_cuda_floating(dtype, "lstm_cell_backward", [&]<class T>() {
    lstm_backward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(act), static_cast<const T*>(tanh_c), static_cast<const T*>(cx),
        static_cast<const T*>(dh), static_cast<const T*>(dc), hidden, total, static_cast<T*>(dgates),
        static_cast<T*>(dcx));
    GD_CUDA_LAUNCH_CHECK();
  });
}

void gru_cell_forward(ScalarType dtype, const void* gi, const void* gh, const void* hx, int64_t batch, int64_t hidden,
                      void* act, void* h, int device) {
  check_sizes(batch, hidden, "gru_cell");
  const int64_t total = batch * hidden;
  if (total == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_cuda_floating(dtype, "gru_cell", [&]<class T>() {
    gru_forward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(gi), static_cast<const T*>(gh), static_cast<const T*>(hx), hidden, total,
        static_cast<T*>(act), static_cast<T*>(h));
    GD_CUDA_LAUNCH_CHECK();
  });
}

void gru_cell_backward(ScalarType dtype, const void* act, const void* gh, const void* hx, const void* grad,
                       int64_t batch, int64_t hidden, void* dgi, void* dgh, void* dhx, int device) {
  check_sizes(batch, hidden, "gru_cell_backward");
  const int64_t total = batch * hidden;
  if (total == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_cuda_floating(dtype, "gru_cell_backward", [&]<class T>() {
    gru_backward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(act), static_cast<const T*>(gh), static_cast<const T*>(hx),
        static_cast<const T*>(grad), hidden, total, static_cast<T*>(dgi), static_cast<T*>(dgh),
        static_cast<T*>(dhx));
    GD_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace gradiens::kernels::cuda

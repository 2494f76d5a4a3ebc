// The Taylor-mode kernels of jet.h: one thread per element of a jet block,
// each running the formulas of kernels/cpu/taylor.cpp over every block at that
// element, and the MLP's jet as cuBLAS GEMMs between those kernels. Where the
// CPU uses Highway's MulAdd (an FMA on AVX2/AVX-512) this uses fma; its other
// products and sums are rounded one at a time (multiply_rounded, add_rounded),
// so float64 differs from the CPU only by the ulps of tanh/exp/sin.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/jet.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {
namespace {

// ---- the plan: a JetLayout as kernel arguments --------------------------------

struct DeviceJetPlan {
  int64_t stride = 0;  // N * w: the distance between blocks
  int64_t width = 0;
  int coordinates = 0;
  bool laplacian = false;
  int laplacian_block = 0;
  int pure_order = 2;
  int forward_order = 1;  // the highest derivative of the activation the forward pass needs
  double weights[kMaxJetCoordinates] = {};      // c_i
  int pure_block[kMaxJetCoordinates] = {};      // per coordinate: its order-2 block, or -1
};

DeviceJetPlan make_plan(const JetLayout& layout, const char* op) {
  GD_CHECK(layout.samples >= 0 && layout.width > 0 && layout.coordinates >= 0,
           std::string(op) + ": bad jet layout sizes");
  GD_CHECK(layout.coordinates <= kMaxJetCoordinates,
           std::string(op) + ": the CUDA kernels carry at most " + std::to_string(kMaxJetCoordinates) +
               " coordinates, got " + std::to_string(layout.coordinates));
  GD_CHECK(layout.pure_count == 0 || (layout.pure_order >= 2 && layout.pure_order <= 4),
           std::string(op) + ": pure_order must be 2..4");
  DeviceJetPlan plan;
  plan.stride = layout.samples * layout.width;
  plan.width = layout.width;
  plan.coordinates = static_cast<int>(layout.coordinates);
  plan.laplacian = layout.laplacian;
  plan.laplacian_block = static_cast<int>(1 + layout.coordinates);
  plan.pure_order = layout.pure_order;
  for (int i = 0; i < plan.coordinates; ++i) {
    plan.weights[i] = layout.laplacian_weights ? layout.laplacian_weights[i] : 1.0;
    plan.pure_block[i] = -1;
  }
  const int64_t first_pure = 1 + layout.coordinates + (layout.laplacian ? 1 : 0);
  for (int64_t p = 0; p < layout.pure_count; ++p) {
    const int64_t dim = layout.pure_dims[p];
    GD_CHECK(dim >= 0 && dim < layout.coordinates, std::string(op) + ": pure coordinate out of range");
    plan.pure_block[dim] = static_cast<int>(first_pure + p * (layout.pure_order - 1));
  }
  plan.forward_order = layout.pure_count > 0 ? layout.pure_order : layout.laplacian ? 2 : 1;
  return plan;
}

// Arithmetic as the CPU rounds it.
using namespace rounded;

// s[k] = the k-th derivative of the activation at z, k = 0 .. highest (<= 5);
// activation_derivatives of kernels/cpu/taylor.cpp, operation for operation.
template <JetActivation kActivation, class T>
__device__ inline void activation_derivatives(T z, int highest, T (&s)[6]) {
  (void)highest;  // ReLU and sin need no bound
  for (int k = 0; k < 6; ++k) s[k] = T(0);
  if constexpr (kActivation == JetActivation::Tanh) {
    const T one = T(1);
    const T t = math_tanh(z), t2 = mul(t, t);
    s[0] = t;
    s[1] = mul(sub(one, t), add(one, t));
    if (highest >= 2) s[2] = mul(T(-2), mul(t, s[1]));
    if (highest >= 3) s[3] = mul(s[1], mul_add(T(6), t2, T(-2)));
    if (highest >= 4) s[4] = mul(mul(s[1], t), mul_add(T(-24), t2, T(16)));
    if (highest >= 5) s[5] = mul(s[1], mul_add(mul_add(T(120), t2, T(-120)), t2, T(16)));
  } else if constexpr (kActivation == JetActivation::Sigmoid || kActivation == JetActivation::Silu) {
    const T one = T(1);
    const T e = math_exp(-math_abs(z));
    const T of_abs = one / add(one, e);
    const T sigma = z < T(0) ? mul(e, of_abs) : of_abs;
    T g[6];
    g[0] = sigma;
    g[1] = mul(sigma, sub(one, sigma));
    const T q = g[1], one_minus_2sigma = mul_add(T(-2), sigma, one);
    g[2] = mul(q, one_minus_2sigma);
    g[3] = mul(q, mul_add(T(-6), q, one));
    g[4] = mul(mul(q, one_minus_2sigma), mul_add(T(-12), q, one));
    g[5] = mul(q, mul_add(mul_add(T(120), q, T(-30)), q, one));
    if constexpr (kActivation == JetActivation::Sigmoid) {
      for (int k = 0; k <= highest; ++k) s[k] = g[k];
    } else {
      // silu = z sigma: its k-th derivative is z sigma^(k) + k sigma^(k-1).
      s[0] = mul(z, sigma);
      for (int k = 1; k <= highest; ++k) s[k] = mul_add(z, g[k], mul(static_cast<T>(k), g[k - 1]));
    }
  } else if constexpr (kActivation == JetActivation::Relu) {
    const T positive = z > T(0) ? T(1) : T(0);
    s[0] = mul(positive, z);
    s[1] = positive;
  } else if constexpr (kActivation == JetActivation::Sin) {
    const T sine = math_sin(z), cosine = math_cos(z);
    s[0] = sine;
    s[1] = cosine;
    s[2] = -sine;
    s[3] = -cosine;
    s[4] = sine;
    s[5] = cosine;
  }
}

// ---- the activation kernels ---------------------------------------------------

// forward_vector of kernels/cpu/taylor.cpp for element e of every block.
template <JetActivation kActivation, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    jet_forward_kernel(DeviceJetPlan plan, const T* __restrict__ in, const T* __restrict__ bias, T* __restrict__ out) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t stride = plan.stride;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < stride; e += grid_stride) {
    const auto at = [stride, e](int64_t block) { return block * stride + e; };
    const T z = add(in[e], bias ? bias[e % plan.width] : T(0));
    T s[6];
    activation_derivatives<kActivation>(z, plan.forward_order, s);
    out[e] = s[0];
    T weighted_squares = T(0);
    for (int i = 0; i < plan.coordinates; ++i) {
      const T h1 = in[at(1 + i)];
      out[at(1 + i)] = mul(s[1], h1);
      if (plan.laplacian)
        weighted_squares = mul_add(mul(static_cast<T>(plan.weights[i]), h1), h1, weighted_squares);
      const int pure = plan.pure_block[i];
      if (pure < 0) continue;
      // Faa di Bruno along coordinate i: h1 .. h4 in, y2 .. y4 out.
      const T h1h1 = mul(h1, h1);
      const T h2 = in[at(pure)];
      out[at(pure)] = mul_add(s[1], h2, mul(s[2], h1h1));
      if (plan.pure_order < 3) continue;
      const T h3 = in[at(pure + 1)];
      const T h1h2 = mul(h1, h2);
      T y3 = mul_add(s[1], h3, mul(mul(T(3), s[2]), h1h2));
      y3 = mul_add(s[3], mul(h1h1, h1), y3);
      out[at(pure + 1)] = y3;
      if (plan.pure_order < 4) continue;
      const T h4 = in[at(pure + 2)];
      // s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4
      const T inner = mul_add(T(4), mul(h1, h3), mul(T(3), mul(h2, h2)));
      T y4 = mul_add(s[1], h4, mul(s[2], inner));
      y4 = mul_add(mul(T(6), s[3]), mul(h1h1, h2), y4);
      y4 = mul_add(s[4], mul(h1h1, h1h1), y4);
      out[at(pure + 2)] = y4;
    }
    if (plan.laplacian) {
      const T l = in[at(plan.laplacian_block)];
      out[at(plan.laplacian_block)] = mul_add(s[1], l, mul(s[2], weighted_squares));
    }
  }
}

// backward_vector of kernels/cpu/taylor.cpp for element e of every block.
template <JetActivation kActivation, class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    jet_backward_kernel(DeviceJetPlan plan, const T* __restrict__ in, const T* __restrict__ bias,
                        const T* __restrict__ grad_out, T* __restrict__ grad_in) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t stride = plan.stride;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < stride; e += grid_stride) {
    const auto at = [stride, e](int64_t block) { return block * stride + e; };
    const T z = add(in[e], bias ? bias[e % plan.width] : T(0));
    T s[6];
    activation_derivatives<kActivation>(z, plan.forward_order + 1, s);
    T grad_z = mul(grad_out[e], s[1]);
    const T g_laplacian = plan.laplacian ? grad_out[at(plan.laplacian_block)] : T(0);
    T weighted_squares = T(0);
    for (int i = 0; i < plan.coordinates; ++i) {
      const T h1 = in[at(1 + i)], g1 = grad_out[at(1 + i)];
      T grad_h1 = mul(g1, s[1]);
      grad_z = mul_add(mul(g1, s[2]), h1, grad_z);
      if (plan.laplacian) {
        const T weighted_h1 = mul(static_cast<T>(plan.weights[i]), h1);
        weighted_squares = mul_add(weighted_h1, h1, weighted_squares);
        grad_h1 = mul_add(mul(g_laplacian, s[2]), add(weighted_h1, weighted_h1), grad_h1);
      }
      const int pure = plan.pure_block[i];
      if (pure >= 0) {
        const T h1h1 = mul(h1, h1);
        const T h2 = in[at(pure)], g2 = grad_out[at(pure)];
        // y2 = s' h2 + s'' h1^2
        grad_z = mul_add(g2, mul_add(s[2], h2, mul(s[3], h1h1)), grad_z);
        grad_h1 = mul_add(mul(g2, T(2)), mul(s[2], h1), grad_h1);
        T grad_h2 = mul(g2, s[1]);
        if (plan.pure_order >= 3) {
          // y3 = s' h3 + 3 s'' h1 h2 + s''' h1^3
          const T h3 = in[at(pure + 1)], g3 = grad_out[at(pure + 1)];
          const T h1h2 = mul(h1, h2);
          T dz3 = mul_add(s[2], h3, mul(T(3), mul(s[3], h1h2)));
          dz3 = mul_add(s[4], mul(h1h1, h1), dz3);
          grad_z = mul_add(g3, dz3, grad_z);
          grad_h1 = mul_add(mul(g3, T(3)), mul_add(s[2], h2, mul(s[3], h1h1)), grad_h1);
          grad_h2 = mul_add(mul(g3, T(3)), mul(s[2], h1), grad_h2);
          T grad_h3 = mul(g3, s[1]);
          if (plan.pure_order >= 4) {
            // y4 = s' h4 + s''(4 h1 h3 + 3 h2^2) + 6 s''' h1^2 h2 + s'''' h1^4
            const T h4 = in[at(pure + 2)], g4 = grad_out[at(pure + 2)];
            const T inner = mul_add(T(4), mul(h1, h3), mul(T(3), mul(h2, h2)));
            T dz4 = mul_add(s[2], h4, mul(s[3], inner));
            dz4 = mul_add(mul(T(6), s[4]), mul(h1h1, h2), dz4);
            dz4 = mul_add(s[5], mul(h1h1, h1h1), dz4);
            grad_z = mul_add(g4, dz4, grad_z);
            // d y4 / d h1 = 4 s'' h3 + 12 s''' h1 h2 + 4 s'''' h1^3
            T dh1 = mul_add(T(4), mul(s[2], h3), mul(T(12), mul(s[3], h1h2)));
            dh1 = mul_add(mul(T(4), s[4]), mul(h1h1, h1), dh1);
            grad_h1 = mul_add(g4, dh1, grad_h1);
            // d y4 / d h2 = 6 s'' h2 + 6 s''' h1^2
            grad_h2 = mul_add(mul(g4, T(6)), mul_add(s[2], h2, mul(s[3], h1h1)), grad_h2);
            grad_h3 = mul_add(mul(g4, T(4)), mul(s[2], h1), grad_h3);
            grad_in[at(pure + 2)] = mul(g4, s[1]);
          }
          grad_in[at(pure + 1)] = grad_h3;
        }
        grad_in[at(pure)] = grad_h2;
      }
      grad_in[at(1 + i)] = grad_h1;
    }
    if (plan.laplacian) {
      // L' = s' L + s'' sum_i c_i G_i^2
      const T l = in[at(plan.laplacian_block)];
      grad_z = mul_add(g_laplacian, mul_add(s[2], l, mul(s[3], weighted_squares)), grad_z);
      grad_in[at(plan.laplacian_block)] = mul(g_laplacian, s[1]);
    }
    grad_in[e] = grad_z;
  }
}

template <class F>
void dispatch_activation(JetActivation activation, F&& f) {
  switch (activation) {
    case JetActivation::Tanh: return f.template operator()<JetActivation::Tanh>();
    case JetActivation::Sigmoid: return f.template operator()<JetActivation::Sigmoid>();
    case JetActivation::Silu: return f.template operator()<JetActivation::Silu>();
    case JetActivation::Relu: return f.template operator()<JetActivation::Relu>();
    case JetActivation::Sin: return f.template operator()<JetActivation::Sin>();
  }
  throw Error("jet_activation: unknown activation " + std::to_string(static_cast<int>(activation)));
}

template <class T>
void launch_jet_forward(JetActivation activation, const JetLayout& layout, const T* jet, const T* bias, T* out,
                        int device) {
  const DeviceJetPlan plan = make_plan(layout, "jet_activation");
  if (plan.stride == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_activation(activation, [&]<JetActivation kActivation>() {
    jet_forward_kernel<kActivation, T><<<blocks_for(plan.stride), kThreadsPerBlock, 0, stream>>>(plan, jet, bias, out);
    GD_CUDA_LAUNCH_CHECK();
  });
}

template <class T>
void launch_jet_backward(JetActivation activation, const JetLayout& layout, const T* jet, const T* bias,
                         const T* grad_out, T* grad_jet, int device) {
  const DeviceJetPlan plan = make_plan(layout, "jet_activation_backward");
  if (plan.stride == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  dispatch_activation(activation, [&]<JetActivation kActivation>() {
    jet_backward_kernel<kActivation, T>
        <<<blocks_for(plan.stride), kThreadsPerBlock, 0, stream>>>(plan, jet, bias, grad_out, grad_jet);
    GD_CUDA_LAUNCH_CHECK();
  });
}

// ---- the MLP ----------------------------------------------------------------------

// Device memory from the caching allocator for the life of one call; freeing
// is stream-ordered, so the kernels queued on it finish first.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(int64_t count, int device) : device_(device) {
    if (count > 0) data_ = static_cast<T*>(device_malloc(static_cast<size_t>(count) * sizeof(T), device));
  }
  ~DeviceBuffer() {
    if (data_) device_free(data_, device_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), device_(other.device_) { other.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  int device_ = 0;
};

// seed [K, N, d]: block 0 = x, block 1 + i = e_i in every row, zeros above.
template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    seed_jet_kernel(const T* __restrict__ x, int64_t samples, int64_t coordinates, int64_t total, T* __restrict__ seed) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t per_block = samples * coordinates;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += grid_stride) {
    const int64_t block = index / per_block, within = index - block * per_block;
    const int64_t column = within % coordinates;
    T value = T(0);
    if (block == 0) value = x[within];
    else if (block - 1 == column) value = T(1);
    seed[index] = value;
  }
}

// The value block's rows [N, width] += bias [width].
template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    add_bias_kernel(T* __restrict__ values, const T* __restrict__ bias, int64_t width, int64_t total) {
  const int64_t grid_stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += grid_stride)
    values[index] = add(values[index], bias[index % width]);
}

constexpr ScalarType dtype_of(float*) { return ScalarType::Float32; }
constexpr ScalarType dtype_of(double*) { return ScalarType::Float64; }

template <class T>
class JetMlpOnDevice {
 public:
  JetMlpOnDevice(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, int device)
      : layout_(layout), layers_(layers), count_(count), device_(device), blocks_(layout.blocks()) {
    GD_CHECK(layout.samples >= 0 && layout.coordinates >= 0, "jet_mlp: bad layout sizes");
    int64_t width = layout.coordinates;
    max_width_ = width;
    for (int64_t l = 0; l < count; ++l) {
      if (layers[l].linear) width = layers[l].out_features;
      widths_.push_back(width);
      max_width_ = std::max(max_width_, width);
    }
  }
  int64_t out_width() const { return widths_.empty() ? layout_.coordinates : widths_.back(); }
  int64_t samples() const { return layout_.samples; }
  int64_t blocks() const { return blocks_; }

  // Every layer's output jet [K, N, width_l] into outputs_, the input jet into seed_.
  void forward(const T* x) {
    const int64_t n = layout_.samples, d = layout_.coordinates;
    const cudaStream_t stream = as_cuda_stream(current_stream(device_));
    seed_.emplace_back(blocks_ * n * d, device_);
    if (const int64_t total = blocks_ * n * d; total > 0) {
      seed_jet_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(x, n, d, total, seed_.back().get());
      GD_CUDA_LAUNCH_CHECK();
    }
    const T* in = seed_.back().get();
    int64_t width = d;
    for (int64_t l = 0; l < count_; ++l) {
      const JetMlpLayer<T>& layer = layers_[l];
      outputs_.emplace_back(blocks_ * n * widths_[l], device_);
      T* out = outputs_.back().get();
      if (layer.linear) {
        gemm(dtype_of(out), false, true, blocks_ * n, layer.out_features, width, 1.0, in, width, layer.weight, width,
             0.0, out, layer.out_features, device_);
        if (layer.bias && n > 0) {  // the value block only
          const int64_t total = n * layer.out_features;
          add_bias_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(out, layer.bias, layer.out_features,
                                                                                 total);
          GD_CUDA_LAUNCH_CHECK();
        }
      } else {
        launch_jet_forward<T>(layer.activation, block_layout(width), in, nullptr, out, device_);
      }
      in = out;
      width = widths_[l];
    }
  }
  const T* output() const { return count_ > 0 ? outputs_.back().get() : seed_.back().get(); }

  // After forward(): the gradients of <grad, output>; JetMlp::backward of
  // kernels/cpu/taylor.cpp over all N samples at once.
  void backward(const T* grad, T* grad_x, T* const* grad_weight, T* const* grad_bias) {
    const int64_t n = layout_.samples, d = layout_.coordinates;
    const cudaStream_t stream = as_cuda_stream(current_stream(device_));
    DeviceBuffer<T> buffer_a(blocks_ * n * max_width_, device_), buffer_b(blocks_ * n * max_width_, device_);
    const T* g = grad;
    T* next = buffer_a.get();
    T* spare = buffer_b.get();
    for (int64_t l = count_ - 1; l >= 0; --l) {
      const JetMlpLayer<T>& layer = layers_[l];
      const T* in = l > 0 ? outputs_[static_cast<size_t>(l - 1)].get() : seed_.back().get();
      const int64_t width_in = l > 0 ? widths_[static_cast<size_t>(l - 1)] : d;
      if (layer.linear) {
        const int64_t out_features = layer.out_features;
        if (grad_weight[l])
          gemm(dtype_of(grad_weight[l]), true, false, out_features, width_in, blocks_ * n, 1.0, g, out_features, in,
               width_in, 0.0, grad_weight[l], width_in, device_);
        if (grad_bias[l]) {  // the sum of the value block's rows: [w, N] reduced over N
          Shape shape;
          shape.ndim = 2;
          shape.sizes[0] = out_features;
          shape.sizes[1] = n;
          Strided rows;
          rows.data = const_cast<T*>(g);
          rows.strides[0] = 1;
          rows.strides[1] = out_features;
          reduce(Reduce::Sum, dtype_of(grad_bias[l]), rows, shape, 1, dtype_of(grad_bias[l]), grad_bias[l],
                 current_stream(device_));
        }
        // Below the first layer only the value block of the seed depends on x.
        if (l == 0 && !grad_x) return;
        const int64_t grad_rows = l > 0 ? blocks_ * n : n;
        gemm(dtype_of(next), false, false, grad_rows, width_in, out_features, 1.0, g, out_features, layer.weight,
             width_in, 0.0, next, width_in, device_);
      } else {
        if (l == 0 && !grad_x) return;
        launch_jet_backward<T>(layer.activation, block_layout(width_in), in, nullptr, g, next, device_);
      }
      g = next;
      std::swap(next, spare);
    }
    if (grad_x && n * d > 0)
      GD_CUDA_CHECK(cudaMemcpyAsync(grad_x, g, static_cast<size_t>(n * d) * sizeof(T), cudaMemcpyDeviceToDevice,
                                    stream));
  }

 private:
  JetLayout block_layout(int64_t width) const {
    JetLayout layout = layout_;
    layout.width = width;
    return layout;
  }

  JetLayout layout_;
  const JetMlpLayer<T>* layers_;
  int64_t count_;
  int device_;
  int64_t blocks_;
  int64_t max_width_ = 0;
  std::vector<int64_t> widths_;  // each layer's output width
  std::vector<DeviceBuffer<T>> seed_;  // one buffer (a vector, for the move-only type)
  std::vector<DeviceBuffer<T>> outputs_;
};

void check_mlp_layout(const JetLayout& layout) {
  GD_CHECK(layout.coordinates <= kMaxJetCoordinates,
           "jet_mlp: the CUDA kernels carry at most " + std::to_string(kMaxJetCoordinates) + " coordinates, got " +
               std::to_string(layout.coordinates));
  JetLayout checked = layout;
  checked.width = 1;
  make_plan(checked, "jet_mlp");
}

}  // namespace

void jet_activation_forward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                            const void* bias, void* out, int device) {
  dispatch_cuda_floating(dtype, "jet_activation", [&]<class T>() {
    launch_jet_forward<T>(activation, layout, static_cast<const T*>(jet), static_cast<const T*>(bias),
                          static_cast<T*>(out), device);
  });
}

void jet_activation_backward(ScalarType dtype, JetActivation activation, const JetLayout& layout, const void* jet,
                             const void* bias, const void* grad_out, void* grad_jet, int device) {
  dispatch_cuda_floating(dtype, "jet_activation_backward", [&]<class T>() {
    launch_jet_backward<T>(activation, layout, static_cast<const T*>(jet), static_cast<const T*>(bias),
                           static_cast<const T*>(grad_out), static_cast<T*>(grad_jet), device);
  });
}

template <class T>
void jet_mlp_forward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x, T* out,
                     int device) {
  check_mlp_layout(layout);
  DeviceGuard guard(device);
  JetMlpOnDevice<T> mlp(layout, layers, count, device);
  const int64_t total = mlp.blocks() * mlp.samples() * mlp.out_width();
  if (total == 0) return;
  mlp.forward(x);
  GD_CUDA_CHECK(cudaMemcpyAsync(out, mlp.output(), static_cast<size_t>(total) * sizeof(T), cudaMemcpyDeviceToDevice,
                                as_cuda_stream(current_stream(device))));
}

template <class T>
void jet_mlp_backward(const JetLayout& layout, const JetMlpLayer<T>* layers, int64_t count, const T* x,
                      const T* grad_out, T* grad_x, T* const* grad_weight, T* const* grad_bias, int device) {
  check_mlp_layout(layout);
  DeviceGuard guard(device);
  const cudaStream_t stream = as_cuda_stream(current_stream(device));
  if (layout.samples == 0) {  // no samples: every gradient is zero
    for (int64_t l = 0; l < count; ++l) {
      if (!layers[l].linear) continue;
      if (grad_weight[l] && layers[l].out_features * layers[l].in_features > 0)
        GD_CUDA_CHECK(cudaMemsetAsync(grad_weight[l], 0,
                                      static_cast<size_t>(layers[l].out_features * layers[l].in_features) * sizeof(T),
                                      stream));
      if (grad_bias[l] && layers[l].out_features > 0)
        GD_CUDA_CHECK(
            cudaMemsetAsync(grad_bias[l], 0, static_cast<size_t>(layers[l].out_features) * sizeof(T), stream));
    }
    return;
  }
  JetMlpOnDevice<T> mlp(layout, layers, count, device);
  mlp.forward(x);
  mlp.backward(grad_out, grad_x, grad_weight, grad_bias);
}

template void jet_mlp_forward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*, double*,
                                      int);
template void jet_mlp_forward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*, float*, int);
template void jet_mlp_backward<double>(const JetLayout&, const JetMlpLayer<double>*, int64_t, const double*,
                                       const double*, double*, double* const*, double* const*, int);
template void jet_mlp_backward<float>(const JetLayout&, const JetMlpLayer<float>*, int64_t, const float*,
                                      const float*, float*, float* const*, float* const*, int);

}  // namespace gradiens::kernels::cuda

// conv2d forward, backward-data and backward-filter on the GPU: float32,
// float16 and bfloat16 through cuDNN 9's graph (backend) API (float compute
// type, as PyTorch), float64 handed to im2col + cuBLAS (im2col.cu).
// cuDNN is loaded on first use (dlopen, as blas.cpp loads cuBLAS), so binaries
// start without it. One cudnnHandle per (thread, device) set to the current
// stream; one execution plan per (pass, dtype, geometry, alignment, TF32,
// determinism, device) and thread, built from the heuristics' engine configs in order, the
// first that finalizes (Note [cuDNN engine filter]).
#include <cudnn_graph.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/library.h"
#include "kernels/cuda/conv.h"
#include "kernels/cuda/runtime.h"

namespace gradiens::kernels::cuda {

namespace {

constexpr int kMaxDevices = 16;
// Plans that want more workspace than this are passed over.
constexpr int64_t kMaxWorkspaceBytes = int64_t(4) << 30;

// The cuDNN entry points gradiens calls, resolved from the shared library.
struct CudnnApi {
  decltype(&cudnnGetVersion) get_version;
  decltype(&cudnnCreate) create;
  decltype(&cudnnSetStream) set_stream;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnGetLastErrorString) last_error_string;
  decltype(&cudnnBackendCreateDescriptor) create_descriptor;
  decltype(&cudnnBackendDestroyDescriptor) destroy_descriptor;
  decltype(&cudnnBackendFinalize) finalize;
  decltype(&cudnnBackendSetAttribute) set_attribute;
  decltype(&cudnnBackendGetAttribute) get_attribute;
  decltype(&cudnnBackendExecute) execute;
};

const CudnnApi& cudnn() {
  static const CudnnApi api = [] {
    std::string error;
    void* library = open_library("libcudnn.so.9", "libcudnn.so", &error);
    GD_CHECK(library != nullptr,
             "cuDNN could not be loaded (libcudnn.so.9), which float32 convolutions on CUDA need: " + error);
    CudnnApi a{};
    resolve(library, "cudnnGetVersion", a.get_version, "cuDNN");
    resolve(library, "cudnnCreate", a.create, "cuDNN");
    resolve(library, "cudnnSetStream", a.set_stream, "cuDNN");
    resolve(library, "cudnnGetErrorString", a.error_string, "cuDNN");
    resolve(library, "cudnnGetLastErrorString", a.last_error_string, "cuDNN");
    resolve(library, "cudnnBackendCreateDescriptor", a.create_descriptor, "cuDNN");
    resolve(library, "cudnnBackendDestroyDescriptor", a.destroy_descriptor, "cuDNN");
    resolve(library, "cudnnBackendFinalize", a.finalize, "cuDNN");
    resolve(library, "cudnnBackendSetAttribute", a.set_attribute, "cuDNN");
    resolve(library, "cudnnBackendGetAttribute", a.get_attribute, "cuDNN");
    resolve(library, "cudnnBackendExecute", a.execute, "cuDNN");
    GD_CHECK(a.get_version() >= 90000, "cuDNN 9 or later is needed, found version " +
                                           std::to_string(a.get_version()));
    return a;  // the library stays loaded for the life of the process
  }();
  return api;
}

std::string status_text(cudnnStatus_t status) {
  std::string text = cudnn().error_string(status);
  char detail[512] = {};
  cudnn().last_error_string(detail, sizeof detail);
  if (detail[0] != '\0') text += std::string(": ") + detail;
  return text;
}

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) throw Error(std::string("cuDNN error in ") + what + ": " + status_text(status));
}

// One backend descriptor, destroyed with its owner unless released (plans in
// the cache keep theirs for the life of the process).
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    check_cudnn(cudnn().create_descriptor(type, &descriptor_), "cudnnBackendCreateDescriptor");
  }
  ~Descriptor() {
    if (descriptor_ != nullptr) cudnn().destroy_descriptor(descriptor_);
  }
  Descriptor(Descriptor&& other) noexcept : descriptor_(other.descriptor_) { other.descriptor_ = nullptr; }
  Descriptor& operator=(Descriptor&& other) noexcept {
    if (this != &other) {
      if (descriptor_ != nullptr) cudnn().destroy_descriptor(descriptor_);
      descriptor_ = other.descriptor_;
      other.descriptor_ = nullptr;
    }
    return *this;
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return descriptor_; }
  cudnnBackendDescriptor_t release() {
    cudnnBackendDescriptor_t d = descriptor_;
    descriptor_ = nullptr;
    return d;
  }

  template <class T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values, int64_t count,
           const char* what) {
    check_cudnn(cudnn().set_attribute(descriptor_, name, type, count, values), what);
  }
  void set_descriptor(cudnnBackendAttributeName_t name, const Descriptor& value, const char* what) {
    cudnnBackendDescriptor_t d = value.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &d, 1, what);
  }
  void finalize(const char* what) { check_cudnn(cudnn().finalize(descriptor_), what); }

 private:
  cudnnBackendDescriptor_t descriptor_ = nullptr;
};

cudnnHandle_t handle_for(int device) {
  thread_local std::array<cudnnHandle_t, kMaxDevices> handles{};
  GD_CHECK(device >= 0 && device < kMaxDevices, "cuDNN: device index out of range");
  // Never destroyed: the CUDA runtime may be gone by the time thread_local destructors run.
  if (handles[device] == nullptr) check_cudnn(cudnn().create(&handles[device]), "cudnnCreate");
  check_cudnn(cudnn().set_stream(handles[device], static_cast<cudaStream_t>(current_stream(device))),
              "cudnnSetStream");
  return handles[device];
}

enum class Pass : int64_t { Forward, BackwardData, BackwardFilter };

// The largest power of two up to 16 that divides the address.
int64_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int64_t alignment = 16;
  while (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

cudnnDataType_t cudnn_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return CUDNN_DATA_HALF;
    case ScalarType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// A dense 4-d tensor [n, c, h, w] of `dtype` in `layout`.
Descriptor tensor_descriptor(int64_t uid, ScalarType dtype, const std::array<int64_t, 4>& dims, ConvLayout layout,
                             int64_t alignment) {
  const int64_t c = dims[1], h = dims[2], w = dims[3];
  const std::array<int64_t, 4> strides = layout == ConvLayout::NCHW
                                             ? std::array<int64_t, 4>{c * h * w, h * w, w, 1}
                                             : std::array<int64_t, 4>{h * w * c, 1, w * c, c};
  Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = cudnn_type(dtype);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type, 1, "tensor data type");
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4, "tensor dimensions");
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4, "tensor strides");
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid, 1, "tensor unique id");
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment, 1, "tensor byte alignment");
  t.finalize("cudnnBackendFinalize(tensor)");
  return t;
}

Descriptor convolution_descriptor(const Conv2dGeometry& g) {
  Descriptor c(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial_dims = 2;
  const std::array<int64_t, 2> padding{g.pad_h, g.pad_w}, dilation{g.dilation_h, g.dilation_w},
      stride{g.stride_h, g.stride_w};
  c.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute, 1, "convolution compute type");
  c.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode, 1, "convolution mode");
  c.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial_dims, 1, "convolution spatial dims");
  c.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, padding.data(), 2, "convolution pre-paddings");
  c.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, padding.data(), 2, "convolution post-paddings");
  c.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dilation.data(), 2, "convolution dilations");
  c.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, stride.data(), 2, "convolution strides");
  c.finalize("cudnnBackendFinalize(convolution)");
  return c;
}

// Tensor unique ids in the variant pack.
constexpr int64_t kInputUid = 1, kWeightUid = 2, kOutputUid = 3;

// One cached execution plan: its descriptors live as long as the process.
struct Plan {
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspace_bytes = 0;
};

// Note [cuDNN engine filter]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// As PyTorch (Conv_v8.cpp) and cudnn-frontend's deselect_numeric_notes do: an
// engine that down-converts its inputs is never taken; one with the
// TENSOR_CORE note (TF32 for float32) only when allow_tf32(); one with the
// NONDETERMINISTIC note not when deterministic algorithms are asked for.
// float16 and bfloat16 take tensor-core engines always (they accumulate in
// float32, the compute type), as PyTorch does.
// Engines that compile at run time (NVRTC, seconds per plan) are tried only
// when no precompiled one finalizes.
bool has_note(cudnnBackendDescriptor_t engine, cudnnBackendAttributeName_t attribute,
              cudnnBackendAttributeType_t type, int note_count, int wanted) {
  std::vector<int32_t> notes(static_cast<size_t>(note_count) + 1);  // the enums are int-sized
  int64_t count = 0;
  if (cudnn().get_attribute(engine, attribute, type, note_count, &count, notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < count && i < note_count; ++i)
    if (notes[static_cast<size_t>(i)] == wanted) return true;
  return false;
}

struct EngineFilter {
  bool allow_tensor_core;
  bool deterministic;
  bool allow_runtime_compilation;
  bool accepts(cudnnBackendDescriptor_t config) const {
    Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t e = engine.get();
    int64_t count = 0;
    if (cudnn().get_attribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &e) !=
            CUDNN_STATUS_SUCCESS ||
        count != 1)
      return false;
    auto numerical = [&](cudnnBackendNumericalNote_t note) {
      return has_note(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                      note);
    };
    if (numerical(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) return false;
    if (!allow_tensor_core && numerical(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) return false;
    if (deterministic && numerical(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)) return false;
    if (!allow_runtime_compilation &&
        has_note(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT,
                 CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION))
      return false;
    return true;
  }
};

// The heuristics' engine configs for the graph in `mode` (empty when the mode
// has none for it).
std::vector<Descriptor> engine_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode) {
  std::vector<Descriptor> configs;
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "heuristics operation graph");
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode, 1, "heuristics mode");
  if (cudnn().finalize(heuristics.get()) != CUDNN_STATUS_SUCCESS) return configs;
  int64_t count = 0;
  if (cudnn().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                            nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return configs;
  for (int64_t i = 0; i < count; ++i) configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Descriptor& c : configs) raw.push_back(c.get());
  int64_t returned = 0;
  check_cudnn(cudnn().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    count, &returned, raw.data()),
              "cudnnBackendGetAttribute(heuristics results)");
  configs.erase(configs.begin() + std::clamp<int64_t>(returned, 0, count), configs.end());
  return configs;
}

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::Forward: return "conv2d forward";
    case Pass::BackwardData: return "conv2d backward of the input";
    case Pass::BackwardFilter: return "conv2d backward of the weight";
  }
  return "conv2d";
}

// Builds the plan for one pass: the tensors, the convolution, the operation,
// the graph, then the first engine config that passes the filter and finalizes.
Plan build_plan(Pass pass, ScalarType dtype, const Conv2dGeometry& g, const std::array<int64_t, 3>& alignments,
                bool deterministic, cudnnHandle_t handle) {
  const std::array<int64_t, 4> x_dims{g.batch, g.in_channels, g.in_h, g.in_w};
  const std::array<int64_t, 4> w_dims{g.out_channels, g.in_channels / g.groups, g.kernel_h, g.kernel_w};
  const std::array<int64_t, 4> y_dims{g.batch, g.out_channels, g.out_h, g.out_w};
  Descriptor x = tensor_descriptor(kInputUid, dtype, x_dims, g.layout, alignments[0]);
  Descriptor w = tensor_descriptor(kWeightUid, dtype, w_dims, g.layout, alignments[1]);
  Descriptor y = tensor_descriptor(kOutputUid, dtype, y_dims, g.layout, alignments[2]);
  Descriptor convolution = convolution_descriptor(g);
  const float alpha = 1.0f, beta = 0.0f;
  std::unique_ptr<Descriptor> operation;
  switch (pass) {
    case Pass::Forward:
      operation = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x, "forward x");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w, "forward w");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y, "forward y");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, convolution, "forward conv");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha, 1, "forward alpha");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta, 1, "forward beta");
      break;
    case Pass::BackwardData:
      operation = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x, "backward data dx");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w, "backward data w");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y, "backward data dy");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, convolution,
                                "backward data conv");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, &alpha, 1,
                     "backward data alpha");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, &beta, 1, "backward data beta");
      break;
    case Pass::BackwardFilter:
      operation = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x, "backward filter x");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w, "backward filter dw");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y, "backward filter dy");
      operation->set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, convolution,
                                "backward filter conv");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, &alpha, 1,
                     "backward filter alpha");
      operation->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, &beta, 1,
                     "backward filter beta");
      break;
  }
  operation->finalize("cudnnBackendFinalize(convolution operation)");

  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnBackendDescriptor_t op = operation->get();
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &op, 1, "operation graph ops");
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle, 1, "operation graph handle");
  graph.finalize("cudnnBackendFinalize(operation graph)");

  std::vector<Descriptor> candidates = engine_configs(graph, CUDNN_HEUR_MODE_A);
  for (Descriptor& c : engine_configs(graph, CUDNN_HEUR_MODE_FALLBACK)) candidates.push_back(std::move(c));
  std::string last_failure = "no engine configuration was proposed";
  for (bool allow_runtime_compilation : {false, true}) {
    const EngineFilter filter{allow_tf32() || dtype != kFloat32, deterministic, allow_runtime_compilation};
    for (const Descriptor& config : candidates) {
      if (!filter.accepts(config.get())) continue;
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, "execution plan engine config");
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle, 1, "execution plan handle");
      const cudnnStatus_t status = cudnn().finalize(plan.get());
      if (status != CUDNN_STATUS_SUCCESS) {
        last_failure = status_text(status);
        continue;
      }
      int64_t workspace = 0, count = 0;
      check_cudnn(cudnn().get_attribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                        &count, &workspace),
                  "cudnnBackendGetAttribute(workspace size)");
      if (workspace > kMaxWorkspaceBytes) continue;
      // The plan may refer to the descriptors it was built from: they stay alive with it.
      for (Descriptor* d : {&x, &w, &y, &convolution, operation.get(), &graph}) d->release();
      for (Descriptor& c : candidates) c.release();
      return {plan.release(), workspace};
    }
  }
  throw Error(std::string("cuDNN has no engine for this ") + pass_name(pass) + " (" + std::string(dtype_name(dtype)) +
              ", " +
              (g.layout == ConvLayout::NHWC ? "channels_last" : "contiguous") + ", TF32 " +
              (allow_tf32() ? "allowed" : "off") + (deterministic ? ", deterministic" : "") +
              "); last failure: " + last_failure);
}

using PlanKey = std::array<int64_t, 25>;

PlanKey plan_key(Pass pass, ScalarType dtype, const Conv2dGeometry& g, const std::array<int64_t, 3>& alignments,
                 bool deterministic, int device) {
  return {static_cast<int64_t>(pass), static_cast<int64_t>(dtype), g.batch, g.in_channels, g.in_h, g.in_w, g.out_channels, g.kernel_h,
          g.kernel_w, g.out_h, g.out_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w,
          g.groups, static_cast<int64_t>(g.layout), alignments[0], alignments[1], alignments[2], deterministic,
          allow_tf32(), device};
}

// Runs one pass on (x, w, y) = (input or its gradient, weight or its gradient,
// output or its gradient) on the current stream.
void run_cudnn(Pass pass, ScalarType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* y,
               int device, bool deterministic) {
  DeviceGuard guard(device);
  cudnnHandle_t handle = handle_for(device);
  const std::array<int64_t, 3> alignments{alignment_of(x), alignment_of(w), alignment_of(y)};
  thread_local std::map<PlanKey, Plan> plans;
  const PlanKey key = plan_key(pass, dtype, g, alignments, deterministic, device);
  auto found = plans.find(key);
  if (found == plans.end())
    found = plans.emplace(key, build_plan(pass, dtype, g, alignments, deterministic, handle)).first;
  const Plan& plan = found->second;
  void* workspace =
      plan.workspace_bytes > 0 ? device_malloc(static_cast<size_t>(plan.workspace_bytes), device) : nullptr;
  try {
    Descriptor variant_pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    std::array<void*, 3> pointers{const_cast<void*>(x), const_cast<void*>(w), const_cast<void*>(y)};
    const std::array<int64_t, 3> uids{kInputUid, kWeightUid, kOutputUid};
    variant_pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(), 3,
                     "variant pack data pointers");
    variant_pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(), 3, "variant pack unique ids");
    variant_pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace, 1, "variant pack workspace");
    variant_pack.finalize("cudnnBackendFinalize(variant pack)");
    check_cudnn(cudnn().execute(handle, plan.plan, variant_pack.get()),
                (std::string("cudnnBackendExecute(") + pass_name(pass) + ")").c_str());
  } catch (...) {
    if (workspace) device_free(workspace, device);
    throw;
  }
  // Freed at once: the caching allocator hands it out again only on this stream, after this work.
  if (workspace) device_free(workspace, device);
}

bool empty_conv(const Conv2dGeometry& g) {
  return g.batch == 0 || g.in_channels == 0 || g.out_channels == 0 || g.in_h == 0 || g.in_w == 0 || g.out_h == 0 ||
         g.out_w == 0;
}

void fill_zero(ScalarType dtype, void* out, int64_t n, int device) {
  if (n > 0) fill(dtype, out, n, Number::of_real(0.0), current_stream(device));
}

void check_conv(ScalarType dtype, const Conv2dGeometry& g, const char* op) {
  GD_CHECK(is_floating_point(dtype), std::string(op) + " on CUDA supports float32, float64, float16 and bfloat16, not " +
                                         std::string(dtype_name(dtype)));
  GD_CHECK(dtype != kFloat64 || g.layout == ConvLayout::NCHW,
           std::string(op) + " on CUDA: float64 convolutions take NCHW buffers");
  GD_CHECK(g.groups > 0 && g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0,
           std::string(op) + ": channels not divisible by groups");
}

}  // namespace

int64_t cudnn_version() { return static_cast<int64_t>(cudnn().get_version()); }

void conv2d_forward(ScalarType dtype, const Conv2dGeometry& g, const void* input, const void* weight, void* output,
                    int device, bool deterministic) {
  check_conv(dtype, g, "conv2d");
  if (empty_conv(g)) return fill_zero(dtype, output, g.batch * g.out_channels * g.out_h * g.out_w, device);
  if (dtype == kFloat64)
    return conv2d_forward_gemm(g, static_cast<const double*>(input), static_cast<const double*>(weight),
                               static_cast<double*>(output), device);
  run_cudnn(Pass::Forward, dtype, g, input, weight, output, device, deterministic);
}

void conv2d_backward_input(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* weight,
                           void* grad_input, int device, bool deterministic) {
  check_conv(dtype, g, "conv2d_backward_input");
  if (empty_conv(g)) return fill_zero(dtype, grad_input, g.batch * g.in_channels * g.in_h * g.in_w, device);
  if (dtype == kFloat64)
    return conv2d_backward_input_gemm(g, static_cast<const double*>(grad_output), static_cast<const double*>(weight),
                                      static_cast<double*>(grad_input), device);
  run_cudnn(Pass::BackwardData, dtype, g, grad_input, weight, grad_output, device, deterministic);
}

void conv2d_backward_weight(ScalarType dtype, const Conv2dGeometry& g, const void* grad_output, const void* input,
                            void* grad_weight, int device, bool deterministic) {
  check_conv(dtype, g, "conv2d_backward_weight");
  if (empty_conv(g))
    return fill_zero(dtype, grad_weight, g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w,
                     device);
  if (dtype == kFloat64)
    return conv2d_backward_weight_gemm(g, static_cast<const double*>(grad_output), static_cast<const double*>(input),
                                       static_cast<double*>(grad_weight), device);
  run_cudnn(Pass::BackwardFilter, dtype, g, input, grad_weight, grad_output, device, deterministic);
}

}  // namespace gradiens::kernels::cuda

// The recurrent layers RNN, LSTM and GRU (stacked, bidirectional, on a padded
// Tensor or a PackedSequence) and the cells RNNCell, LSTMCell and GRUCell, as
// libtorch's, with PyTorch's parameter names so that state_dicts transfer.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nn/cloneable.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/modules/any_value.h"
#include "nn/utils/rnn.h"

namespace gradiens::nn {

using init::kReLU;
using init::kTanh;

// RNN's nonlinearity: kTanh, kReLU, or PyTorch's name ("tanh", "relu"). Any
// other is PyTorch's error ("Unknown nonlinearity 'x'") when the module is built.
class RNNNonlinearity {
 public:
  RNNNonlinearity(init::Nonlinearity kind);
  RNNNonlinearity(const char* name) : name_(name) {}
  RNNNonlinearity(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// The options RNN, LSTM and GRU share (libtorch's RNNOptionsBase).
template <class Derived>
struct RNNOptionsCommon {
  RNNOptionsCommon(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  Derived& num_layers(int64_t v) { return set(num_layers_, v); }
  Derived& bias(bool v) { return set(bias_, v); }
  Derived& batch_first(bool v) { return set(batch_first_, v); }
  // Dropout on the outputs of every layer but the last, in training.
  Derived& dropout(double v) { return set(dropout_, v); }
  Derived& bidirectional(bool v) { return set(bidirectional_, v); }
  int64_t input_size_, hidden_size_;
  int64_t num_layers_ = 1;
  bool bias_ = true;
  bool batch_first_ = false;
  double dropout_ = 0.0;
  bool bidirectional_ = false;

 protected:
  template <class T>
  Derived& set(T& field, T value) {
    field = value;
    return static_cast<Derived&>(*this);
  }
};

struct RNNOptions : RNNOptionsCommon<RNNOptions> {
  using RNNOptionsCommon::RNNOptionsCommon;
  RNNOptions& nonlinearity(RNNNonlinearity v) {
    nonlinearity_ = std::move(v);
    return *this;
  }
  RNNNonlinearity nonlinearity_ = kTanh;
};

struct LSTMOptions : RNNOptionsCommon<LSTMOptions> {
  using RNNOptionsCommon::RNNOptionsCommon;
  // > 0: h is projected to proj_size features by weight_hr (LSTM with projections).
  LSTMOptions& proj_size(int64_t v) { return set(proj_size_, v); }
  int64_t proj_size_ = 0;
};

struct GRUOptions : RNNOptionsCommon<GRUOptions> {
  using RNNOptionsCommon::RNNOptionsCommon;
};

// What RNN, LSTM and GRU share: the parameters (weight_ih_l{k}{_reverse},
// weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k}, registered in
// PyTorch's order), their initialization U(-1/sqrt(hidden), 1/sqrt(hidden)),
// the input checks with PyTorch's messages, and the recurrence.
// What RNN, LSTM and GRU share once built, read through getters (libtorch's
// RNNOptionsBase, the module's `options_base`).
struct RNNOptionsBase {
  enum class Mode { RNNTanh, RNNReLU, LSTM, GRU };
  Mode mode() const { return mode_; }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }
  int64_t proj_size() const { return proj_size_; }

  Mode mode_;
  int64_t input_size_, hidden_size_, num_layers_;
  bool bias_, batch_first_;
  double dropout_;
  bool bidirectional_;
  int64_t proj_size_;
};

class RNNImplBase : public Module {
 public:
  using Mode = RNNOptionsBase::Mode;
  RNNOptionsBase options_base;

  void reset_parameters();
  // Every parameter in registration order, and their names.
  std::vector<Tensor> all_weights() const;
  const std::vector<std::string>& flat_weights_names() const { return flat_weights_names_; }
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;
  // libtorch packs the weights for cuDNN here; gradiens' weights need no packing, so this does nothing.
  void flatten_parameters() {}

 protected:
  RNNImplBase(std::string name, const RNNOptionsBase& options);

  struct Result {
    Tensor output, h_n, c_n;  // c_n: LSTM only
  };
  // hx (and cx for LSTM) may be undefined: zeros.
  Result forward_tensor(const Tensor& input, Tensor hx, Tensor cx, bool has_state);
  Result forward_packed(const utils::rnn::PackedSequence& input, Tensor hx, Tensor cx, bool has_state);

 private:
  struct LayerWeights {
    Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
  };
  void check_input(const Tensor& input, bool packed) const;
  void check_state(const Tensor& hx, const Tensor& cx, int64_t mini_batch) const;
  Result run_layers(const Tensor& data, const std::vector<int64_t>& batch_sizes, const Tensor& hx, const Tensor& cx);
  int64_t num_directions() const { return options_base.bidirectional() ? 2 : 1; }
  int64_t output_hidden_size() const {
    return options_base.proj_size() > 0 ? options_base.proj_size() : options_base.hidden_size();
  }

  std::vector<LayerWeights> weights_;  // layer * num_directions + direction
  std::vector<std::string> flat_weights_names_;
};

class RNNImpl : public RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  // input [T, B, input_size] ([B, T, input_size] with batch_first, [T, input_size]
  // unbatched), hx [num_layers * D, B, hidden_size] (zeros when undefined).
  // Returns (output [T, B, D * hidden_size], h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  using AnyModuleForward = std::tuple<Tensor, Tensor>(const Tensor&, Tensor);  // the overload AnyModule calls
  // A packed input gives a packed output; h_n is in the batch's original order.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward(const utils::rnn::PackedSequence& packed_input,
                                                         Tensor hx = {}) {
    return forward_with_packed_input(packed_input, std::move(hx));
  }
  RNNOptions options;
};
GRADIENS_MODULE(RNN);

class LSTMImpl : public RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  using State = std::tuple<Tensor, Tensor>;
  // As RNN, with the state (h, c); h has proj_size features when proj_size > 0.
  // Returns (output, (h_n, c_n)).
  std::tuple<Tensor, State> forward(const Tensor& input, std::optional<State> hx = std::nullopt);
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<State>())})
  using AnyModuleForward = std::tuple<Tensor, State>(const Tensor&, std::optional<State>);
  std::tuple<utils::rnn::PackedSequence, State> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<State> hx = std::nullopt);
  std::tuple<utils::rnn::PackedSequence, State> forward(const utils::rnn::PackedSequence& packed_input,
                                                        std::optional<State> hx = std::nullopt) {
    return forward_with_packed_input(packed_input, std::move(hx));
  }
  LSTMOptions options;
};
GRADIENS_MODULE(LSTM);

class GRUImpl : public RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  using AnyModuleForward = std::tuple<Tensor, Tensor>(const Tensor&, Tensor);  // the overload AnyModule calls
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward(const utils::rnn::PackedSequence& packed_input,
                                                         Tensor hx = {}) {
    return forward_with_packed_input(packed_input, std::move(hx));
  }
  GRUOptions options;
};
GRADIENS_MODULE(GRU);

// ---- cells: one time step ----

struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  RNNCellOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  RNNCellOptions& nonlinearity(RNNNonlinearity v) {
    nonlinearity_ = std::move(v);
    return *this;
  }
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
  RNNNonlinearity nonlinearity_ = kTanh;
};

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  LSTMCellOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
};
using GRUCellOptions = LSTMCellOptions;

// weight_ih [G * hidden, input], weight_hh [G * hidden, hidden], bias_ih and
// bias_hh [G * hidden] (undefined without bias), PyTorch's initialization.
class RNNCellImplBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;
  void pretty_print(std::ostream& stream) const override;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellImplBase(std::string name, int64_t input_size, int64_t hidden_size, bool bias, int64_t num_chunks);
  // input [B, input_size] or unbatched [input_size]; the message names the cell.
  bool check_batched(const Tensor& input) const;
  int64_t input_size_, hidden_size_;
  bool bias_;
  std::string nonlinearity_name_ = "tanh";
};

class RNNCellImpl : public RNNCellImplBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  // h' for input [B, input_size] and hx [B, hidden_size] (zeros when undefined).
  Tensor forward(const Tensor& input, Tensor hx = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  RNNCellOptions options;
};
GRADIENS_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  // (h', c') for input and the state (h, c) (zeros when not given).
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})
  LSTMCellOptions options;
};
GRADIENS_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_module(*this, device);
  }
  Tensor forward(const Tensor& input, Tensor hx = {});
  GRADIENS_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())})
  GRUCellOptions options;
};
GRADIENS_MODULE(GRUCell);

}  // namespace gradiens::nn

// RNN, LSTM, GRU and their cells: parameters, checks with PyTorch's messages,
// and the recurrence over a padded batch or a PackedSequence.
#include "nn/modules/rnn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"
#include "engine/nn_ops.h"
#include "nn/functional/rnn.h"

namespace gradiens::nn {

namespace F = functional;
using utils::rnn::PackedSequence;

namespace {

int64_t gate_count(RNNImplBase::Mode mode) {
  switch (mode) {
    case RNNImplBase::Mode::LSTM: return 4;
    case RNNImplBase::Mode::GRU: return 3;
    default: return 1;
  }
}

// Python's "(1, 2, 4)" for the expected size and "[1, 3, 4]" for the actual one.
std::string tuple_string(IntArrayRef sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + (sizes.size() == 1 ? ",)" : ")");
}

// Python's repr of a float: 0.5 -> "0.5", 1 -> "1.0".
std::string python_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string nonlinearity_name(const RNNNonlinearity& nonlinearity) {
  const std::string& name = nonlinearity.name();
  if (name != "tanh" && name != "relu") throw Error(fmt::format("Unknown nonlinearity '{}'", name));
  return name;
}

void uniform_init(const std::vector<Tensor>& parameters, int64_t hidden_size) {
  NoGradGuard no_grad;
  const double bound = hidden_size > 0 ? 1.0 / std::sqrt(static_cast<double>(hidden_size)) : 0.0;
  for (Tensor p : parameters) p.uniform_(-bound, bound);
}

}  // namespace

RNNNonlinearity::RNNNonlinearity(init::Nonlinearity kind) {
  if (kind == init::Nonlinearity::Tanh) name_ = "tanh";
  else if (kind == init::Nonlinearity::ReLU) name_ = "relu";
  else name_ = init::NonlinearityType(kind).name();
}

// ---- RNNImplBase ----

RNNImplBase::RNNImplBase(std::string name, const RNNOptionsBase& config) : Module(std::move(name)), options_base(config) {
  GD_CHECK(config.dropout() >= 0 && config.dropout() <= 1,
           "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  GD_CHECK(config.proj_size() >= 0, "proj_size should be a positive integer or zero to disable projections");
  GD_CHECK(config.proj_size() < config.hidden_size(), "proj_size has to be smaller than hidden_size");
  GD_CHECK(config.num_layers() >= 1,
           fmt::format("num_layers must be greater than or equal to 1, got {}", config.num_layers()));
  GD_CHECK(config.input_size() >= 0, fmt::format("input_size must be non-negative, got {}", config.input_size()));
  const int64_t gate_size = gate_count(config.mode()) * config.hidden_size();
  const int64_t real_hidden = output_hidden_size();
  for (int64_t layer = 0; layer < config.num_layers(); ++layer) {
    for (int64_t direction = 0; direction < num_directions(); ++direction) {
      const int64_t layer_input = layer == 0 ? config.input_size() : real_hidden * num_directions();
      const std::string suffix = fmt::format("_l{}{}", layer, direction == 1 ? "_reverse" : "");
      LayerWeights w;
      auto add = [&](const std::string& stem, IntArrayRef sizes) {
        flat_weights_names_.push_back(stem + suffix);
        return register_parameter(stem + suffix, empty(sizes));
      };
      w.w_ih = add("weight_ih", {gate_size, layer_input});
      w.w_hh = add("weight_hh", {gate_size, real_hidden});
      if (config.bias()) {
        w.b_ih = add("bias_ih", {gate_size});
        w.b_hh = add("bias_hh", {gate_size});
      }
      if (config.proj_size() > 0) w.w_hr = add("weight_hr", {config.proj_size(), config.hidden_size()});
      weights_.push_back(w);
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() { uniform_init(all_weights(), options_base.hidden_size()); }

std::vector<Tensor> RNNImplBase::all_weights() const {
  std::vector<Tensor> out;
  for (const LayerWeights& w : weights_)
    for (const Tensor& t : {w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr})
      if (t.defined()) out.push_back(t);
  return out;
}

std::string RNNImplBase::extra_repr() const {
  std::string s = fmt::format("{}, {}", options_base.input_size(), options_base.hidden_size());
  if (options_base.proj_size() != 0) s += fmt::format(", proj_size={}", options_base.proj_size());
  if (options_base.num_layers() != 1) s += fmt::format(", num_layers={}", options_base.num_layers());
  if (!options_base.bias()) s += ", bias=False";
  if (options_base.batch_first()) s += ", batch_first=True";
  if (options_base.dropout() != 0) s += ", dropout=" + python_float(options_base.dropout());
  if (options_base.bidirectional()) s += ", bidirectional=True";
  return s;
}

void RNNImplBase::pretty_print(std::ostream& stream) const {
  stream << fmt::format("torch::nn::{}(input_size={}, hidden_size={}, num_layers={}, bias={}, batch_first={}, dropout=",
                        name(), options_base.input_size(), options_base.hidden_size(), options_base.num_layers(), options_base.bias(),
                        options_base.batch_first())
         << options_base.dropout() << fmt::format(", bidirectional={}", options_base.bidirectional());
  if (options_base.proj_size() > 0) stream << ", proj_size=" << options_base.proj_size();
  stream << ")";
}

void RNNImplBase::check_input(const Tensor& input, bool packed) const {
  const int64_t expected_dim = packed ? 2 : 3;
  GD_CHECK(input.dim() == expected_dim,
           fmt::format("input must have {} dimensions, got {}", expected_dim, input.dim()));
  GD_CHECK(input.size(-1) == options_base.input_size(),
           fmt::format("input.size(-1) must be equal to input_size. Expected {}, got {}", options_base.input_size(),
                       input.size(-1)));
}

void RNNImplBase::check_state(const Tensor& hx, const Tensor& cx, int64_t mini_batch) const {
  const int64_t layers = options_base.num_layers() * num_directions();
  const DimVector expected_h{layers, mini_batch, output_hidden_size()};
  const bool lstm = options_base.mode() == Mode::LSTM;
  GD_CHECK(hx.sizes() == IntArrayRef(expected_h),
           fmt::format("Expected hidden{} size {}, got {}", lstm ? "[0]" : "", tuple_string(expected_h),
                       shape_to_string(hx.sizes())));
  if (!lstm) return;
  const DimVector expected_c{layers, mini_batch, options_base.hidden_size()};
  GD_CHECK(cx.sizes() == IntArrayRef(expected_c), fmt::format("Expected hidden[1] size {}, got {}",
                                                              tuple_string(expected_c), shape_to_string(cx.sizes())));
}

RNNImplBase::Result RNNImplBase::forward_tensor(const Tensor& input_in, Tensor hx, Tensor cx, bool has_state) {
  const bool lstm = options_base.mode() == Mode::LSTM;
  const bool batched = input_in.dim() == 3;
  const int64_t batch_dim = options_base.batch_first() ? 0 : 1;
  Tensor input = batched ? input_in : input_in.unsqueeze(batch_dim);
  if (has_state) {
    if (lstm) {
      const int64_t want = batched ? 3 : 2;
      GD_CHECK(hx.dim() == want && cx.dim() == want,
               fmt::format("For {} input, hx and cx should also be {} but got ({}-D, {}-D) tensors",
                           batched ? "batched 3-D" : "unbatched 2-D", batched ? "3-D" : "2-D", hx.dim(), cx.dim()));
    } else {
      GD_CHECK(!batched || hx.dim() == 3,
               fmt::format("For batched 3-D input, hx should also be 3-D but got {}-D tensor", hx.dim()));
      GD_CHECK(batched || hx.dim() == 2,
               fmt::format("For unbatched 2-D input, hx should also be 2-D but got {}-D tensor", hx.dim()));
    }
    if (!batched) {
      hx = hx.unsqueeze(1);
      if (lstm) cx = cx.unsqueeze(1);
    }
  }
  check_input(input, /*packed=*/false);
  if (options_base.batch_first()) input = input.transpose(0, 1);
  const int64_t steps = input.size(0), batch = input.size(1);
  const int64_t layers = options_base.num_layers() * num_directions();
  if (!has_state) {
    hx = zeros({layers, batch, output_hidden_size()}, input.options());
    if (lstm) cx = zeros({layers, batch, options_base.hidden_size()}, input.options());
  }
  check_state(hx, cx, batch);
  GD_CHECK(steps > 0, "Expected sequence length to be larger than 0 in RNN");
  Result r = run_layers(input.reshape({steps * batch, options_base.input_size()}),
                        std::vector<int64_t>(static_cast<size_t>(steps), batch), hx, cx);
  r.output = r.output.view({steps, batch, r.output.size(1)});
  if (options_base.batch_first()) r.output = r.output.transpose(0, 1);
  if (!batched) {
    r.output = r.output.squeeze(batch_dim);
    r.h_n = r.h_n.squeeze(1);
    if (lstm) r.c_n = r.c_n.squeeze(1);
  }
  return r;
}

RNNImplBase::Result RNNImplBase::forward_packed(const PackedSequence& input, Tensor hx, Tensor cx, bool has_state) {
  const bool lstm = options_base.mode() == Mode::LSTM;
  GD_CHECK(input.defined(), "the PackedSequence given to the recurrent layer is empty (no data)");
  const Tensor& data = input.data();
  const Tensor batch_sizes_tensor = input.batch_sizes().to(kInt64).contiguous();
  const int64_t* bs = batch_sizes_tensor.cpu_data_ptr<int64_t>();
  std::vector<int64_t> batch_sizes(bs, bs + batch_sizes_tensor.numel());
  GD_CHECK(!batch_sizes.empty(), "Expected sequence length to be larger than 0 in RNN");
  const int64_t mini_batch = batch_sizes[0];
  const int64_t layers = options_base.num_layers() * num_directions();
  if (!has_state) {
    hx = zeros({layers, mini_batch, output_hidden_size()}, data.options());
    if (lstm) cx = zeros({layers, mini_batch, options_base.hidden_size()}, data.options());
  } else if (input.sorted_indices().defined()) {
    // The state is given in the batch's order; the recurrence runs in the sorted one.
    hx = hx.index_select(1, input.sorted_indices());
    if (lstm) cx = cx.index_select(1, input.sorted_indices());
  }
  check_input(data, /*packed=*/true);
  check_state(hx, cx, mini_batch);
  int64_t previous = mini_batch, total = 0;
  for (int64_t b : batch_sizes) {
    GD_CHECK(b > 0 && b <= previous,
             fmt::format("batch_sizes must be positive and non-increasing, got {} after {}", b, previous));
    previous = b;
    total += b;
  }
  GD_CHECK(total == data.size(0),
           fmt::format("the PackedSequence's batch_sizes sum to {} but its data has {} rows", total, data.size(0)));
  Result r = run_layers(data, batch_sizes, hx, cx);
  if (input.unsorted_indices().defined()) {
    r.h_n = r.h_n.index_select(1, input.unsorted_indices());
    if (lstm) r.c_n = r.c_n.index_select(1, input.unsorted_indices());
  }
  return r;
}

// Note [Recurrence over batch_sizes]
// A padded batch is the packed case with every step the full batch, so one
// loop serves both. The input projection x W_ih^T + b_ih (+ b_hh where it
// simply adds) is one GEMM over all the rows of a layer, cut into steps by
// split_rows; each step then multiplies only the running rows' h by W_hh^T.
// Sequences are sorted by decreasing length, so in the forward direction the
// batch shrinks: the rows that stop are split off and kept for h_n. The
// reverse direction runs from the last step and the batch grows, each
// joining sequence starting from its row of h0.
RNNImplBase::Result RNNImplBase::run_layers(const Tensor& data, const std::vector<int64_t>& batch_sizes,
                                            const Tensor& hx, const Tensor& cx) {
  const Mode mode = options_base.mode();
  const bool lstm = mode == Mode::LSTM;
  const int64_t directions = num_directions();
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  std::vector<Tensor> h_n, c_n;
  Tensor layer_input = data;
  for (int64_t layer = 0; layer < options_base.num_layers(); ++layer) {
    std::vector<Tensor> direction_outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const LayerWeights& w = weights_[static_cast<size_t>(index)];
      Tensor bias;
      if (w.b_ih.defined()) bias = mode == Mode::GRU ? w.b_ih : w.b_ih + w.b_hh;
      Tensor projected = layer_input.matmul(w.w_ih.t());
      if (bias.defined()) projected = projected + bias;
      const std::vector<Tensor> input_gates = F::split_rows(projected, batch_sizes);
      // Contiguous, so that the per-step weight gradients h^T dgates arrive
      // row-major and sum with the fast contiguous loop.
      const Tensor w_hh_t = w.w_hh.t().contiguous();
      const Tensor w_hr_t = w.w_hr.defined() ? w.w_hr.t().contiguous() : Tensor();
      const Tensor gru_hidden_bias = mode == Mode::GRU ? w.b_hh : Tensor();

      // One step on the running rows: (h, c) -> (h', c').
      auto step = [&](int64_t t, Tensor& h, Tensor& c) {
        const Tensor& gi = input_gates[static_cast<size_t>(t)];
        switch (mode) {
          case Mode::RNNTanh: h = tanh(gi + h.mm(w_hh_t)); break;
          case Mode::RNNReLU: h = relu(gi + h.mm(w_hh_t)); break;
          case Mode::LSTM: {
            auto [h_new, c_new] = F::lstm_cell_pointwise(gi + h.mm(w_hh_t), c);
            h = w_hr_t.defined() ? h_new.mm(w_hr_t) : h_new;
            c = c_new;
            break;
          }
          case Mode::GRU: {
            Tensor hidden_gates = h.mm(w_hh_t);
            if (gru_hidden_bias.defined()) hidden_gates = hidden_gates + gru_hidden_bias;
            h = F::gru_cell_pointwise(gi, hidden_gates, h);
            break;
          }
        }
      };

      Tensor h0 = hx.select(0, index), c0 = lstm ? cx.select(0, index) : Tensor();
      std::vector<Tensor> outputs(static_cast<size_t>(steps));
      Tensor h, c;
      if (direction == 0) {
        h = h0;
        c = c0;
        std::vector<Tensor> finished_h, finished_c;  // rows split off as their sequences end
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t running = batch_sizes[static_cast<size_t>(t)];
          if (running < h.size(0)) {
            std::vector<Tensor> parts = F::split_rows(h, {running, h.size(0) - running});
            h = parts[0];
            finished_h.push_back(parts[1]);
            if (lstm) {
              parts = F::split_rows(c, {running, c.size(0) - running});
              c = parts[0];
              finished_c.push_back(parts[1]);
            }
          }
          step(t, h, c);
          outputs[static_cast<size_t>(t)] = h;
        }
        // Later-finishing pieces are the lower rows.
        if (!finished_h.empty()) {
          finished_h.push_back(h);
          std::reverse(finished_h.begin(), finished_h.end());
          h = cat(finished_h, 0);
          if (lstm) {
            finished_c.push_back(c);
            std::reverse(finished_c.begin(), finished_c.end());
            c = cat(finished_c, 0);
          }
        }
      } else {
        // The rows of h0 in the order the sequences join, from the last step back.
        std::vector<int64_t> joins{batch_sizes.back()};
        for (int64_t t = steps - 2; t >= 0; --t) {
          const int64_t grow = batch_sizes[static_cast<size_t>(t)] - batch_sizes[static_cast<size_t>(t) + 1];
          if (grow > 0) joins.push_back(grow);
        }
        std::vector<Tensor> h_parts{h0}, c_parts{c0};
        if (joins.size() > 1) {
          h_parts = F::split_rows(h0, joins);
          if (lstm) c_parts = F::split_rows(c0, joins);
        }
        h = h_parts[0];
        c = c_parts[0];
        size_t next = 1;
        for (int64_t t = steps - 1; t >= 0; --t) {
          if (batch_sizes[static_cast<size_t>(t)] > h.size(0)) {
            h = cat({h, h_parts[next]}, 0);
            if (lstm) c = cat({c, c_parts[next]}, 0);
            ++next;
          }
          step(t, h, c);
          outputs[static_cast<size_t>(t)] = h;
        }
      }
      direction_outputs.push_back(steps == 1 ? outputs[0] : cat(outputs, 0));
      h_n.push_back(h);
      if (lstm) c_n.push_back(c);
    }
    layer_input = directions == 1 ? direction_outputs[0] : cat(direction_outputs, 1);
    if (options_base.dropout() > 0 && is_training() && layer + 1 < options_base.num_layers())
      layer_input = gradiens::dropout(layer_input, options_base.dropout(), /*training=*/true);
  }
  Result r;
  r.output = layer_input;
  r.h_n = stack(h_n, 0);
  if (lstm) r.c_n = stack(c_n, 0);
  return r;
}

// ---- RNN, LSTM, GRU ----

namespace {

RNNImplBase::Mode rnn_mode(const RNNOptions& options) {
  return nonlinearity_name(options.nonlinearity_) == "tanh" ? RNNImplBase::Mode::RNNTanh
                                                            : RNNImplBase::Mode::RNNReLU;
}

}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_)
    : RNNImplBase("RNN", {rnn_mode(options_), options_.input_size_, options_.hidden_size_, options_.num_layers_,
                          options_.bias_, options_.batch_first_, options_.dropout_, options_.bidirectional_, 0}),
      options(options_) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  const bool has_state = hx.defined();
  Result r = forward_tensor(input, std::move(hx), Tensor(), has_state);
  return {r.output, r.h_n};
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& packed_input, Tensor hx) {
  const bool has_state = hx.defined();
  Result r = forward_packed(packed_input, std::move(hx), Tensor(), has_state);
  return {PackedSequence(r.output, packed_input.batch_sizes(), packed_input.sorted_indices(),
                         packed_input.unsorted_indices()),
          r.h_n};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_)
    : RNNImplBase("LSTM", {Mode::LSTM, options_.input_size_, options_.hidden_size_, options_.num_layers_,
                           options_.bias_, options_.batch_first_, options_.dropout_, options_.bidirectional_,
                           options_.proj_size_}),
      options(options_) {}

std::tuple<Tensor, LSTMImpl::State> LSTMImpl::forward(const Tensor& input, std::optional<State> hx) {
  Result r = hx ? forward_tensor(input, std::get<0>(*hx), std::get<1>(*hx), true)
                : forward_tensor(input, Tensor(), Tensor(), false);
  return {r.output, {r.h_n, r.c_n}};
}

std::tuple<PackedSequence, LSTMImpl::State> LSTMImpl::forward_with_packed_input(const PackedSequence& packed_input,
                                                                                std::optional<State> hx) {
  Result r = hx ? forward_packed(packed_input, std::get<0>(*hx), std::get<1>(*hx), true)
                : forward_packed(packed_input, Tensor(), Tensor(), false);
  return {PackedSequence(r.output, packed_input.batch_sizes(), packed_input.sorted_indices(),
                         packed_input.unsorted_indices()),
          {r.h_n, r.c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& options_)
    : RNNImplBase("GRU", {Mode::GRU, options_.input_size_, options_.hidden_size_, options_.num_layers_, options_.bias_,
                          options_.batch_first_, options_.dropout_, options_.bidirectional_, 0}),
      options(options_) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  const bool has_state = hx.defined();
  Result r = forward_tensor(input, std::move(hx), Tensor(), has_state);
  return {r.output, r.h_n};
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& packed_input, Tensor hx) {
  const bool has_state = hx.defined();
  Result r = forward_packed(packed_input, std::move(hx), Tensor(), has_state);
  return {PackedSequence(r.output, packed_input.batch_sizes(), packed_input.sorted_indices(),
                         packed_input.unsorted_indices()),
          r.h_n};
}

// ---- cells ----

RNNCellImplBase::RNNCellImplBase(std::string name, int64_t input_size, int64_t hidden_size, bool bias,
                                 int64_t num_chunks)
    : Module(std::move(name)), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  GD_CHECK(input_size >= 0 && hidden_size >= 0,
           fmt::format("{}: input_size and hidden_size must be non-negative, got {} and {}", this->name(), input_size,
                       hidden_size));
  weight_ih = register_parameter("weight_ih", empty({num_chunks * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", empty({num_chunks * hidden_size, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({num_chunks * hidden_size}));
    bias_hh = register_parameter("bias_hh", empty({num_chunks * hidden_size}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() { uniform_init(parameters(), hidden_size_); }

std::string RNNCellImplBase::extra_repr() const {
  std::string s = fmt::format("{}, {}", input_size_, hidden_size_);
  if (!bias_) s += ", bias=False";
  if (nonlinearity_name_ != "tanh") s += ", nonlinearity=" + nonlinearity_name_;
  return s;
}

void RNNCellImplBase::pretty_print(std::ostream& stream) const {
  // As libtorch: only what differs from the defaults.
  stream << fmt::format("torch::nn::{}({}, {}", name(), input_size_, hidden_size_);
  if (!bias_) stream << ", bias=false";
  if (nonlinearity_name_ != "tanh") stream << ", nonlinearity=kReLU";
  stream << ")";
}

bool RNNCellImplBase::check_batched(const Tensor& input) const {
  GD_CHECK(input.dim() == 1 || input.dim() == 2,
           fmt::format("{}: Expected input to be 1-D or 2-D but received {}-D tensor", name(), input.dim()));
  return input.dim() == 2;
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_)
    : RNNCellImplBase("RNNCell", options_.input_size_, options_.hidden_size_, options_.bias_, 1), options(options_) {
  nonlinearity_name_ = nonlinearity_name(options.nonlinearity_);
}

Tensor RNNCellImpl::forward(const Tensor& input_in, Tensor hx) {
  const bool batched = check_batched(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  hx = !hx.defined() ? zeros({input.size(0), hidden_size_}, input.options()) : batched ? hx : hx.unsqueeze(0);
  Tensor h = nonlinearity_name_ == "tanh" ? F::rnn_tanh_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh)
                                          : F::rnn_relu_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
  return batched ? h : h.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options_)
    : RNNCellImplBase("LSTMCell", options_.input_size_, options_.hidden_size_, options_.bias_, 4), options(options_) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input_in, std::optional<std::tuple<Tensor, Tensor>> hx) {
  const bool batched = check_batched(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  Tensor h, c;
  if (hx) {
    h = batched ? std::get<0>(*hx) : std::get<0>(*hx).unsqueeze(0);
    c = batched ? std::get<1>(*hx) : std::get<1>(*hx).unsqueeze(0);
  } else {
    h = c = zeros({input.size(0), hidden_size_}, input.options());
  }
  auto [h_new, c_new] = F::lstm_cell(input, h, c, weight_ih, weight_hh, bias_ih, bias_hh);
  if (!batched) return {h_new.squeeze(0), c_new.squeeze(0)};
  return {h_new, c_new};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options_)
    : RNNCellImplBase("GRUCell", options_.input_size_, options_.hidden_size_, options_.bias_, 3), options(options_) {}

Tensor GRUCellImpl::forward(const Tensor& input_in, Tensor hx) {
  const bool batched = check_batched(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  hx = !hx.defined() ? zeros({input.size(0), hidden_size_}, input.options()) : batched ? hx : hx.unsqueeze(0);
  Tensor h = F::gru_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
  return batched ? h : h.squeeze(0);
}

}  // namespace gradiens::nn

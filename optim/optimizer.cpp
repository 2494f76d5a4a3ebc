// optim::Optimizer: parameter groups, zero_grad, per-parameter state and the
// JSON state_dict (with tensors embedded exactly, as base64 bytes).
#include "optim/optimizer.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "engine/autograd/autograd.h"
#include "engine/autograd/grad_mode.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens::optim {

namespace {

constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const unsigned char* bytes, size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t chunk = uint32_t{bytes[i]} << 16;
    if (i + 1 < n) chunk |= uint32_t{bytes[i + 1]} << 8;
    if (i + 2 < n) chunk |= bytes[i + 2];
    out += kBase64Alphabet[(chunk >> 18) & 63];
    out += kBase64Alphabet[(chunk >> 12) & 63];
    out += i + 1 < n ? kBase64Alphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < n ? kBase64Alphabet[chunk & 63] : '=';
  }
  return out;
}

std::string base64_decode(const std::string& text) {
  GD_CHECK(text.size() % 4 == 0, "tensor_from_json: 'data' is not base64 (its length is not a multiple of 4)");
  std::array<int, 256> value;
  value.fill(-1);
  for (size_t i = 0; i < kBase64Alphabet.size(); ++i) value[static_cast<unsigned char>(kBase64Alphabet[i])] = static_cast<int>(i);
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++padding;
        continue;
      }
      GD_CHECK(padding == 0 && value[static_cast<unsigned char>(c)] >= 0,
               fmt::format("tensor_from_json: 'data' is not base64 (bad character at {})", i + k));
      v[k] = value[static_cast<unsigned char>(c)];
    }
    uint32_t chunk = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += static_cast<char>((chunk >> 16) & 255);
    if (padding < 2) out += static_cast<char>((chunk >> 8) & 255);
    if (padding < 1) out += static_cast<char>(chunk & 255);
  }
  return out;
}

ScalarType dtype_from_name(const std::string& name) {
  for (ScalarType t : {kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kBool})
    if (dtype_name(t) == name) return t;
  throw Error(fmt::format("tensor_from_json: unknown dtype '{}'", name));
}

}  // namespace

void throw_json_error(const std::string& what, const std::string& key, const std::string& problem) {
  throw Error(fmt::format("{}: '{}' {}", what, key, problem));
}

nlohmann::json tensor_to_json(const Tensor& tensor) {
  Tensor t = tensor.to(Device(DeviceType::CPU)).contiguous();
  const auto* bytes = static_cast<const unsigned char*>(t.numel() > 0 ? t.cpu_data_ptr() : nullptr);
  size_t n = static_cast<size_t>(t.numel()) * t.element_size();
  return {{"dtype", std::string(dtype_name(t.dtype()))},
          {"shape", t.sizes().vec()},
          {"data", n ? base64_encode(bytes, n) : std::string()}};
}

Tensor tensor_from_json(const nlohmann::json& j) {
  const std::string what = "tensor_from_json";
  ScalarType dtype = dtype_from_name(json_get<std::string>(j, "dtype", what));
  std::vector<int64_t> shape = json_get<std::vector<int64_t>>(j, "shape", what);
  std::string bytes = base64_decode(json_get<std::string>(j, "data", what));
  uint64_t numel = 1;
  for (int64_t s : shape) {
    GD_CHECK(s >= 0, fmt::format("tensor_from_json: negative size {} in shape {}", s, shape_to_string(shape)));
    GD_CHECK(s == 0 || numel <= std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(s),
             fmt::format("tensor_from_json: shape {} is too large", shape_to_string(shape)));
    numel *= static_cast<uint64_t>(s);
  }
  GD_CHECK(numel <= std::numeric_limits<uint64_t>::max() / element_size(dtype) &&
               numel * element_size(dtype) == bytes.size(),
           fmt::format("tensor_from_json: {} bytes of data for a {} tensor of shape {}", bytes.size(),
                       dtype_name(dtype), shape_to_string(shape)));
  Tensor t = empty(shape, dtype);
  if (!bytes.empty()) std::memcpy(t.cpu_data_ptr(), bytes.data(), bytes.size());
  return t;
}

void OptimizerOptions::set_momentum(double) {
  throw Error("optimizer must support momentum with `cycle_momentum` option enabled");
}

// ---- OptimizerParamGroup ----

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr), values_(other.values_) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    values_ = other.values_;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  GD_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options yet (add it to an optimizer)");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  GD_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options yet (add it to an optimizer)");
  return *options_;
}

// ---- Optimizer ----

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  GD_CHECK(defaults_ != nullptr, "Optimizer: the default options must be given");
  // An empty list of tensors arrives as one empty group.
  GD_CHECK(!param_groups.empty() && !(param_groups.size() == 1 && param_groups[0].params().empty()),
           "optimizer got an empty parameter list");
  for (const auto& group : param_groups) add_param_group(group);
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& existing : param_groups_)
    for (const Tensor& p : existing.params()) seen.insert(p.impl());
  std::unordered_set<const TensorImpl*> in_group;
  for (const Tensor& p : group.params()) {
    GD_CHECK(p.defined(), "optimizer can only optimize Tensors, but one of the params is undefined");
    GD_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor");
    GD_CHECK(in_group.insert(p.impl()).second,
             "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error");
    GD_CHECK(seen.count(p.impl()) == 0, "some parameters appear in more than one parameter group");
  }
  OptimizerParamGroup added(group.params());
  added.set_options(group.has_options() ? group.options().clone() : defaults_->clone());
  added.values() = group.values();
  param_groups_.push_back(std::move(added));
}

void Optimizer::zero_grad(bool set_to_none) { autograd::zero_grad(parameters(), set_to_none); }

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const auto& group : param_groups_) out.insert(out.end(), group.params().begin(), group.params().end());
  return out;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& group : param_groups_) n += group.params().size();
  return n;
}

OptimizerParamState* Optimizer::state(const Tensor& param) {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : it->second.get();
}
const OptimizerParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : it->second.get();
}

nlohmann::json Optimizer::state_dict() const {
  nlohmann::json state = nlohmann::json::object();
  nlohmann::json groups = nlohmann::json::array();
  int64_t index = 0;
  for (const auto& group : param_groups_) {
    nlohmann::json g = group.options().to_json();
    for (const auto& [key, value] : group.values()) g[key] = value;
    std::vector<int64_t> ids;
    for (const Tensor& p : group.params()) {
      if (const OptimizerParamState* s = this->state(p)) {
        nlohmann::json scalars = nlohmann::json::object();
        std::map<std::string, Tensor> tensors;
        s->save(scalars, tensors);
        for (const auto& [name, t] : tensors) scalars[name] = tensor_to_json(t);
        state[std::to_string(index)] = std::move(scalars);
      }
      ids.push_back(index++);
    }
    g["params"] = ids;
    groups.push_back(std::move(g));
  }
  return {{"state", std::move(state)}, {"param_groups", std::move(groups)}};
}

void Optimizer::load_state_dict(const nlohmann::json& state_dict) {
  const std::string what = "Optimizer.load_state_dict";
  auto groups = json_get<std::vector<nlohmann::json>>(state_dict, "param_groups", what);
  auto state = json_get<nlohmann::json>(state_dict, "state", what);
  GD_CHECK(state.is_object(), "Optimizer.load_state_dict: 'state' must be a JSON object");
  GD_CHECK(groups.size() == param_groups_.size(), "loaded state dict has a different number of parameter groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    auto ids = json_get<std::vector<int64_t>>(groups[i], "params", what);
    GD_CHECK(ids.size() == param_groups_[i].params().size(),
             "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
  }
  // Everything is read into new objects first, so a bad entry leaves the optimizer as it was.
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::vector<std::map<std::string, double>> values;
  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> new_state;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto o = param_groups_[i].options().clone();
    o->from_json(groups[i]);
    options.push_back(std::move(o));
    std::map<std::string, double> v;
    for (const char* key : {"initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum"})
      if (groups[i].contains(key)) v[key] = json_get<double>(groups[i], key, what);
    values.push_back(std::move(v));
    auto ids = json_get<std::vector<int64_t>>(groups[i], "params", what);
    for (size_t k = 0; k < ids.size(); ++k) {
      auto it = state.find(std::to_string(ids[k]));
      if (it == state.end()) continue;
      const Tensor& param = param_groups_[i].params()[k];
      nlohmann::json scalars = nlohmann::json::object();
      std::map<std::string, Tensor> tensors;
      GD_CHECK(it->is_object(), fmt::format("Optimizer.load_state_dict: state '{}' must be a JSON object", ids[k]));
      for (const auto& [name, entry] : it->items()) {
        if (entry.is_object() && entry.contains("dtype") && entry.contains("data")) {
          Tensor t = tensor_from_json(entry);
          // State tensors follow the parameter's dtype and device (PyTorch's _process_value_according_to_param_policy).
          if (t.is_floating_point() && param.is_floating_point()) t = t.to(param.dtype());
          tensors.emplace(name, t.to(param.device()));
        } else {
          scalars[name] = entry;
        }
      }
      auto s = make_param_state();
      s->load(scalars, tensors);
      new_state[param.impl()] = std::move(s);
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    param_groups_[i].set_options(std::move(options[i]));
    param_groups_[i].values() = std::move(values[i]);
  }
  state_ = std::move(new_state);
}

}  // namespace gradiens::optim

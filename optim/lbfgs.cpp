// optim::LBFGS: PyTorch 1.13's lbfgs.py (its step, _strong_wolfe and
// _cubic_interpolate) on flat raw buffers, with PyTorch's float/tensor scalar
// rounding reproduced for float32 (Note [L-BFGS scalars]).
#include "optim/lbfgs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

namespace gradiens::optim {

namespace {

// Note [L-BFGS scalars]
// lbfgs.py mixes Python floats (the losses, lr, the tolerances, `t = lr`) with
// 0-d tensors of the parameters' dtype (dot products, ro, H_diag, gtd, and `t`
// where it came from one). An operation with a tensor operand computes in the
// tensor's dtype, each operand rounded to it first; a comparison with a tensor
// compares in its dtype; a float divided by a tensor is reciprocal(tensor) *
// float (Tensor.__rtruediv__); Python's min and max keep the first argument on
// ties. Num follows these rules, so a float32 run rounds where PyTorch's does.
// With float64 only the reciprocal rule changes a rounding.
template <class T>
class Num {
 public:
  Num(double value = 0) : value_(value) {}  // a Python float
  static Num tensor(T value) {
    Num n(static_cast<double>(value));
    n.is_tensor_ = true;
    return n;
  }
  double value() const { return value_; }
  T as_dtype() const { return static_cast<T>(value_); }

  friend Num operator+(Num a, Num b) {
    return combine(a, b, [](auto x, auto y) { return x + y; });
  }
  friend Num operator-(Num a, Num b) {
    return combine(a, b, [](auto x, auto y) { return x - y; });
  }
  friend Num operator*(Num a, Num b) {
    return combine(a, b, [](auto x, auto y) { return x * y; });
  }
  friend Num operator/(Num a, Num b) {
    if (!a.is_tensor_ && b.is_tensor_) return tensor(static_cast<T>(T(1) / b.as_dtype()) * a.as_dtype());
    return combine(a, b, [](auto x, auto y) { return x / y; });
  }
  friend Num operator-(Num a) {
    a.value_ = -a.value_;
    return a;
  }
  friend Num abs(Num a) {
    a.value_ = std::abs(a.value_);
    return a;
  }
  friend Num sqrt(Num a) {
    if (a.is_tensor_) return tensor(std::sqrt(a.as_dtype()));
    return Num(std::sqrt(a.value_));
  }
  friend bool operator<(Num a, Num b) {
    return compare(a, b, [](auto x, auto y) { return x < y; });
  }
  friend bool operator<=(Num a, Num b) {
    return compare(a, b, [](auto x, auto y) { return x <= y; });
  }
  friend bool operator>(Num a, Num b) { return b < a; }
  friend bool operator>=(Num a, Num b) { return b <= a; }

 private:
  template <class Op>
  static Num combine(Num a, Num b, Op op) {
    if (a.is_tensor_ || b.is_tensor_) return tensor(static_cast<T>(op(a.as_dtype(), b.as_dtype())));
    return Num(op(a.value_, b.value_));
  }
  template <class Op>
  static bool compare(Num a, Num b, Op op) {
    if (a.is_tensor_ || b.is_tensor_) return op(a.as_dtype(), b.as_dtype());
    return op(a.value_, b.value_);
  }

  double value_;
  bool is_tensor_ = false;
};

// Python's builtin max(a, b) and min(a, b).
template <class T>
Num<T> py_max(Num<T> a, Num<T> b) {
  return b > a ? b : a;
}
template <class T>
Num<T> py_min(Num<T> a, Num<T> b) {
  return b < a ? b : a;
}

// ---- raw loops over the flat vectors (float32 sums accumulate in double) ----
// On a cuda device each is the same arithmetic by device ops (a sum's order,
// and so its last bits, differ from the loop's).

template <class T>
T dot(const Tensor& a, const Tensor& b) {
  if (a.is_cuda()) return static_cast<T>((a.to(kFloat64) * b.to(kFloat64)).sum().item<double>());
  const T* x = a.cpu_data_ptr<T>();
  const T* y = b.cpu_data_ptr<T>();
  int64_t n = a.numel();
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) acc[k] += static_cast<double>(x[i + k]) * static_cast<double>(y[i + k]);
  }
  double sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return static_cast<T>(sum);
}

template <class T>
T sum_abs(const Tensor& a) {
  if (a.is_cuda()) return static_cast<T>(a.to(kFloat64).abs().sum().item<double>());
  const T* x = a.cpu_data_ptr<T>();
  int64_t n = a.numel();
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) acc[k] += std::abs(static_cast<double>(x[i + k]));
  }
  double sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; ++i) sum += std::abs(static_cast<double>(x[i]));
  return static_cast<T>(sum);
}

// max |scale * a_i| (each product rounded to T), NaN if any is NaN, as
// a.mul(scale).abs().max().
template <class T>
T max_abs(const Tensor& a, T scale = T(1)) {
  if (a.is_cuda()) return static_cast<T>((a * Scalar(scale)).abs().max().template item<double>());
  const T* x = a.cpu_data_ptr<T>();
  int64_t n = a.numel();
  T m = 0;
  for (int64_t i = 0; i < n; ++i) {
    T v = std::abs(static_cast<T>(x[i] * scale));
    if (v > m || std::isnan(v)) m = v;
    if (std::isnan(m)) break;
  }
  return m;
}

// y += alpha * x
template <class T>
void axpy(T alpha, const Tensor& x, const Tensor& y) {
  if (y.is_cuda()) {
    Tensor(y).add_(x, alpha);
    return;
  }
  const T* xp = x.cpu_data_ptr<T>();
  T* yp = y.cpu_data_ptr<T>();
  int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) yp[i] = yp[i] + alpha * xp[i];
}

// out = scale * x
template <class T>
void scaled_copy(T scale, const Tensor& x, const Tensor& out) {
  if (out.is_cuda()) {
    Tensor(out).copy_(x * scale);
    return;
  }
  const T* xp = x.cpu_data_ptr<T>();
  T* op = out.cpu_data_ptr<T>();
  int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) op[i] = xp[i] * scale;
}

// out = a - b
template <class T>
void difference(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.is_cuda()) {
    Tensor(out).copy_(a - b);
    return;
  }
  const T* ap = a.cpu_data_ptr<T>();
  const T* bp = b.cpu_data_ptr<T>();
  T* op = out.cpu_data_ptr<T>();
  int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) op[i] = ap[i] - bp[i];
}

// ---- PyTorch's line search ----

// _cubic_interpolate: the minimizer of the cubic through (x1, f1) and (x2, f2)
// with slopes g1 and g2, clamped to the bounds (default: [x1, x2] sorted).
template <class T>
Num<T> cubic_interpolate(Num<T> x1, Num<T> f1, Num<T> g1, Num<T> x2, Num<T> f2, Num<T> g2,
                         const std::optional<std::pair<Num<T>, Num<T>>>& bounds = std::nullopt) {
  Num<T> xmin_bound, xmax_bound;
  if (bounds) {
    xmin_bound = bounds->first;
    xmax_bound = bounds->second;
  } else if (x1 <= x2) {
    xmin_bound = x1;
    xmax_bound = x2;
  } else {
    xmin_bound = x2;
    xmax_bound = x1;
  }
  Num<T> d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  Num<T> d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    Num<T> d2 = sqrt(d2_square);
    Num<T> min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                              : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return py_min(py_max(min_pos, xmin_bound), xmax_bound);
  }
  return (xmin_bound + xmax_bound) / 2.;
}

template <class T>
struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  Num<T> t;
  int64_t func_evals;
};

// _strong_wolfe with PyTorch's defaults (c1 = 1e-4, c2 = 0.9, tolerance_change
// = 1e-9 whatever the optimizer's, 25 evaluations at most). obj_func(t) returns
// the loss and flat gradient at x + t d. The gradient tensors are never written
// after creation, so the brackets share them instead of cloning.
template <class T, class ObjFunc>
LineSearchResult<T> strong_wolfe(ObjFunc&& obj_func, Num<T> t, const Tensor& d, double f, const Tensor& g, Num<T> gtd) {
  const double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
  const int max_ls = 25;
  const Num<T> d_norm = Num<T>::tensor(max_abs<T>(d));
  double f_new;
  Tensor g_new;
  std::tie(f_new, g_new) = obj_func(t);
  int64_t ls_func_evals = 1;
  Num<T> gtd_new = Num<T>::tensor(dot<T>(g_new, d));

  // bracket an interval containing a point satisfying the Wolfe criteria
  Num<T> t_prev = 0;
  double f_prev = f;
  Tensor g_prev = g;
  Num<T> gtd_prev = gtd;
  bool done = false;
  int ls_iter = 0;
  std::vector<Num<T>> bracket, bracket_gtd;
  std::vector<double> bracket_f;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (abs(gtd_new) <= -c2 * gtd) {
      bracket = {t};
      bracket_f = {f_new};
      bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // interpolate
    Num<T> min_step = t + 0.01 * (t - t_prev);
    Num<T> max_step = t * 10;
    Num<T> tmp = t;
    t = cubic_interpolate<T>(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
    // next step
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new;
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj_func(t);
    ls_func_evals += 1;
    gtd_new = Num<T>::tensor(dot<T>(g_new, d));
    ls_iter += 1;
  }
  // reached max number of iterations?
  if (ls_iter == max_ls) {
    bracket = {0, t};
    bracket_f = {f, f_new};
    bracket_g = {g, g_new};
  }

  // zoom phase: we now have a point satisfying the criteria, or a bracket
  // around it; refine the bracket until the point satisfies them.
  bool insuf_progress = false;
  // A one-point bracket (done) has its low point at 0 (PyTorch would index
  // past it for a NaN loss).
  size_t low_pos = 0, high_pos = 1;
  if (bracket.size() == 2 && !(bracket_f[0] <= bracket_f[1])) std::swap(low_pos, high_pos);
  while (!done && ls_iter < max_ls) {
    // line-search bracket is so small
    if (abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    // compute new trial value
    t = cubic_interpolate<T>(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // When t is within 10% of the bracket's length from an end, and was there
    // last time too (or lies on or outside the bracket), move it to that 10%.
    Num<T> bracket_max = py_max(bracket[0], bracket[1]);
    Num<T> bracket_min = py_min(bracket[0], bracket[1]);
    Num<T> eps = 0.1 * (bracket_max - bracket_min);
    if (py_min(bracket_max - t, t - bracket_min) < eps) {
      if (insuf_progress || t >= bracket_max || t <= bracket_min) {
        t = abs(t - bracket_max) < abs(t - bracket_min) ? bracket_max - eps : bracket_min + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    // evaluate the new point
    std::tie(f_new, g_new) = obj_func(t);
    ls_func_evals += 1;
    gtd_new = Num<T>::tensor(dot<T>(g_new, d));
    ls_iter += 1;

    if (f_new > (f + c1 * t * gtd) || f_new >= bracket_f[low_pos]) {
      // Armijo condition not satisfied or not lower than lowest point
      bracket[high_pos] = t;
      bracket_f[high_pos] = f_new;
      bracket_g[high_pos] = g_new;
      bracket_gtd[high_pos] = gtd_new;
      if (bracket_f[0] <= bracket_f[1]) {
        low_pos = 0;
        high_pos = 1;
      } else {
        low_pos = 1;
        high_pos = 0;
      }
    } else {
      if (abs(gtd_new) <= -c2 * gtd) {
        done = true;  // Wolfe conditions satisfied
      } else if (gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0) {
        // old high becomes new low
        bracket[high_pos] = bracket[low_pos];
        bracket_f[high_pos] = bracket_f[low_pos];
        bracket_g[high_pos] = bracket_g[low_pos];
        bracket_gtd[high_pos] = bracket_gtd[low_pos];
      }
      // new point becomes new low
      bracket[low_pos] = t;
      bracket_f[low_pos] = f_new;
      bracket_g[low_pos] = g_new;
      bracket_gtd[low_pos] = gtd_new;
    }
  }
  return {bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals};
}

// ---- state_dict helpers ----

const std::string kStateWhat = "LBFGS state";

nlohmann::json number_to_json(double value) {
  if (std::isfinite(value)) return value;
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

double number_from_json(const nlohmann::json& j, const std::string& key) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& text = j.get_ref<const std::string&>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw_json_error(kStateWhat, key, "must be a number (or \"nan\", \"inf\", \"-inf\"), got " + j.dump());
}

double number_at(const nlohmann::json& scalars, const std::string& key) {
  auto it = scalars.find(key);
  if (it == scalars.end()) throw_json_error(kStateWhat, key, "is missing");
  return number_from_json(*it, key);
}

const Tensor& tensor_at(const std::map<std::string, Tensor>& tensors, const std::string& key) {
  auto it = tensors.find(key);
  if (it == tensors.end()) throw_json_error(kStateWhat, key, "is missing");
  return it->second;
}

void check_options(const LBFGSOptions& options) {
  GD_CHECK(!options.line_search_fn() || *options.line_search_fn() == "strong_wolfe",
           "only 'strong_wolfe' is supported");
  // PyTorch fails on an empty history only when it first stores a pair (popping from an empty list).
  GD_CHECK(options.history_size() >= 1,
           fmt::format("LBFGS: history_size must be at least 1, got {}", options.history_size()));
}

// j[key] as V, or nullopt where it is null.
template <class V>
std::optional<V> optional_get(const nlohmann::json& j, const std::string& key, const std::string& what) {
  if (json_get<nlohmann::json>(j, key, what).is_null()) return std::nullopt;
  return json_get<V>(j, key, what);
}

int64_t default_max_eval(int64_t max_iter) {
  // Python's max_iter * 5 // 4 (floor division)
  int64_t n = max_iter * 5;
  return n >= 0 ? n / 4 : -((-n + 3) / 4);
}

}  // namespace

// ---- LBFGSOptions ----

nlohmann::json LBFGSOptions::to_json() const {
  nlohmann::json j = {{"lr", lr_},
                      {"max_iter", max_iter_},
                      {"max_eval", nullptr},
                      {"tolerance_grad", tolerance_grad_},
                      {"tolerance_change", tolerance_change_},
                      {"history_size", history_size_},
                      {"line_search_fn", nullptr}};
  if (max_eval_) j["max_eval"] = *max_eval_;
  if (line_search_fn_) j["line_search_fn"] = *line_search_fn_;
  return j;
}

void LBFGSOptions::from_json(const nlohmann::json& j) {
  const std::string what = "LBFGS options";
  LBFGSOptions read;
  read.lr_ = json_get<double>(j, "lr", what);
  read.max_iter_ = json_get<int64_t>(j, "max_iter", what);
  read.max_eval_ = optional_get<int64_t>(j, "max_eval", what);
  read.tolerance_grad_ = json_get<double>(j, "tolerance_grad", what);
  read.tolerance_change_ = json_get<double>(j, "tolerance_change", what);
  read.history_size_ = json_get<int64_t>(j, "history_size", what);
  read.line_search_fn_ = optional_get<std::string>(j, "line_search_fn", what);
  check_options(read);
  *this = read;
}

// ---- LBFGSParamState ----

void LBFGSParamState::save(nlohmann::json& scalars, std::map<std::string, Tensor>& tensors) const {
  scalars["func_evals"] = func_evals_;
  scalars["n_iter"] = n_iter_;
  if (d_.defined()) {
    tensors["d"] = d_;
    scalars["t"] = number_to_json(t_);
    scalars["H_diag"] = number_to_json(H_diag_);
    tensors["prev_flat_grad"] = prev_flat_grad_;
    scalars["prev_loss"] = number_to_json(prev_loss_);
    for (size_t i = 0; i < old_dirs_.size(); ++i) {
      tensors["old_dirs." + std::to_string(i)] = old_dirs_[i];
      tensors["old_stps." + std::to_string(i)] = old_stps_[i];
    }
    nlohmann::json ro = nlohmann::json::array();
    for (double r : ro_) ro.push_back(number_to_json(r));
    scalars["ro"] = std::move(ro);
  }
  if (al_) {
    nlohmann::json al = nlohmann::json::array();
    for (const auto& a : *al_) al.push_back(a ? number_to_json(*a) : nlohmann::json(nullptr));
    scalars["al"] = std::move(al);
  }
}

void LBFGSParamState::load(const nlohmann::json& scalars, const std::map<std::string, Tensor>& tensors) {
  LBFGSParamState read;
  read.func_evals_ = json_get<int64_t>(scalars, "func_evals", kStateWhat);
  read.n_iter_ = json_get<int64_t>(scalars, "n_iter", kStateWhat);
  if (tensors.count("d")) {
    read.d_ = tensor_at(tensors, "d");
    read.t_ = number_at(scalars, "t");
    read.H_diag_ = number_at(scalars, "H_diag");
    read.prev_flat_grad_ = tensor_at(tensors, "prev_flat_grad");
    read.prev_loss_ = number_at(scalars, "prev_loss");
    auto ro = json_get<std::vector<nlohmann::json>>(scalars, "ro", kStateWhat);
    for (size_t i = 0; i < ro.size(); ++i) {
      std::string index = std::to_string(i);
      read.old_dirs_.push_back(tensor_at(tensors, "old_dirs." + index));
      read.old_stps_.push_back(tensor_at(tensors, "old_stps." + index));
      read.ro_.push_back(number_from_json(ro[i], "ro." + index));
    }
    GD_CHECK(!tensors.count("old_dirs." + std::to_string(ro.size())),
             fmt::format("LBFGS state: 'ro' has {} entries but there are more old_dirs", ro.size()));
    int64_t n = read.d_.numel();
    auto check_vector = [&](const Tensor& t, const std::string& name) {
      GD_CHECK(t.dim() == 1 && t.numel() == n,
               fmt::format("LBFGS state: '{}' has shape {} but 'd' has {} elements", name, t.toString(), n));
    };
    GD_CHECK(read.d_.dim() == 1, fmt::format("LBFGS state: 'd' must be 1-D, got {}", read.d_.toString()));
    check_vector(read.prev_flat_grad_, "prev_flat_grad");
    for (size_t i = 0; i < read.old_dirs_.size(); ++i) {
      check_vector(read.old_dirs_[i], "old_dirs." + std::to_string(i));
      check_vector(read.old_stps_[i], "old_stps." + std::to_string(i));
    }
  }
  if (scalars.contains("al")) {
    auto al = json_get<std::vector<nlohmann::json>>(scalars, "al", kStateWhat);
    read.al_.emplace();
    for (size_t i = 0; i < al.size(); ++i) {
      if (al[i].is_null())
        read.al_->push_back(std::nullopt);
      else
        read.al_->push_back(number_from_json(al[i], "al." + std::to_string(i)));
    }
  }
  *this = std::move(read);
}

// ---- LBFGS ----

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<LBFGSOptions>(defaults)) {
  GD_CHECK(param_groups_.size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
  GD_CHECK(!param_groups_[0].params().empty(), "optimizer got an empty parameter list");
  auto* options = dynamic_cast<LBFGSOptions*>(&param_groups_[0].options());
  GD_CHECK(options != nullptr, "LBFGS: the parameter group's options must be LBFGSOptions");
  // As libtorch: an unset max_eval becomes max_iter * 5 / 4 here, in the group and in the defaults.
  for (auto* o : {options, static_cast<LBFGSOptions*>(defaults_.get())}) {
    check_options(*o);
    if (!o->max_eval()) o->max_eval(default_max_eval(o->max_iter()));
  }
}

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

std::unique_ptr<OptimizerParamState> LBFGS::make_param_state() const { return std::make_unique<LBFGSParamState>(); }

Tensor LBFGS::take_buffer(int64_t numel, ScalarType dtype) {
  while (!spare_buffers_.empty()) {
    Tensor buffer = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
    if (buffer.numel() == numel && buffer.dtype() == dtype && buffer.device() == device()) return buffer;
  }
  return empty({numel}, TensorOptions().dtype(dtype).device(device()));
}

void LBFGS::recycle(Tensor&& buffer) {
  // Only a buffer no one else can see is reused: a tensor the user took from
  // the state (or a view of it) keeps its values.
  Tensor owned = std::move(buffer);
  if (owned.defined() && owned.impl_ptr().use_count() == 1 && owned.storage().use_count() == 1 &&
      spare_buffers_.size() < 4)
    spare_buffers_.push_back(std::move(owned));
}

// _gather_flat_grad: the gradients, concatenated (zeros for a parameter without one).
template <class T>
void LBFGS::gather_flat_grad(const Tensor& out) const {
  if (out.is_cuda()) {
    int64_t offset = 0;
    for (const Tensor& p : param_groups_[0].params()) {
      Tensor slice = out.narrow(0, offset, p.numel()).view(p.sizes());
      if (p.grad().defined()) slice.copy_(p.grad());
      else slice.zero_();
      offset += p.numel();
    }
    return;
  }
  T* flat = out.cpu_data_ptr<T>();
  int64_t offset = 0;
  for (const Tensor& p : param_groups_[0].params()) {
    int64_t n = p.numel();
    Tensor g = p.grad();
    if (!g.defined()) {
      std::fill(flat + offset, flat + offset + n, T(0));
    } else if (g.is_contiguous() && g.dtype() == p.dtype() && g.is_cpu()) {
      if (n > 0) std::memcpy(flat + offset, g.cpu_data_ptr<T>(), static_cast<size_t>(n) * sizeof(T));
    } else {
      out.narrow(0, offset, n).view(p.sizes()).copy_(g);
    }
    offset += n;
  }
}

// _add_grad: p += step_size * (p's slice of update), step_size rounded to T.
template <class T>
void LBFGS::add_grad(double step_size, const Tensor& update) const {
  const T alpha = static_cast<T>(step_size);
  const T* u = update.is_cuda() ? nullptr : update.cpu_data_ptr<T>();
  int64_t offset = 0;
  for (const Tensor& p : param_groups_[0].params()) {
    int64_t n = p.numel();
    if (p.is_contiguous() && u != nullptr) {
      T* data = p.cpu_data_ptr<T>();
      for (int64_t i = 0; i < n; ++i) data[i] = data[i] + alpha * u[offset + i];
      p.bump_version();
    } else {
      Tensor param = p;
      param.add_(update.narrow(0, offset, n).view(p.sizes()), Scalar(alpha));
    }
    offset += n;
  }
}

// _clone_param, into one flat vector.
template <class T>
void LBFGS::gather_params(const Tensor& out) const {
  T* flat = out.is_cuda() ? nullptr : out.cpu_data_ptr<T>();
  int64_t offset = 0;
  for (const Tensor& p : param_groups_[0].params()) {
    int64_t n = p.numel();
    if (p.is_contiguous() && flat != nullptr) {
      if (n > 0) std::memcpy(flat + offset, p.cpu_data_ptr<T>(), static_cast<size_t>(n) * sizeof(T));
    } else {
      out.narrow(0, offset, n).view(p.sizes()).copy_(p);
    }
    offset += n;
  }
}

// _set_param, from one flat vector.
template <class T>
void LBFGS::set_params(const Tensor& flat) const {
  const T* src = flat.is_cuda() ? nullptr : flat.cpu_data_ptr<T>();
  int64_t offset = 0;
  for (const Tensor& p : param_groups_[0].params()) {
    int64_t n = p.numel();
    if (p.is_contiguous() && src != nullptr) {
      if (n > 0) std::memcpy(p.cpu_data_ptr<T>(), src + offset, static_cast<size_t>(n) * sizeof(T));
      p.bump_version();
    } else {
      Tensor param = p;
      param.copy_(flat.narrow(0, offset, n).view(p.sizes()));
    }
    offset += n;
  }
}

Tensor LBFGS::step(LossClosure closure) {
  NoGradGuard no_grad;
  GD_CHECK(closure != nullptr, "LBFGS requires a closure function");
  GD_CHECK(param_groups_.size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
  check_options(static_cast<const LBFGSOptions&>(param_groups_[0].options()));
  const auto& params = param_groups_[0].params();
  ScalarType dtype = params[0].dtype();
  int64_t numel = 0;
  for (const Tensor& p : params) {
    GD_CHECK(p.dtype() == dtype, fmt::format("LBFGS: all parameters must have one dtype, got {} and {}",
                                             dtype_name(dtype), dtype_name(p.dtype())));
    GD_CHECK(p.device() == params[0].device(),
             fmt::format("Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                         params[0].device().str(), p.device().str()));
    numel += p.numel();
  }
  GD_CHECK(dtype == kFloat32 || dtype == kFloat64,
           fmt::format("LBFGS: parameters must be float32 or float64, got {}", dtype_name(dtype)));
  if (dtype == kFloat32) return step_impl<float>(closure, numel);
  return step_impl<double>(closure, numel);
}

template <class T>
Tensor LBFGS::step_impl(const LossClosure& closure, int64_t n) {
  using N = Num<T>;
  const ScalarType dtype = scalar_type_of<T>();
  const auto& options = static_cast<const LBFGSOptions&>(param_groups_[0].options());
  const double lr = options.lr();
  const int64_t max_iter = options.max_iter();
  const int64_t max_eval = options.max_eval().value_or(default_max_eval(max_iter));
  const double tolerance_grad = options.tolerance_grad();
  const double tolerance_change = options.tolerance_change();
  const bool line_search = options.line_search_fn().has_value();
  const auto history_size = static_cast<size_t>(options.history_size());

  auto& state = param_state<LBFGSParamState>(param_groups_[0].params()[0]);
  if (state.d_.defined()) {
    // The state may come from a state_dict or from before Module::to changed the dtype.
    GD_CHECK(
        state.d_.numel() == n,
        fmt::format("LBFGS: the state holds vectors of {} elements but the parameters have {}", state.d_.numel(), n));
    auto to_dtype = [&](Tensor& t) {  // and to the parameters' device
      if (t.defined() && (t.dtype() != dtype || t.device() != device())) t = t.to(device(), dtype).contiguous();
    };
    to_dtype(state.d_);
    to_dtype(state.prev_flat_grad_);
    for (Tensor& t : state.old_dirs_) to_dtype(t);
    for (Tensor& t : state.old_stps_) to_dtype(t);
  }

  auto evaluate = [&]() -> Tensor {
    Tensor loss;
    {
      AutoGradMode enable_grad(true);
      loss = closure();
    }
    GD_CHECK(loss.defined(), "LBFGS: the closure must return the loss, got an undefined tensor");
    // what float(loss) says in PyTorch
    GD_CHECK(loss.numel() == 1, "only one element tensors can be converted to Python scalars");
    return loss;
  };
  auto gather = [&]() -> Tensor {
    Tensor g = take_buffer(n, dtype);
    gather_flat_grad<T>(g);
    return g;
  };

  // evaluate initial f(x) and df/dx
  Tensor orig_loss = evaluate();
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  state.func_evals_ += 1;

  Tensor flat_grad = gather();
  bool opt_cond = N::tensor(max_abs<T>(flat_grad)) <= tolerance_grad;
  // optimal condition
  if (opt_cond) {
    recycle(std::move(flat_grad));
    return orig_loss;
  }

  // The state's tensors are written through these; PyTorch stores them back
  // at the end, which is the same as nothing else reads them meanwhile.
  Tensor d = state.d_;
  N t = state.t_;
  N H_diag = N::tensor(static_cast<T>(state.H_diag_));
  Tensor& prev_flat_grad = state.prev_flat_grad_;
  double prev_loss = state.prev_loss_;
  auto& old_dirs = state.old_dirs_;
  auto& old_stps = state.old_stps_;
  auto& ro = state.ro_;

  int64_t n_iter = 0;
  // optimize for a max of max_iter iterations
  while (n_iter < max_iter) {
    n_iter += 1;
    state.n_iter_ += 1;

    // ---- compute the descent direction ----
    if (state.n_iter_ == 1) {
      Tensor first = take_buffer(n, dtype);
      scaled_copy<T>(T(-1), flat_grad, first);
      d = std::move(first);
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      H_diag = 1;
    } else {
      // do lbfgs update (update memory)
      Tensor y = take_buffer(n, dtype);
      difference<T>(flat_grad, prev_flat_grad, y);
      Tensor s = take_buffer(n, dtype);
      scaled_copy<T>(t.as_dtype(), d, s);
      N ys = N::tensor(dot<T>(y, s));
      if (ys > 1e-10) {
        if (old_dirs.size() == history_size) {
          // shift history by one (limited-memory)
          recycle(std::move(old_dirs.front()));
          recycle(std::move(old_stps.front()));
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        ro.push_back((1. / ys).value());
        // update scale of initial Hessian approximation
        H_diag = ys / N::tensor(dot<T>(y, y));
        old_dirs.push_back(std::move(y));
        old_stps.push_back(std::move(s));
      } else {
        recycle(std::move(y));
        recycle(std::move(s));
      }

      // the approximate inverse Hessian times the gradient, by the two-loop
      // recursion collapsed into one buffer q (which becomes d)
      const size_t num_old = old_dirs.size();
      if (!state.al_) state.al_.emplace(history_size);
      auto& al = *state.al_;
      if (al.size() < num_old) al.resize(num_old);
      std::vector<N> al_num(num_old);
      Tensor q = take_buffer(n, dtype);
      scaled_copy<T>(T(-1), flat_grad, q);
      for (size_t k = num_old; k-- > 0;) {
        al_num[k] = N::tensor(dot<T>(old_stps[k], q)) * N::tensor(static_cast<T>(ro[k]));
        al[k] = al_num[k].value();
        axpy<T>((-al_num[k]).as_dtype(), old_dirs[k], q);
      }
      // multiply by initial Hessian; r/d is the final direction
      scaled_copy<T>(H_diag.as_dtype(), q, q);
      for (size_t k = 0; k < num_old; ++k) {
        N be_i = N::tensor(dot<T>(old_dirs[k], q)) * N::tensor(static_cast<T>(ro[k]));
        axpy<T>((al_num[k] - be_i).as_dtype(), old_stps[k], q);
      }
      recycle(std::move(d));
      d = std::move(q);
    }

    if (!prev_flat_grad.defined() || prev_flat_grad.numel() != n) {
      prev_flat_grad = flat_grad.clone();
    } else if (prev_flat_grad.is_cuda()) {
      prev_flat_grad.copy_(flat_grad);
    } else {
      std::memcpy(prev_flat_grad.cpu_data_ptr<T>(), flat_grad.cpu_data_ptr<T>(), static_cast<size_t>(n) * sizeof(T));
    }
    prev_loss = loss;

    // ---- compute step length ----
    // reset initial guess for step size
    if (state.n_iter_ == 1)
      t = py_min(N(1.), 1. / N::tensor(sum_abs<T>(flat_grad))) * lr;
    else
      t = lr;

    // directional derivative
    N gtd = N::tensor(dot<T>(flat_grad, d));
    // directional derivative is below tolerance
    if (gtd > -tolerance_change) break;

    int64_t ls_func_evals = 0;
    if (line_search) {
      Tensor x_init = take_buffer(n, dtype);
      gather_params<T>(x_init);
      auto obj_func = [&](N step) {
        add_grad<T>(step.value(), d);
        const Tensor value = evaluate();
        Tensor g = gather();
        set_params<T>(x_init);
        return std::pair<double, Tensor>(value.item<double>(), std::move(g));
      };
      LineSearchResult<T> result = strong_wolfe<T>(obj_func, t, d, loss, flat_grad, gtd);
      recycle(std::move(x_init));
      loss = result.loss;
      recycle(std::move(flat_grad));
      flat_grad = std::move(result.flat_grad);
      t = result.t;
      ls_func_evals = result.func_evals;
      add_grad<T>(t.value(), d);
      opt_cond = N::tensor(max_abs<T>(flat_grad)) <= tolerance_grad;
    } else {
      // no line search, simply move with fixed-step
      add_grad<T>(t.value(), d);
      if (n_iter != max_iter) {
        // Re-evaluated except in the last iteration: in a stochastic setting
        // the value would be of no use.
        const Tensor value = evaluate();
        loss = value.item<double>();
        recycle(std::move(flat_grad));
        flat_grad = gather();
        opt_cond = N::tensor(max_abs<T>(flat_grad)) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    // update func eval
    current_evals += ls_func_evals;
    state.func_evals_ += ls_func_evals;

    // ---- check conditions ----
    if (n_iter == max_iter) break;
    if (current_evals >= max_eval) break;
    // optimal condition
    if (opt_cond) break;
    // lack of progress
    if (N::tensor(max_abs<T>(d, t.as_dtype())) <= tolerance_change) break;
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  state.d_ = std::move(d);
  state.t_ = t.value();
  state.H_diag_ = H_diag.value();
  state.prev_loss_ = prev_loss;
  recycle(std::move(flat_grad));
  return orig_loss;
}

}  // namespace gradiens::optim

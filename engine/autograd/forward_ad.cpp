// Dual levels, make_dual/unpack_dual, the tangent plumbing apply<Op> uses, and
// the double-backward fallback for ops without a jvp formula (Note [Dual levels]).
#include "engine/autograd/forward_ad.h"

#include <fmt/format.h>

#include <mutex>

#include "engine/autograd/autograd.h"
#include "engine/autograd/function.h"
#include "engine/dims.h"
#include "engine/functions.h"

namespace gradiens {

namespace detail {

std::atomic<uint64_t> current_dual_level{0};
thread_local bool forward_ad_paused = false;

namespace {

// Every tensor given a tangent at the open level, so closing the level can
// strip them (weak: the registry never keeps a tensor alive).
struct TangentRegistry {
  std::mutex mutex;
  std::vector<std::weak_ptr<TensorImpl>> holders;
  size_t compact_at = 1024;

  void add(const std::shared_ptr<TensorImpl>& impl) {
    std::lock_guard lock(mutex);
    if (holders.size() >= compact_at) {
      std::erase_if(holders, [](const auto& w) { return w.expired(); });
      compact_at = std::max<size_t>(1024, holders.size() * 2);
    }
    holders.push_back(impl);
  }
  void clear(uint64_t level) {
    std::lock_guard lock(mutex);
    for (const auto& w : holders)
      if (auto impl = w.lock(); impl && impl->fw_level == level) {
        impl->fw_grad.reset();
        impl->fw_level = 0;
      }
    holders.clear();
    compact_at = 1024;
  }
};

TangentRegistry& registry() {
  static TangentRegistry r;
  return r;
}

uint64_t open_level() { return current_dual_level.load(std::memory_order_relaxed); }

}  // namespace

bool has_tangent(const Tensor& t) {
  if (!t.defined()) return false;
  const TensorImpl& impl = *t.impl();
  return impl.fw_grad && impl.fw_level == open_level();
}

Tensor tangent_of(const Tensor& t) { return has_tangent(t) ? Tensor(t.impl()->fw_grad) : Tensor(); }

void set_tangent(const Tensor& out, Tensor tangent) {
  const uint64_t level = open_level();
  if (level == 0 || !tangent.defined() || !out.is_floating_point()) return;
  if (tangent.sizes() != out.sizes()) tangent = tangent.expand(out.sizes());
  if (tangent.dtype() != out.dtype()) tangent = tangent.to(out.dtype());
  TensorImpl& impl = *out.impl();
  impl.fw_grad = tangent.impl_ptr();
  impl.fw_level = level;
  registry().add(out.impl_ptr());
}

Tensor tangent_by_double_backward(const std::function<GradList(const Tensor&)>& backward, const Tensor& out,
                                  const GradList& tangents) {
  bool create_graph = GradMode::is_enabled() && out.requires_grad();
  for (const Tensor& t : tangents) create_graph = create_graph || (GradMode::is_enabled() && t.defined() && t.requires_grad());
  AutoGradMode enable(true);
  // u -> backward(u) is linear in u, so d/du <backward(u), t> = J t at any u.
  // u is ones rather than zeros: some backward formulas skip a gradient that is
  // exactly zero (an unused output of a multi-output op), which is only valid at 0.
  Tensor u = ones_like(out).requires_grad_();
  GradList vjps = backward(u);
  Tensor pairing;
  for (size_t i = 0; i < tangents.size() && i < vjps.size(); ++i) {
    if (!tangents[i].defined() || !vjps[i].defined()) continue;
    Tensor term = (vjps[i] * tangents[i].to(vjps[i].dtype())).sum();
    pairing = pairing.defined() ? pairing + term : term;
  }
  if (!pairing.defined() || !pairing.requires_grad()) return zeros_like(out);
  Tensor jt = autograd::grad({pairing}, {u}, {}, create_graph, create_graph, /*allow_unused=*/true)[0];
  if (!jt.defined()) return zeros_like(out);
  return create_graph ? jt : jt.detach();
}

}  // namespace detail

Tensor add_tangents(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}

Tensor tangent_or_zeros(const Tensor& tangent, const Tensor& like) {
  return tangent.defined() ? tangent : zeros_like(like);
}

namespace autograd {

namespace forward_ad {

namespace {

// The tensor itself under a new TensorImpl: a view whose reverse-mode gradient
// is the identity and whose tangent is the input's (make_dual replaces it,
// unpack_dual drops it).
struct Alias {
  static constexpr std::string_view name = "AliasBackward0";
  static Tensor forward(Ctx&, const Tensor& x) { return x; }
  static GradList backward(Ctx&, const Tensor& g) { return {g}; }
  static Tensor jvp(const Tensor&, const GradList& t, const Tensor&) { return t[0]; }
};

uint64_t next_level = 1;
std::mutex level_mutex;

}  // namespace

DualLevel::DualLevel() {
  std::lock_guard lock(level_mutex);
  GD_CHECK(detail::current_dual_level.load() == 0, "Nested forward mode AD is not supported at the moment");
  detail::current_dual_level.store(next_level++);
}

DualLevel::~DualLevel() {
  std::lock_guard lock(level_mutex);
  detail::registry().clear(detail::current_dual_level.load());
  detail::current_dual_level.store(0);
}

Tensor make_dual(const Tensor& primal, const Tensor& tangent) {
  GD_CHECK(detail::current_dual_level.load() != 0,
           "Trying to create a dual Tensor for forward AD but no level exists, make sure to open a "
           "forward_ad::DualLevel first.");
  GD_CHECK(primal.defined() && tangent.defined(), "make_dual: primal and tangent must be defined tensors");
  GD_CHECK(primal.is_floating_point(),
           fmt::format("Expected primal to be floating point or complex, but got: {}", dtype_name(primal.dtype())));
  GD_CHECK(tangent.is_floating_point(),
           fmt::format("Expected tangent to be floating point or complex, but got: {}", dtype_name(tangent.dtype())));
  GD_CHECK(primal.sizes() == tangent.sizes(),
           fmt::format("Trying to set a forward gradient that has a different size than that of the original Tensor, "
                       "this is not supported. Tensor is of size {} while the given forward gradient is of size {}.",
                       shape_to_string(primal.sizes()), shape_to_string(tangent.sizes())));
  GD_CHECK(!detail::has_tangent(primal),
           "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level is not "
           "supported.");
  Tensor dual = apply<Alias>(primal);
  if (dual.is_same(primal)) dual = detail::fresh_alias(primal);  // not recorded: give it its own impl
  if (!primal.requires_grad()) {
    // Its own base, so an in-place op through a view of it is caught (the
    // view's tangent could not be written back into the dual's).
    dual.impl()->view = {};
  }
  detail::set_tangent(dual, tangent);
  return dual;
}

UnpackedDual unpack_dual(const Tensor& tensor) {
  Tensor tangent = detail::tangent_of(tensor);
  Tensor primal;
  {
    detail::PauseForwardAD pause;  // the primal view carries no tangent
    primal = apply<Alias>(tensor);
  }
  if (primal.is_same(tensor)) primal = detail::fresh_alias(tensor);
  return {primal, tangent};
}

}  // namespace forward_ad

std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& primals,
    const std::vector<Tensor>& tangents) {
  GD_CHECK(primals.size() == tangents.size(),
           fmt::format("jvp: expected one tangent per primal, got {} primals and {} tangents", primals.size(),
                       tangents.size()));
  forward_ad::DualLevel level;
  std::vector<Tensor> duals;
  for (size_t i = 0; i < primals.size(); ++i) {
    GD_CHECK(primals[i].sizes() == tangents[i].sizes(),
             fmt::format("jvp: tangent {} has shape {}, but its primal has shape {}", i,
                         shape_to_string(tangents[i].sizes()), shape_to_string(primals[i].sizes())));
    duals.push_back(forward_ad::make_dual(primals[i], tangents[i]));
  }
  std::vector<Tensor> outputs = fn(duals);
  std::vector<Tensor> primal_out, tangent_out;
  for (const Tensor& out : outputs) {
    auto [p, t] = forward_ad::unpack_dual(out);
    primal_out.push_back(p);
    // An output that does not depend on the primals has a zero tangent, as in torch.func.jvp.
    tangent_out.push_back(t.defined() ? t : zeros_like(p));
  }
  return {primal_out, tangent_out};
}

std::pair<Tensor, Tensor> jvp(const std::function<Tensor(const Tensor&)>& fn, const Tensor& primal,
                              const Tensor& tangent) {
  auto [outs, tans] = jvp([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs[0])}; }, {primal},
                          {tangent});
  return {outs[0], tans[0]};
}

}  // namespace autograd

}  // namespace gradiens

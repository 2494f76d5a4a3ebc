// libFuzzer target for gradiens-train's config reader: the first line of an
// input is a --set assignment, the rest a config file. Every input must end in
// diagnostics or a resolved config; a resolved config must resolve again to
// itself without a problem (defaults and normalization are idempotent).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/error.h"
#include "train/config/run_spec.h"
#include "train/config/validate.h"
#include "train/registry/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace gt = gradiens::train;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string assignment(input.substr(0, newline == std::string_view::npos ? 0 : newline));
  const std::string_view text = newline == std::string_view::npos ? input : input.substr(newline + 1);
  const auto& registry = gt::builtin().specs;
  gt::Diagnostics diagnostics;
  gt::json config = gt::parse_config_text(text, "fuzz.json", diagnostics);
  if (!diagnostics.empty() || !config.is_object()) return 0;
  if (!assignment.empty()) gt::apply_set(config, assignment, gt::run_spec(), registry, diagnostics);
  gt::json resolved = gt::resolve_object(config, gt::run_spec(), "", registry, diagnostics);
  if (!diagnostics.empty()) return 0;
  gt::Diagnostics again;
  const gt::json twice = gt::resolve_object(resolved, gt::run_spec(), "", registry, again);
  if (!again.empty() || twice != resolved) __builtin_trap();
  return 0;
}

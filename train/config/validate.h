// Strict reading of a config: parsing that reports duplicate keys, the
// validator that collects every problem with its JSON path and fills in
// defaults, "did you mean" suggestions, and the --set / --unset overrides.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "train/config/spec.h"

namespace gradiens::train {

// The problems found in a config, each with its JSON path
// ("model.layers[3].out_feature: unknown key; did you mean \"out_features\"?").
class Diagnostics {
 public:
  void error(const std::string& path, const std::string& message);
  bool empty() const { return messages_.empty(); }
  const std::vector<std::string>& messages() const { return messages_; }
  // Every message, one per line.
  std::string str() const;
  // Throws a gradiens::Error listing every message under `heading`, if any.
  void throw_if_any(const std::string& heading) const;

 private:
  std::vector<std::string> messages_;
};

// "a.b" joined to "c" -> "a.b.c"; to an index -> "a.b[3]".
std::string join_path(const std::string& path, const std::string& key);
std::string join_path(const std::string& path, size_t index);

// The candidate closest to `word`, if it is close enough to be a likely typo.
std::optional<std::string> suggest(const std::string& word, const std::vector<std::string>& candidates);

// Parses JSON text; a syntax error (with line and column) or a duplicate key
// in one object goes into `diagnostics`, named by `source` ("run.json").
json parse_config_text(std::string_view text, const std::string& source, Diagnostics& diagnostics);

// Checks `value` against `type`, reporting every problem, and returns it with
// defaults filled in (the resolved config).
json resolve_value(const json& value, const ValueType& type, const std::string& path, const SpecRegistry& registry,
                   Diagnostics& diagnostics);
json resolve_object(const json& value, const ObjectSpec& spec, const std::string& path,
                    const SpecRegistry& registry, Diagnostics& diagnostics);

// A --set or --unset path, "a.b.c" or "model.layers.3.out_features" (or
// "layers[3]"), split into keys and indices.
struct PathStep {
  std::string key;              // an object key, or
  std::optional<size_t> index;  // an array index
};
std::vector<PathStep> parse_override_path(const std::string& path);

// The field that `path` names in `config` under `root`, when the path leads
// through existing objects and arrays to a key the spec knows; otherwise an
// error message (with a suggestion) in `problem`.
const Field* field_at(const json& config, const std::vector<PathStep>& path, const ObjectSpec& root,
                      const SpecRegistry& registry, std::string& problem);

// --set a.b.c=VALUE: VALUE is read as JSON when it parses (numbers, true,
// [1, 2], {"type": "SGD"}) and as a string otherwise. The path must name a key
// the spec has; intermediate objects must exist. Problems go to `diagnostics`.
void apply_set(json& config, const std::string& assignment, const ObjectSpec& root, const SpecRegistry& registry,
               Diagnostics& diagnostics);
// --unset a.b: removes a key that is present.
void apply_unset(json& config, const std::string& path, Diagnostics& diagnostics);

}  // namespace gradiens::train

// The strict config reader: parsing with duplicate-key detection, validation
// against the specs with every problem collected, suggestions, and overrides.
#include "train/config/validate.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "kernels/error.h"

namespace gradiens::train {

void Diagnostics::error(const std::string& path, const std::string& message) {
  messages_.push_back(path.empty() ? message : path + ": " + message);
}

std::string Diagnostics::str() const {
  std::string text;
  for (const std::string& message : messages_) text += message + "\n";
  return text;
}

void Diagnostics::throw_if_any(const std::string& heading) const {
  if (messages_.empty()) return;
  throw Error(fmt::format("{} ({} problem{}):\n{}", heading, messages_.size(), messages_.size() == 1 ? "" : "s",
                          str()));
}

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string join_path(const std::string& path, size_t index) { return fmt::format("{}[{}]", path, index); }

namespace {

// Optimal string alignment distance (Levenshtein with adjacent transpositions).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

// "a string \"0.1\"", "an integer 3": what a value was, for error messages.
std::string describe_json(const json& value) {
  // Invalid UTF-8 (a raw --set value) is shown with replacement characters.
  std::string shown = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
  switch (value.type()) {
    case json::value_t::string: return "a string " + shown;
    case json::value_t::boolean: return shown;
    case json::value_t::null: return "null";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "the integer " + shown;
    case json::value_t::number_float: return "the number " + shown;
    case json::value_t::array: return "a list " + shown;
    case json::value_t::object: return "an object";
    default: return shown;
  }
}

void wrong_type(const json& value, const ValueType& type, const std::string& path, Diagnostics& diagnostics) {
  diagnostics.error(path, fmt::format("expected {}, got {}", type.describe(), describe_json(value)));
}

bool in_range(double value, const ValueType& type) {
  if (type.minimum && (type.exclusive_minimum ? !(value > *type.minimum) : !(value >= *type.minimum))) return false;
  if (type.maximum && (type.exclusive_maximum ? !(value < *type.maximum) : !(value <= *type.maximum))) return false;
  return true;
}

void unknown_key(const std::string& key, const ObjectSpec& spec, const std::string& path, bool typed,
                 Diagnostics& diagnostics) {
  std::vector<std::string> names = spec.field_names();
  if (typed) names.push_back("type");
  if (auto close = suggest(key, names))
    diagnostics.error(join_path(path, key), fmt::format("unknown key; did you mean \"{}\"?", *close));
  else
    diagnostics.error(join_path(path, key),
                      fmt::format("unknown key ({} takes: {})", spec.type_name.empty() ? (path.empty() ? "the config" : path)
                                                                                        : spec.type_name,
                                  names.empty() ? "no keys" : quoted_list(names)));
}

// The spec a typed object's "type" names, or nullptr after reporting why not.
const ObjectSpec* typed_spec(const json& value, const std::string& category, const std::string& path,
                             const SpecRegistry& registry, Diagnostics& diagnostics) {
  const Category* c = registry.find_category(category);
  GD_INTERNAL_ASSERT(c != nullptr, "unknown spec category " + category);
  std::vector<std::string> names;
  for (const auto& [name, spec] : c->types) names.push_back(name);
  auto it = value.find("type");
  if (it == value.end()) {
    diagnostics.error(path, fmt::format("missing \"type\" (a {}: one of {})", category, quoted_list(names)));
    return nullptr;
  }
  if (!it->is_string()) {
    diagnostics.error(join_path(path, "type"),
                      fmt::format("expected the name of a {}, got {}", category, describe_json(*it)));
    return nullptr;
  }
  const std::string name = it->get<std::string>();
  if (const ObjectSpec* spec = registry.find(category, name)) return spec;
  if (auto close = suggest(name, names))
    diagnostics.error(join_path(path, "type"),
                      fmt::format("unknown {} \"{}\"; did you mean \"{}\"?", category, name, *close));
  else
    diagnostics.error(join_path(path, "type"),
                      fmt::format("unknown {} \"{}\" (one of {})", category, name, quoted_list(names)));
  return nullptr;
}

json resolve_typed_object(const json& value, const ObjectSpec& spec, const std::string& path,
                          const SpecRegistry& registry, Diagnostics& diagnostics, bool typed);

// Whether `value` is of the JSON kind that `type` describes (ignoring ranges
// and contents), to pick the alternative of an anyOf whose errors to show.
bool same_kind(const json& value, const ValueType& type) {
  switch (type.kind) {
    case ValueType::Kind::kBool: return value.is_boolean();
    case ValueType::Kind::kInteger:
    case ValueType::Kind::kNumber: return value.is_number();
    case ValueType::Kind::kString: return value.is_string();
    case ValueType::Kind::kArray: return value.is_array();
    case ValueType::Kind::kObject:
    case ValueType::Kind::kTyped: return value.is_object();
    case ValueType::Kind::kNull: return value.is_null();
    case ValueType::Kind::kAnyOf:
      return std::any_of(type.alternatives.begin(), type.alternatives.end(),
                         [&](const TypePtr& t) { return same_kind(value, *t); });
  }
  return false;
}

}  // namespace

// A wrong suggestion is worse than none: only a name within a typo or two
// (one edit per four characters), or the one name that the word begins.
std::optional<std::string> suggest(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = std::max<size_t>(1, word.size() / 4) + 1;
  for (const std::string& candidate : candidates) {
    if (lowercase(candidate) == lowercase(word)) return candidate;
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best || word.size() < 3) return best;
  std::optional<std::string> extension;
  for (const std::string& candidate : candidates)
    if (candidate.size() > word.size() && candidate.compare(0, word.size(), word) == 0) {
      if (extension) return std::nullopt;
      extension = candidate;
    }
  return extension;
}

json parse_config_text(std::string_view text, const std::string& source, Diagnostics& diagnostics) {
  // The parser keeps the last of two equal keys silently; the callback sees
  // each key and reports the second one with its path.
  struct Frame {
    bool is_object;
    std::string path;
    std::set<std::string> keys;
    std::string key;
    size_t index = 0;
  };
  std::vector<Frame> stack;
  auto child_path = [&stack]() -> std::string {
    if (stack.empty()) return "";
    const Frame& top = stack.back();
    return top.is_object ? join_path(top.path, top.key) : join_path(top.path, top.index);
  };
  auto element_done = [&stack]() {
    if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
  };
  json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: stack.push_back({true, child_path(), {}, {}, 0}); break;
      case json::parse_event_t::array_start: stack.push_back({false, child_path(), {}, {}, 0}); break;
      case json::parse_event_t::key: {
        Frame& top = stack.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          diagnostics.error(join_path(top.path, top.key), "duplicate key (a JSON object may name a key only once)");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {  // a syntax error, or a number too large for a double (out_of_range)
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) what = what.substr(bracket + 2);
    diagnostics.error(source, "not valid JSON: " + what);
    return json();
  }
}

json resolve_value(const json& value, const ValueType& type, const std::string& path, const SpecRegistry& registry,
                   Diagnostics& diagnostics) {
  switch (type.kind) {
    case ValueType::Kind::kBool:
      if (!value.is_boolean()) wrong_type(value, type, path, diagnostics);
      return value;
    case ValueType::Kind::kInteger: {
      // 3.0 is the integer 3, so that 3 and 3.0 resolve (and hash) alike.
      if (!value.is_number() || (value.is_number_float() && (!std::isfinite(value.get<double>()) ||
                                                              std::trunc(value.get<double>()) != value.get<double>()))) {
        wrong_type(value, type, path, diagnostics);
        return value;
      }
      // Beyond int64 (1e300, 2^64 - 1): out of range for any field, not converted.
      if ((value.is_number_float() && std::fabs(value.get<double>()) >= 9.2e18) ||
          (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
        diagnostics.error(path, fmt::format("{} is out of range (expected {})", value.dump(), type.describe()));
        return value;
      }
      const auto integer = value.is_number_float() ? static_cast<int64_t>(value.get<double>()) : value.get<int64_t>();
      if (!in_range(static_cast<double>(integer), type))
        diagnostics.error(path, fmt::format("{} is out of range (expected {})", integer, type.describe()));
      return integer;
    }
    case ValueType::Kind::kNumber: {
      if (!value.is_number()) {
        wrong_type(value, type, path, diagnostics);
        return value;
      }
      const auto number = value.get<double>();
      if (!in_range(number, type))
        diagnostics.error(path, fmt::format("{} is out of range (expected {})", value.dump(), type.describe()));
      return number;
    }
    case ValueType::Kind::kString: {
      if (!value.is_string()) {
        wrong_type(value, type, path, diagnostics);
        return value;
      }
      const auto text = value.get<std::string>();
      if (!type.choices.empty() && std::find(type.choices.begin(), type.choices.end(), text) == type.choices.end()) {
        auto close = suggest(text, type.choices);
        diagnostics.error(path, fmt::format("\"{}\" is not {}{}", text, type.describe(),
                                            close ? fmt::format("; did you mean \"{}\"?", *close) : ""));
      }
      return value;
    }
    case ValueType::Kind::kArray: {
      if (!value.is_array()) {
        wrong_type(value, type, path, diagnostics);
        return value;
      }
      const auto size = static_cast<int64_t>(value.size());
      if (size < type.min_items || (type.max_items >= 0 && size > type.max_items))
        diagnostics.error(path, fmt::format("expected {}, got a list of {}", type.describe(), size));
      json resolved = json::array();
      for (size_t i = 0; i < value.size(); ++i)
        resolved.push_back(resolve_value(value[i], *type.items, join_path(path, i), registry, diagnostics));
      return resolved;
    }
    case ValueType::Kind::kObject:
      return resolve_typed_object(value, *type.object, path, registry, diagnostics, /*typed=*/false);
    case ValueType::Kind::kTyped: {
      if (!value.is_object()) {
        wrong_type(value, type, path, diagnostics);
        return value;
      }
      const ObjectSpec* spec = typed_spec(value, type.category, path, registry, diagnostics);
      if (spec == nullptr) return value;
      return resolve_typed_object(value, *spec, path, registry, diagnostics, /*typed=*/true);
    }
    case ValueType::Kind::kNull:
      if (!value.is_null()) wrong_type(value, type, path, diagnostics);
      return value;
    case ValueType::Kind::kAnyOf: {
      // The first alternative that takes the value; else the errors of the one
      // of the value's kind (an object's missing key), or a plain type error.
      const TypePtr* kind_match = nullptr;
      size_t kind_matches = 0;
      for (const TypePtr& alternative : type.alternatives) {
        Diagnostics scratch;
        json resolved = resolve_value(value, *alternative, path, registry, scratch);
        if (scratch.empty()) return resolved;
        if (same_kind(value, *alternative)) {
          kind_match = &alternative;
          ++kind_matches;
        }
      }
      if (kind_matches == 1) return resolve_value(value, **kind_match, path, registry, diagnostics);
      wrong_type(value, type, path, diagnostics);
      return value;
    }
  }
  return value;
}

namespace {

json resolve_typed_object(const json& value, const ObjectSpec& spec, const std::string& path,
                          const SpecRegistry& registry, Diagnostics& diagnostics, bool typed) {
  if (!value.is_object()) {
    diagnostics.error(path, fmt::format("expected an object, got {}", describe_json(value)));
    return value;
  }
  const size_t errors_before = diagnostics.messages().size();
  json resolved = json::object();
  if (typed) resolved["type"] = value.at("type");
  for (const auto& [key, item] : value.items())
    if (!(typed && key == "type") && spec.find(key) == nullptr) unknown_key(key, spec, path, typed, diagnostics);
  for (const Field& field : spec.fields) {
    auto it = value.find(field.name);
    if (it != value.end()) {
      resolved[field.name] = resolve_value(*it, *field.type, join_path(path, field.name), registry, diagnostics);
    } else if (field.required) {
      diagnostics.error(join_path(path, field.name), fmt::format("missing (required: {})", field.description));
    } else if (field.has_default) {
      // A default section ({}) gets its own defaults filled in.
      resolved[field.name] = resolve_value(field.default_value, *field.type, join_path(path, field.name), registry,
                                           diagnostics);
    }
  }
  if (spec.check && diagnostics.messages().size() == errors_before) spec.check(resolved, path, diagnostics);
  return resolved;
}

}  // namespace

json resolve_object(const json& value, const ObjectSpec& spec, const std::string& path, const SpecRegistry& registry,
                    Diagnostics& diagnostics) {
  return resolve_typed_object(value, spec, path, registry, diagnostics, /*typed=*/false);
}

std::vector<PathStep> parse_override_path(const std::string& path) {
  std::vector<PathStep> steps;
  std::string current;
  auto flush = [&]() {
    if (current.empty()) throw Error(fmt::format("\"{}\" is not a key path (expected a.b.c or a.b[2].c)", path));
    PathStep step{current, std::nullopt};
    if (std::all_of(current.begin(), current.end(), [](char c) { return c >= '0' && c <= '9'; }) && current.size() < 10)
      step.index = std::stoul(current);
    steps.push_back(step);
    current.clear();
  };
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '.') {
      if (i > 0 && path[i - 1] == ']') continue;
      flush();
    } else if (c == '[') {
      flush();
    } else if (c == ']') {
      flush();
    } else {
      current += c;
    }
  }
  if (path.empty() || path.back() != ']') flush();
  return steps;
}

namespace {

std::string path_text(const std::vector<PathStep>& path, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text = path[i].index && i > 0 ? join_path(text, *path[i].index) : join_path(text, path[i].key);
  return text;
}

// A typed object's "type" key, which no spec lists as a field.
const Field& type_field() {
  static const Field field = [] {
    Field f;
    f.name = "type";
    f.type = String();
    f.description = "the registered type";
    return f;
  }();
  return field;
}

}  // namespace

const Field* field_at(const json& config, const std::vector<PathStep>& path, const ObjectSpec& root,
                      const SpecRegistry& registry, std::string& problem) {
  const json* node = &config;
  TypePtr type = Object(std::shared_ptr<const ObjectSpec>(&root, [](const ObjectSpec*) {}));
  for (size_t i = 0; i < path.size(); ++i) {
    const std::string here = path_text(path, i + 1);
    // Resolve anyOf by the kind of what the config holds here.
    while (type->kind == ValueType::Kind::kAnyOf) {
      TypePtr chosen;
      for (const TypePtr& alternative : type->alternatives)
        if (same_kind(*node, *alternative)) {
          chosen = alternative;
          break;
        }
      if (!chosen) {
        problem = fmt::format("{}: {} holds no object or list to set a key in", here, path_text(path, i));
        return nullptr;
      }
      type = chosen;
    }
    if (type->kind == ValueType::Kind::kArray) {
      if (!path[i].index) {
        problem = fmt::format("{}: {} is a list; name an element by its index", here, path_text(path, i));
        return nullptr;
      }
      if (!node->is_array() || *path[i].index >= node->size()) {
        problem = fmt::format("{}: no such element (the list has {})", here, node->is_array() ? node->size() : 0);
        return nullptr;
      }
      node = &(*node)[*path[i].index];
      type = type->items;
      continue;
    }
    const ObjectSpec* spec = nullptr;
    bool typed = false;
    if (type->kind == ValueType::Kind::kObject) {
      spec = type->object.get();
    } else if (type->kind == ValueType::Kind::kTyped) {
      Diagnostics scratch;
      if (!node->is_object() || !(spec = typed_spec(*node, type->category, path_text(path, i), registry, scratch))) {
        problem = scratch.empty() ? fmt::format("{}: not an object", path_text(path, i)) : scratch.messages()[0];
        return nullptr;
      }
      typed = true;
    } else {
      problem = fmt::format("{}: {} is {}, which has no keys", here, path_text(path, i), type->describe());
      return nullptr;
    }
    const std::string& key = path[i].key;
    const Field* field = typed && key == "type" ? &type_field() : spec->find(key);
    if (field == nullptr) {
      Diagnostics scratch;
      unknown_key(key, *spec, path_text(path, i), typed, scratch);
      problem = scratch.messages()[0];
      return nullptr;
    }
    if (i + 1 == path.size()) return field;
    auto it = node->is_object() ? node->find(key) : node->end();
    if (node->is_object() && it == node->end() && field->type->kind == ValueType::Kind::kObject) {
      // An absent section ("output") is an empty one: --set output.plots=false creates it.
      static const json empty = json::object();
      node = &empty;
      type = field->type;
      continue;
    }
    if (!node->is_object() || it == node->end()) {
      problem = fmt::format("{}: not in the config; set it whole (--set {}='{{...}}')", here, here);
      return nullptr;
    }
    node = &*it;
    type = field->type;
  }
  problem = "an empty key path";
  return nullptr;
}

namespace {

// The node that holds the last step of `path`, or nullptr; with `create`,
// absent objects on the way are added (field_at has checked they are sections).
json* parent_of(json& config, const std::vector<PathStep>& path, bool create = false) {
  json* node = &config;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (node->is_array() && path[i].index && *path[i].index < node->size()) node = &(*node)[*path[i].index];
    else if (node->is_object() && (create || node->contains(path[i].key))) node = &(*node)[path[i].key];
    else return nullptr;
  }
  return node;
}

// The steps of an override's key path; none, after reporting, when it is malformed.
std::vector<PathStep> override_path(const std::string& option, const std::string& key, Diagnostics& diagnostics) {
  try {
    return parse_override_path(key);
  } catch (const Error& e) {
    diagnostics.error(option + " " + key, e.what());
    return {};
  }
}

bool only_strings(const ValueType& type) {
  if (type.kind == ValueType::Kind::kString) return true;
  if (type.kind != ValueType::Kind::kAnyOf) return false;
  return std::all_of(type.alternatives.begin(), type.alternatives.end(),
                     [](const TypePtr& t) { return t->kind == ValueType::Kind::kString; });
}

}  // namespace

void apply_set(json& config, const std::string& assignment, const ObjectSpec& root, const SpecRegistry& registry,
               Diagnostics& diagnostics) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    diagnostics.error("--set " + assignment, "expected KEY=VALUE (for example --set optimizer.lr=0.01)");
    return;
  }
  const std::string key = assignment.substr(0, equals), text = assignment.substr(equals + 1);
  const std::vector<PathStep> path = override_path("--set", key, diagnostics);
  if (path.empty()) return;
  std::string problem;
  const Field* field = field_at(config, path, root, registry, problem);
  if (field == nullptr) {
    diagnostics.error("--set", problem);
    return;
  }
  json value;
  try {
    value = json::parse(text);
    if (!value.is_string() && only_strings(*field->type)) value = text;
  } catch (const json::exception&) {  // not JSON (or a number beyond a double): the text itself
    value = text;
  }
  try {
    (void)value.dump();
  } catch (const json::type_error&) {
    diagnostics.error("--set " + key, "the value is not valid UTF-8 text");
    return;
  }
  json* parent = parent_of(config, path, /*create=*/true);
  GD_INTERNAL_ASSERT(parent != nullptr, "apply_set: field_at accepted a path without a parent");
  if (parent->is_array()) (*parent)[*path.back().index] = value;
  else (*parent)[path.back().key] = value;
}

void apply_unset(json& config, const std::string& key, Diagnostics& diagnostics) {
  const std::vector<PathStep> path = override_path("--unset", key, diagnostics);
  if (path.empty()) return;
  json* parent = parent_of(config, path);
  if (parent == nullptr || !parent->is_object() || !parent->contains(path.back().key)) {
    diagnostics.error("--unset " + key, "not in the config");
    return;
  }
  parent->erase(path.back().key);
}

}  // namespace gradiens::train

// The typed specs of gradiens-train's JSON configs: a ValueType per value, a
// Field per key, an ObjectSpec per section or registered type, and the
// SpecRegistry of named types ("Linear", "Adam", ...) by category. One spec
// drives the validator, --print-config, --print-schema and --list.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradiens::train {

using nlohmann::json;

class Diagnostics;
struct ObjectSpec;
struct ValueType;
using TypePtr = std::shared_ptr<const ValueType>;

// What a value may be. Alternatives (integer or [integer, integer]; a number
// or "auto") are an anyOf of types.
struct ValueType {
  enum class Kind { kBool, kInteger, kNumber, kString, kArray, kObject, kTyped, kAnyOf, kNull };
  Kind kind = Kind::kNull;
  std::optional<double> minimum, maximum;  // numbers
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::vector<std::string> choices;        // strings: the allowed values, if limited
  TypePtr items;                           // arrays
  int64_t min_items = 0, max_items = -1;
  std::shared_ptr<const ObjectSpec> object;  // plain objects (sections)
  std::string category;                      // typed objects: the registry category ("layer")
  std::vector<TypePtr> alternatives;         // anyOf

  // "a number > 0", "one of \"float32\", \"float64\"": what an error says was expected.
  std::string describe() const;
};

// Constructors of the types the specs use.
TypePtr Bool();
TypePtr Integer(std::optional<double> minimum = std::nullopt, std::optional<double> maximum = std::nullopt);
TypePtr Number(std::optional<double> minimum = std::nullopt, std::optional<double> maximum = std::nullopt,
               bool exclusive_minimum = false);
TypePtr PositiveNumber();  // > 0
TypePtr String();
TypePtr Enum(std::vector<std::string> choices);
TypePtr Array(TypePtr items, int64_t min_items = 0, int64_t max_items = -1);
TypePtr Object(std::shared_ptr<const ObjectSpec> spec);
TypePtr Typed(std::string category);
TypePtr AnyOf(std::vector<TypePtr> alternatives);
TypePtr Null();
// `type` or the string "auto" (a value the builder derives, shown by --print-config).
TypePtr OrAuto(TypePtr type);
// `type` or null (PyTorch's None).
TypePtr OrNull(TypePtr type);

// One key of an object.
struct Field {
  std::string name;
  TypePtr type;
  std::string description;
  json default_value;        // filled in when the key is absent (null too: PyTorch's None)
  bool has_default = false;
  bool required = false;
  bool derived = false;      // filled in by the builder from the data when absent
  bool resume_safe = false;  // may change on --resume without changing the run's results

  Field& default_(json value) {
    default_value = std::move(value);
    has_default = true;
    return *this;
  }
  Field& require() { required = true; return *this; }
  Field& derive() { derived = true; return *this; }
  Field& safe_on_resume() { resume_safe = true; return *this; }
};

// An object's keys; for a registered type, also its name and one-line description.
struct ObjectSpec {
  std::string type_name;  // "Linear"; empty for a section
  std::string description;
  std::vector<Field> fields;
  // Cross-field rules on the resolved object (conflicting options): reports
  // into the diagnostics at `path`.
  std::function<void(const json& resolved, const std::string& path, Diagnostics& diagnostics)> check;

  ObjectSpec() = default;
  ObjectSpec(std::string type_name, std::string description)
      : type_name(std::move(type_name)), description(std::move(description)) {}
  Field& add(std::string name, TypePtr type, std::string description);
  const Field* find(const std::string& name) const;
  std::vector<std::string> field_names() const;
};

// A category of registered types: "layer", "loss", "optimizer", ...
struct Category {
  std::string name;         // "layer"
  std::string plural;       // "layers", as --list names it
  std::string description;
  std::map<std::string, ObjectSpec> types;
};

class SpecRegistry {
 public:
  Category& category(const std::string& name, const std::string& plural, const std::string& description);
  // Registers a type; a second registration of a name is a bug.
  ObjectSpec& add(const std::string& category, ObjectSpec spec);
  const Category* find_category(const std::string& name) const;
  const Category* find_category_by_plural(const std::string& plural) const;
  const ObjectSpec* find(const std::string& category, const std::string& type_name) const;
  const std::map<std::string, Category>& categories() const { return categories_; }

 private:
  std::map<std::string, Category> categories_;
};

}  // namespace gradiens::train

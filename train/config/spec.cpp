// The spec types' constructors, their descriptions for error messages, and the registry.
#include "train/config/spec.h"

#include <fmt/format.h>

#include "kernels/error.h"

namespace gradiens::train {

namespace {

std::shared_ptr<ValueType> make(ValueType::Kind kind) {
  auto type = std::make_shared<ValueType>();
  type->kind = kind;
  return type;
}

std::string format_number(double value) {
  if (value == static_cast<double>(static_cast<int64_t>(value))) return std::to_string(static_cast<int64_t>(value));
  return fmt::format("{}", value);
}

std::string range_text(const ValueType& type) {
  std::string text;
  if (type.minimum) text += fmt::format(" {} {}", type.exclusive_minimum ? ">" : ">=", format_number(*type.minimum));
  if (type.maximum) {
    if (type.minimum) text += " and";
    text += fmt::format(" {} {}", type.exclusive_maximum ? "<" : "<=", format_number(*type.maximum));
  }
  return text;
}

}  // namespace

std::string ValueType::describe() const {
  switch (kind) {
    case Kind::kBool: return "true or false";
    case Kind::kInteger: return "an integer" + range_text(*this);
    case Kind::kNumber: return "a number" + range_text(*this);
    case Kind::kString: {
      if (choices.empty()) return "a string";
      std::string text = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) text += (i ? ", \"" : "\"") + choices[i] + "\"";
      return text;
    }
    case Kind::kArray: {
      std::string count;
      if (min_items == max_items) count = fmt::format("{} ", min_items);
      else if (min_items > 0 && max_items < 0) count = fmt::format("at least {} ", min_items);
      return fmt::format("a list of {}values, each {}", count, items ? items->describe() : "any value");
    }
    case Kind::kObject: return "an object";
    case Kind::kTyped: return fmt::format("an object with a \"type\" (a {})", category);
    case Kind::kNull: return "null";
    case Kind::kAnyOf: {
      std::string text;
      for (size_t i = 0; i < alternatives.size(); ++i)
        text += (i == 0 ? "" : i + 1 == alternatives.size() ? " or " : ", ") + alternatives[i]->describe();
      return text;
    }
  }
  return "a value";
}

TypePtr Bool() { return make(ValueType::Kind::kBool); }

TypePtr Integer(std::optional<double> minimum, std::optional<double> maximum) {
  auto type = make(ValueType::Kind::kInteger);
  type->minimum = minimum;
  type->maximum = maximum;
  return type;
}

TypePtr Number(std::optional<double> minimum, std::optional<double> maximum, bool exclusive_minimum) {
  auto type = make(ValueType::Kind::kNumber);
  type->minimum = minimum;
  type->maximum = maximum;
  type->exclusive_minimum = exclusive_minimum;
  return type;
}

TypePtr PositiveNumber() { return Number(0.0, std::nullopt, /*exclusive_minimum=*/true); }

TypePtr String() { return make(ValueType::Kind::kString); }

TypePtr Enum(std::vector<std::string> choices) {
  auto type = make(ValueType::Kind::kString);
  type->choices = std::move(choices);
  return type;
}

TypePtr Array(TypePtr items, int64_t min_items, int64_t max_items) {
  auto type = make(ValueType::Kind::kArray);
  type->items = std::move(items);
  type->min_items = min_items;
  type->max_items = max_items;
  return type;
}

TypePtr Object(std::shared_ptr<const ObjectSpec> spec) {
  auto type = make(ValueType::Kind::kObject);
  type->object = std::move(spec);
  return type;
}

TypePtr Typed(std::string category) {
  auto type = make(ValueType::Kind::kTyped);
  type->category = std::move(category);
  return type;
}

TypePtr AnyOf(std::vector<TypePtr> alternatives) {
  auto type = make(ValueType::Kind::kAnyOf);
  type->alternatives = std::move(alternatives);
  return type;
}

TypePtr Null() { return make(ValueType::Kind::kNull); }

TypePtr OrAuto(TypePtr type) { return AnyOf({std::move(type), Enum({"auto"})}); }

TypePtr OrNull(TypePtr type) { return AnyOf({std::move(type), Null()}); }

Field& ObjectSpec::add(std::string name, TypePtr type, std::string description) {
  GD_INTERNAL_ASSERT(find(name) == nullptr, "ObjectSpec " + type_name + ": field " + name + " added twice");
  Field field;
  field.name = std::move(name);
  field.type = std::move(type);
  field.description = std::move(description);
  fields.push_back(std::move(field));
  return fields.back();
}

const Field* ObjectSpec::find(const std::string& name) const {
  for (const Field& field : fields)
    if (field.name == name) return &field;
  return nullptr;
}

std::vector<std::string> ObjectSpec::field_names() const {
  std::vector<std::string> names;
  for (const Field& field : fields) names.push_back(field.name);
  return names;
}

Category& SpecRegistry::category(const std::string& name, const std::string& plural, const std::string& description) {
  Category& category = categories_[name];
  category.name = name;
  category.plural = plural;
  category.description = description;
  return category;
}

ObjectSpec& SpecRegistry::add(const std::string& category, ObjectSpec spec) {
  auto it = categories_.find(category);
  GD_INTERNAL_ASSERT(it != categories_.end(), "SpecRegistry: unknown category " + category);
  const std::string name = spec.type_name;
  auto [entry, inserted] = it->second.types.emplace(name, std::move(spec));
  GD_INTERNAL_ASSERT(inserted, "SpecRegistry: " + category + " " + name + " registered twice");
  return entry->second;
}

const Category* SpecRegistry::find_category(const std::string& name) const {
  auto it = categories_.find(name);
  return it == categories_.end() ? nullptr : &it->second;
}

const Category* SpecRegistry::find_category_by_plural(const std::string& plural) const {
  for (const auto& [name, category] : categories_)
    if (category.plural == plural || category.name == plural) return &category;
  return nullptr;
}

const ObjectSpec* SpecRegistry::find(const std::string& category, const std::string& type_name) const {
  const Category* c = find_category(category);
  if (c == nullptr) return nullptr;
  auto it = c->types.find(type_name);
  return it == c->types.end() ? nullptr : &it->second;
}

}  // namespace gradiens::train

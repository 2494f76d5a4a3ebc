// JSON Schema generation from the specs (draft-07, additionalProperties false,
// a "type" const per registered type).
#include "train/config/schema.h"

namespace gradiens::train {

namespace {

json object_schema(const ObjectSpec& spec, bool typed);

json type_schema(const ValueType& type) {
  json schema = json::object();
  switch (type.kind) {
    case ValueType::Kind::kBool: schema["type"] = "boolean"; break;
    case ValueType::Kind::kInteger:
    case ValueType::Kind::kNumber:
      schema["type"] = type.kind == ValueType::Kind::kInteger ? "integer" : "number";
      if (type.minimum) schema[type.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *type.minimum;
      if (type.maximum) schema[type.exclusive_maximum ? "exclusiveMaximum" : "maximum"] = *type.maximum;
      break;
    case ValueType::Kind::kString:
      schema["type"] = "string";
      if (!type.choices.empty()) schema["enum"] = type.choices;
      break;
    case ValueType::Kind::kArray:
      schema["type"] = "array";
      if (type.items) schema["items"] = type_schema(*type.items);
      if (type.min_items > 0) schema["minItems"] = type.min_items;
      if (type.max_items >= 0) schema["maxItems"] = type.max_items;
      break;
    case ValueType::Kind::kObject: schema = object_schema(*type.object, false); break;
    case ValueType::Kind::kTyped: schema["$ref"] = "#/definitions/" + type.category; break;
    case ValueType::Kind::kNull: schema["type"] = "null"; break;
    case ValueType::Kind::kAnyOf:
      schema["anyOf"] = json::array();
      for (const TypePtr& alternative : type.alternatives) schema["anyOf"].push_back(type_schema(*alternative));
      break;
  }
  return schema;
}

json object_schema(const ObjectSpec& spec, bool typed) {
  json schema = {{"type", "object"}, {"additionalProperties", false}};
  if (!spec.description.empty()) schema["description"] = spec.description;
  json properties = json::object();
  json required = json::array();
  if (typed) {
    properties["type"] = {{"const", spec.type_name}, {"description", spec.description}};
    required.push_back("type");
  }
  for (const Field& field : spec.fields) {
    json property = type_schema(*field.type);
    property["description"] = field.description;
    if (field.has_default) property["default"] = field.default_value;
    properties[field.name] = property;
    if (field.required) required.push_back(field.name);
  }
  schema["properties"] = properties;
  if (!required.empty()) schema["required"] = required;
  return schema;
}

}  // namespace

json json_schema(const ObjectSpec& root, const SpecRegistry& registry) {
  json schema = object_schema(root, false);
  schema["$schema"] = "http://json-schema.org/draft-07/schema#";
  schema["title"] = "gradiens-train run configuration";
  json definitions = json::object();
  for (const auto& [name, category] : registry.categories()) {
    json one_of = json::array();
    for (const auto& [type_name, spec] : category.types) one_of.push_back(object_schema(spec, true));
    definitions[name] = {{"description", category.description}, {"oneOf", one_of}};
  }
  schema["definitions"] = definitions;
  return schema;
}

}  // namespace gradiens::train

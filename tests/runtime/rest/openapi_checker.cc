#include "tests/runtime/rest/openapi_checker.h"

#include <fstream>
#include <regex>

namespace weir::runtime::testing {

namespace {

// Follows `keys` from `node`; a null node when one is missing (yaml-cpp throws when a
// missing key is indexed further).
YAML::Node Dig(const YAML::Node& node, std::initializer_list<std::string> keys) {
  YAML::Node cur = node;
  for (const auto& key : keys) {
    if (!cur.IsMap() || !cur[key]) return YAML::Node();
    cur.reset(cur[key]);  // operator= would assign into the tree
  }
  return cur;
}

}  // namespace

std::unique_ptr<OpenApiSpec> OpenApiSpec::Load(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open Flink's OpenAPI file '" + path +
             "' (it is part of the source tree)";
    return nullptr;
  }
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (!root["paths"] || !root["components"]["schemas"]) {
      *error = "'" + path + "' has no 'paths' or 'components.schemas'";
      return nullptr;
    }
    return std::unique_ptr<OpenApiSpec>(new OpenApiSpec(root));
  } catch (const YAML::Exception& e) {
    *error = "cannot parse '" + path + "': " + e.what();
    return nullptr;
  }
}

YAML::Node OpenApiSpec::Schema(const std::string& name) const {
  return Dig(root_, {"components", "schemas", name});
}

bool OpenApiSpec::HasPath(const std::string& path) const {
  return !Dig(root_, {"paths", path}).IsNull();
}

YAML::Node OpenApiSpec::Resolve(const YAML::Node& schema) const {
  YAML::Node node = schema;
  for (int depth = 0; depth < 16 && node && node.IsMap() && node["$ref"]; ++depth) {
    std::string ref = node["$ref"].as<std::string>();
    const std::string prefix = "#/components/schemas/";
    if (ref.rfind(prefix, 0) != 0) return YAML::Node();
    node.reset(root_["components"]["schemas"][ref.substr(prefix.size())]);
  }
  return node;
}

YAML::Node OpenApiSpec::ResponseSchema(const std::string& path, const std::string& method,
                                       const std::string& status) const {
  YAML::Node schema = Dig(root_, {"paths", path, method, "responses", status, "content",
                                  "application/json", "schema"});
  if (schema.IsNull()) return YAML::Node();
  return Resolve(schema);
}

std::string OpenApiSpec::ResponseSchemaName(const std::string& path, const std::string& method,
                                            const std::string& status) const {
  YAML::Node schema = Dig(root_, {"paths", path, method, "responses", status, "content",
                                  "application/json", "schema"});
  if (!schema.IsMap() || !schema["$ref"]) return "";
  std::string ref = schema["$ref"].as<std::string>();
  return ref.substr(ref.find_last_of('/') + 1);
}

std::vector<std::string> OpenApiSpec::Check(const nlohmann::json& value, const YAML::Node& schema,
                                            const std::set<std::string>& nullable_paths,
                                            const std::set<std::string>& unchecked_paths) const {
  std::vector<std::string> problems;
  if (!schema || schema.IsNull()) {
    problems.push_back("$: no schema to check against");
    return problems;
  }
  CheckNode(value, schema, "$", Sets{nullable_paths, unchecked_paths}, &problems);
  return problems;
}

namespace {

// "$.history[3].id" -> "$.history[*].id".
std::string Generalize(const std::string& where) {
  static const std::regex index(R"(\[[0-9]+\])");
  return std::regex_replace(where, index, "[*]");
}

}  // namespace

void OpenApiSpec::Collect(const YAML::Node& raw, ObjectShape* shape, int depth) const {
  YAML::Node schema = Resolve(raw);
  if (depth > 16 || !schema || !schema.IsMap()) return;
  if (schema["allOf"]) {
    for (const auto& part : schema["allOf"]) Collect(part, shape, depth + 1);
  }
  if (schema["properties"]) {
    shape->free_form = false;
    for (const auto& p : schema["properties"]) {
      shape->properties[p.first.as<std::string>()].reset(p.second);
    }
  }
  if (schema["additionalProperties"] && schema["additionalProperties"].IsMap()) {
    shape->free_form = false;
    shape->additional.reset(schema["additionalProperties"]);
    shape->has_additional = true;
  }
  if (schema["required"]) {
    for (const auto& r : schema["required"]) shape->required.push_back(r.as<std::string>());
  }
}

void OpenApiSpec::CheckNode(const nlohmann::json& value, const YAML::Node& raw_schema,
                            const std::string& where, const Sets& sets,
                            std::vector<std::string>* problems) const {
  YAML::Node schema = Resolve(raw_schema);
  if (!schema || !schema.IsMap()) {
    problems->push_back(where + ": the schema cannot be resolved");
    return;
  }
  const std::string general = Generalize(where);
  if (sets.unchecked.count(general)) return;
  if (value.is_null()) {
    if (!sets.nullable.count(general)) {
      problems->push_back(where + ": null where the spec wants a value");
    }
    return;
  }
  // oneOf / anyOf: the value must fit at least one alternative. (Flink's alternatives
  // overlap — AsynchronousOperationInfo's only property is also SavepointInfo's — so
  // "exactly one" would reject what Flink itself writes.)
  if (schema["oneOf"] || schema["anyOf"]) {
    const char* keyword = schema["oneOf"] ? "oneOf" : "anyOf";
    std::vector<std::string> misfits;
    for (const auto& alternative : schema[keyword]) {
      std::vector<std::string> found;
      CheckNode(value, alternative, where, sets, &found);
      if (found.empty()) return;
      std::string name = "an inline schema";
      if (alternative.IsMap() && alternative["$ref"]) {
        std::string ref = alternative["$ref"].as<std::string>();
        name = ref.substr(ref.find_last_of('/') + 1);
      }
      for (const auto& f : found) misfits.push_back("  as " + name + ": " + f);
    }
    problems->push_back(where + ": fits none of the " + keyword + " alternatives");
    problems->insert(problems->end(), misfits.begin(), misfits.end());
    return;
  }

  std::string type = schema["type"] ? schema["type"].as<std::string>() : "";
  if (type.empty() && (schema["properties"] || schema["additionalProperties"] ||
                       schema["allOf"])) {
    type = "object";
  }

  if (type == "object") {
    if (!value.is_object()) {
      problems->push_back(where + ": expected object, got " + value.type_name());
      return;
    }
    // A discriminator switches to the schema its property names.
    if (schema["discriminator"]) {
      std::string prop = schema["discriminator"]["propertyName"].as<std::string>();
      if (!value.contains(prop) || !value[prop].is_string()) {
        problems->push_back(where + ": discriminator property '" + prop + "' is missing");
        return;
      }
      std::string tag = value[prop].get<std::string>();
      YAML::Node mapping = schema["discriminator"]["mapping"];
      if (!mapping || !mapping[tag]) {
        problems->push_back(where + ": '" + tag + "' is not a value of discriminator '" + prop +
                            "'");
        return;
      }
      YAML::Node ref;
      ref["$ref"] = mapping[tag].as<std::string>();
      YAML::Node target = Resolve(ref);
      ObjectShape shape;
      Collect(target, &shape, 0);
      // The mapped schema's allOf includes the base; check against the merged shape.
      for (const auto& r : shape.required) {
        if (!value.contains(r)) problems->push_back(where + ": required property '" + r + "' is missing");
      }
      for (const auto& [key, child] : value.items()) {
        auto it = shape.properties.find(key);
        if (it == shape.properties.end()) {
          problems->push_back(where + "." + key + ": property not declared by the '" + tag +
                              "' schema");
        } else {
          CheckNode(child, it->second, where + "." + key, sets, problems);
        }
      }
      return;
    }
    ObjectShape shape;
    Collect(schema, &shape, 0);
    for (const auto& r : shape.required) {
      if (!value.contains(r)) problems->push_back(where + ": required property '" + r + "' is missing");
    }
    if (shape.free_form) return;  // RawJson and other free-form objects
    for (const auto& [key, child] : value.items()) {
      std::string child_where = where + "." + key;
      auto it = shape.properties.find(key);
      if (it != shape.properties.end()) {
        CheckNode(child, it->second, child_where, sets, problems);
      } else if (shape.has_additional) {
        CheckNode(child, shape.additional, child_where, sets, problems);
      } else {
        problems->push_back(child_where + ": property not declared by the schema");
      }
    }
    return;
  }
  if (type == "array") {
    if (!value.is_array()) {
      problems->push_back(where + ": expected array, got " + value.type_name());
      return;
    }
    for (size_t i = 0; i < value.size(); ++i) {
      CheckNode(value[i], schema["items"], where + "[" + std::to_string(i) + "]", sets, problems);
    }
    return;
  }
  if (type == "string") {
    if (!value.is_string()) {
      problems->push_back(where + ": expected string, got " + value.type_name());
      return;
    }
    const std::string s = value.get<std::string>();
    if (schema["enum"]) {
      bool found = false;
      for (const auto& e : schema["enum"]) found = found || e.as<std::string>() == s;
      if (!found) problems->push_back(where + ": '" + s + "' is not one of the enum values");
    }
    if (schema["pattern"]) {
      std::regex re(schema["pattern"].as<std::string>());
      if (!std::regex_match(s, re)) {
        problems->push_back(where + ": '" + s + "' does not match pattern " +
                            schema["pattern"].as<std::string>());
      }
    }
    return;
  }
  if (type == "integer") {
    if (!value.is_number_integer()) {
      problems->push_back(where + ": expected integer, got " + value.dump());
    }
    return;
  }
  if (type == "number") {
    if (!value.is_number()) problems->push_back(where + ": expected number, got " + value.dump());
    return;
  }
  if (type == "boolean") {
    if (!value.is_boolean()) problems->push_back(where + ": expected boolean, got " + value.dump());
    return;
  }
  problems->push_back(where + ": unsupported schema type '" + type + "'");
}

std::vector<std::string> MissingKeys(const nlohmann::json& object,
                                     const std::vector<std::string>& required) {
  std::vector<std::string> missing;
  for (const auto& key : required) {
    if (!object.is_object() || !object.contains(key)) missing.push_back(key);
  }
  return missing;
}

}  // namespace weir::runtime::testing

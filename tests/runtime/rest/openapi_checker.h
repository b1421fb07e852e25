#pragma once
// Checks JSON documents against the response schemas of Flink's OpenAPI file
// (tests/runtime/rest/flink-rest-v1-openapi.yml). Test-only.
//
// Rules: every property a document has must be declared by its schema (or allowed by
// additionalProperties) and be of the declared JSON type; string enums and patterns
// (JobID: [0-9a-f]{32}) must hold; "required" properties must be present. A schema
// with neither properties nor additionalProperties (RawJson) accepts any object.
// null is accepted only at the paths the caller lists (Flink writes some nullable
// fields as null, e.g. JobExceptionsInfo's "root-exception"); "allOf" schemas merge
// their parts, "oneOf" / "anyOf" need the value to fit at least one alternative, and a
// "discriminator" (CheckpointStatistics' "className") picks the
// mapped schema. Paths look like "$.history[0].id"; in the caller's sets "[*]" stands
// for any index.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace weir::runtime::testing {

class OpenApiSpec {
 public:
  // Loads the file; nullptr with *error set when it is missing or does not parse.
  static std::unique_ptr<OpenApiSpec> Load(const std::string& path, std::string* error);

  // The schema of the application/json response `status` of `method` ("get") on
  // `path` ("/jobs/{jobid}"), with a top-level $ref resolved; an undefined node when
  // the spec has none.
  YAML::Node ResponseSchema(const std::string& path, const std::string& method,
                            const std::string& status) const;
  // The name of the response schema ("JobDetailsInfo"), or "" when it is inline.
  std::string ResponseSchemaName(const std::string& path, const std::string& method,
                                 const std::string& status) const;

  // Problems found, one line each ("$.jobs[0].tasks: expected object, got string").
  // `unchecked_paths`: values known to differ from the spec whose
  // property must still be declared but whose value is checked by the caller.
  std::vector<std::string> Check(const nlohmann::json& value, const YAML::Node& schema,
                                 const std::set<std::string>& nullable_paths = {},
                                 const std::set<std::string>& unchecked_paths = {}) const;

  bool HasPath(const std::string& path) const;
  // The named schema of components.schemas ("SavepointInfo"); a null node when absent.
  YAML::Node Schema(const std::string& name) const;

 private:
  explicit OpenApiSpec(YAML::Node root) : root_(std::move(root)) {}
  struct Sets {
    const std::set<std::string>& nullable;
    const std::set<std::string>& unchecked;
  };
  // The properties, additionalProperties and required names of an object schema,
  // merged over "allOf".
  struct ObjectShape {
    std::map<std::string, YAML::Node> properties;
    YAML::Node additional;
    bool has_additional = false;
    std::vector<std::string> required;
    bool free_form = true;  // no properties and no additionalProperties anywhere
  };
  YAML::Node Resolve(const YAML::Node& schema) const;
  void Collect(const YAML::Node& schema, ObjectShape* shape, int depth) const;
  void CheckNode(const nlohmann::json& value, const YAML::Node& schema, const std::string& where,
                 const Sets& sets, std::vector<std::string>* problems) const;

  YAML::Node root_;
};

// The keys of `required` that `object` lacks (also when `object` is not an object).
std::vector<std::string> MissingKeys(const nlohmann::json& object,
                                     const std::vector<std::string>& required);

}  // namespace weir::runtime::testing

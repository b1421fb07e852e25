// Request bodies and responses of the asynchronous operations: savepoint, stop-with-savepoint,
// disposal and checkpoint triggers (as Flink; OpenAPI SavepointTriggerRequestBody,
// StopWithSavepointRequestBody, SavepointDisposalRequest, CheckpointTriggerRequestBody,
// TriggerResponse, AsynchronousOperationResult, SavepointInfo, AsynchronousOperationInfo,
// CheckpointInfo).

#include <algorithm>

#include "lib/common/string_util.h"
#include "runtime/rest/java_serialization_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

using nlohmann::json;

namespace {

// One of Flink's request body classes: its name, its fields, an example for hints.
struct BodyClass {
  std::string name;
  std::vector<std::string> fields;
  std::string example;
};

const BodyClass& SavepointTriggerClass() {
  static const BodyClass c{
      "SavepointTriggerRequestBody",
      {"target-directory", "cancel-job", "formatType", "triggerId"},
      R"({"target-directory": "file:///savepoints", "cancel-job": false, "formatType": "CANONICAL"})"};
  return c;
}

const BodyClass& StopWithSavepointClass() {
  static const BodyClass c{
      "StopWithSavepointRequestBody",
      {"targetDirectory", "drain", "formatType", "triggerId"},
      R"({"targetDirectory": "file:///savepoints", "drain": false, "formatType": "CANONICAL"})"};
  return c;
}

const BodyClass& SavepointDisposalClass() {
  static const BodyClass c{"SavepointDisposalRequest",
                           {"savepoint-path"},
                           R"({"savepoint-path": "file:///savepoints/savepoint-0123ab-0123456789ab"})"};
  return c;
}

const BodyClass& CheckpointTriggerClass() {
  static const BodyClass c{"CheckpointTriggerRequestBody",
                           {"checkpointType", "triggerId"},
                           R"({"checkpointType": "FULL"})"};
  return c;
}

Status FieldError(const BodyClass& body_class, const std::string& field,
                  const std::string& problem) {
  return Status::InvalidArgument("request field '" + field + "' " + problem)
      .WithHint(body_class.name + " fields are: " + Join(body_class.fields, ", ") +
                "; for example " + body_class.example);
}

// The body as a JSON object with only `body_class`'s fields; an empty body is {}.
Result<json> ParseObject(const std::string& body, const BodyClass& body_class) {
  if (Trim(body).empty()) return json::object();
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument("request body is not valid JSON (expected a " +
                                   body_class.name + "): " + e.what())
        .WithHint("send a JSON object such as " + body_class.example);
  }
  if (!j.is_object()) {
    return Status::InvalidArgument("request body must be a JSON object (" + body_class.name +
                                   "), got " + std::string(j.type_name()))
        .WithHint("send a JSON object such as " + body_class.example);
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(body_class.fields.begin(), body_class.fields.end(), key) ==
        body_class.fields.end()) {
      return Status::InvalidArgument("unknown request field: '" + key + "' is not a field of " +
                                     body_class.name)
          .WithHint(body_class.name + " fields are: " + Join(body_class.fields, ", ") +
                    "; for example " + body_class.example);
    }
  }
  return j;
}

// The field's value, or nullptr when it is absent or null (Jackson treats both alike).
const json* Present(const json& j, const std::string& field) {
  auto it = j.find(field);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

Status ReadString(const json& j, const std::string& field, const BodyClass& body_class,
                  std::string* out) {
  const json* v = Present(j, field);
  if (v == nullptr) return Status::OK();
  if (!v->is_string()) return FieldError(body_class, field, "must be a string, got " + v->dump());
  *out = v->get<std::string>();
  return Status::OK();
}

Status ReadTargetDirectory(const json& j, const std::string& field, const BodyClass& body_class,
                           std::string* out) {
  WEIR_RETURN_IF_ERROR(ReadString(j, field, body_class, out));
  if (Present(j, field) != nullptr && Trim(*out).empty()) {
    return Status::InvalidArgument("request field '" + field + "' must not be empty")
        .WithHint("leave '" + field + "' out (or null) to use the configured "
                  "execution.checkpointing.savepoint-dir");
  }
  return Status::OK();
}

Status ReadBool(const json& j, const std::string& field, const BodyClass& body_class, bool* out) {
  const json* v = Present(j, field);
  if (v == nullptr) return Status::OK();
  if (v->is_boolean()) {
    *out = v->get<bool>();
    return Status::OK();
  }
  if (v->is_string()) {  // Jackson coerces "true" / "false"
    std::string lower = ToLower(Trim(v->get<std::string>()));
    if (lower == "true" || lower == "false") {
      *out = lower == "true";
      return Status::OK();
    }
  }
  return FieldError(body_class, field, "must be true or false, got " + v->dump());
}

Status ReadFormatType(const json& j, const BodyClass& body_class, std::string* out) {
  const json* v = Present(j, "formatType");
  if (v == nullptr) return Status::OK();
  if (v->is_string()) {
    std::string upper = ToUpper(Trim(v->get<std::string>()));
    if (upper == "CANONICAL" || upper == "NATIVE") {
      *out = upper;
      return Status::OK();
    }
  }
  return FieldError(body_class, "formatType", "must be CANONICAL or NATIVE, got " + v->dump());
}

Status ReadTriggerId(const json& j, const BodyClass& body_class, std::optional<TriggerId>* out) {
  const json* v = Present(j, "triggerId");
  if (v == nullptr) return Status::OK();
  if (!v->is_string()) {
    return FieldError(body_class, "triggerId", "must be a string of 32 hex characters, got " +
                                                   v->dump());
  }
  Result<TriggerId> id = TriggerId::Parse(v->get<std::string>());
  if (!id.ok()) {
    return FieldError(body_class, "triggerId",
                      "is not a trigger id (32 hex characters): " + id.status().message());
  }
  *out = *id;
  return Status::OK();
}

}  // namespace

Result<SavepointTriggerRequest> ParseSavepointTriggerRequest(const std::string& body) {
  const BodyClass& c = SavepointTriggerClass();
  WEIR_ASSIGN_OR_RETURN(json j, ParseObject(body, c));
  SavepointTriggerRequest req;
  WEIR_RETURN_IF_ERROR(ReadTargetDirectory(j, "target-directory", c, &req.target_directory));
  WEIR_RETURN_IF_ERROR(ReadBool(j, "cancel-job", c, &req.cancel_job));
  WEIR_RETURN_IF_ERROR(ReadFormatType(j, c, &req.format_type));
  WEIR_RETURN_IF_ERROR(ReadTriggerId(j, c, &req.trigger_id));
  return req;
}

Result<StopWithSavepointRequest> ParseStopWithSavepointRequest(const std::string& body) {
  const BodyClass& c = StopWithSavepointClass();
  WEIR_ASSIGN_OR_RETURN(json j, ParseObject(body, c));
  StopWithSavepointRequest req;
  WEIR_RETURN_IF_ERROR(ReadTargetDirectory(j, "targetDirectory", c, &req.target_directory));
  WEIR_RETURN_IF_ERROR(ReadBool(j, "drain", c, &req.drain));
  WEIR_RETURN_IF_ERROR(ReadFormatType(j, c, &req.format_type));
  WEIR_RETURN_IF_ERROR(ReadTriggerId(j, c, &req.trigger_id));
  return req;
}

Result<std::string> ParseSavepointDisposalRequest(const std::string& body) {
  const BodyClass& c = SavepointDisposalClass();
  WEIR_ASSIGN_OR_RETURN(json j, ParseObject(body, c));
  std::string path;
  WEIR_RETURN_IF_ERROR(ReadString(j, "savepoint-path", c, &path));
  if (Present(j, "savepoint-path") == nullptr) {
    // Flink: "Field savepoint-path must not be omitted or be null."
    return FieldError(c, "savepoint-path", "must not be omitted or be null");
  }
  if (Trim(path).empty()) return FieldError(c, "savepoint-path", "must not be empty");
  return path;
}

Result<CheckpointTriggerRequest> ParseCheckpointTriggerRequest(const std::string& body) {
  const BodyClass& c = CheckpointTriggerClass();
  WEIR_ASSIGN_OR_RETURN(json j, ParseObject(body, c));
  CheckpointTriggerRequest req;
  if (const json* v = Present(j, "checkpointType")) {
    std::string upper = v->is_string() ? ToUpper(Trim(v->get<std::string>())) : "";
    if (upper == "CONFIGURED") {
      req.type = CheckpointTriggerType::kConfigured;
    } else if (upper == "FULL") {
      req.type = CheckpointTriggerType::kFull;
    } else if (upper == "INCREMENTAL") {
      req.type = CheckpointTriggerType::kIncremental;
    } else {
      return FieldError(c, "checkpointType",
                        "must be CONFIGURED, FULL or INCREMENTAL, got " + v->dump());
    }
  }
  WEIR_RETURN_IF_ERROR(ReadTriggerId(j, c, &req.trigger_id));
  return req;
}

json TriggerResponseJson(const TriggerId& trigger) { return {{"request-id", trigger.ToHex()}}; }

json SerializedThrowableJson(const std::string& class_name, const std::string& text) {
  std::string trace = text.rfind(class_name, 0) == 0 ? text : class_name + ": " + text;
  std::string message = text.rfind(class_name + ": ", 0) == 0 ? text.substr(class_name.size() + 2) : text;
  return {{"class", class_name},
          {"stack-trace", trace},
          {"serialized-throwable", JavaSerializedThrowableBase64(class_name, message, trace)}};
}

namespace {

json FailureCauseJson(const AsyncOperationStatus& status) {
  const std::string& cls =
      status.failure_class.empty() ? std::string(kDefaultSavepointFailureClass) : status.failure_class;
  return SerializedThrowableJson(cls, *status.failure);
}

json InProgressJson() { return {{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}}; }

}  // namespace

Result<json> SavepointStatusJson(const AsyncOperationStatus& status) {
  if (!status.completed) return InProgressJson();
  json operation;
  if (status.failure) {
    operation = {{"failure-cause", FailureCauseJson(status)}};
  } else if (!status.location.empty()) {
    operation = {{"location", status.location}};
  } else {
    return Status::Internal(
        "the savepoint operation completed with neither a location nor a failure cause");
  }
  return json{{"status", {{"id", "COMPLETED"}}}, {"operation", operation}};
}

Result<json> CheckpointTriggerStatusJson(const AsyncOperationStatus& status) {
  if (!status.completed) return InProgressJson();
  json operation;
  if (status.failure) {
    const std::string& cls = status.failure_class.empty() ? std::string(kDefaultCheckpointFailureClass)
                                                          : status.failure_class;
    operation = {{"failureCause", SerializedThrowableJson(cls, *status.failure)}};
  } else if (status.checkpoint_id >= 0) {
    operation = {{"checkpointId", status.checkpoint_id}};
  } else {
    return Status::Internal(
        "the checkpoint operation completed with neither a checkpoint id nor a failure cause");
  }
  return json{{"status", {{"id", "COMPLETED"}}}, {"operation", operation}};
}

json DisposalStatusJson(const AsyncOperationStatus& status) {
  if (!status.completed) return InProgressJson();
  json cause = status.failure ? FailureCauseJson(status) : json(nullptr);
  return {{"status", {{"id", "COMPLETED"}}}, {"operation", {{"failure-cause", cause}}}};
}

}  // namespace weir::runtime

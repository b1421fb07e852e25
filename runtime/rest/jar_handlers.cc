// /jars (GET), /jars/upload (POST), /jars/:jarid/run (POST), /jars/:jarid (DELETE).
// A "jar" is a weir job shared object; the names are Flink's.

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

namespace {

constexpr char kJarField[] = "jarfile";

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// POST /jars/upload: multipart/form-data with exactly one file part named "jarfile"
// (curl -F "jarfile=@job.so" http://host:8081/jars/upload).
RestResponse HandleUpload(const RestContext& ctx, const RestRequest& request) {
  const std::string hint =
      "upload with: curl -X POST -H \"Expect:\" -F \"jarfile=@path/to/job.so\" <address>/jars/upload";
  size_t count = request.files.count(kJarField);
  if (count != 1) {
    std::string message = "expected exactly 1 file in the multipart form field '" +
                          std::string(kJarField) + "', received " + std::to_string(count);
    if (request.files.empty() && request.content_type.find("multipart/form-data") ==
                                     std::string::npos) {
      message += " (the request is not multipart/form-data)";
    }
    return ErrorResponse(Status::InvalidArgument(message).WithHint(hint));
  }
  const RestRequest::FilePart& part = request.files.find(kJarField)->second;
  std::string name = BaseName(part.filename);
  if (name.empty()) {
    return ErrorResponse(
        Status::InvalidArgument("the file in form field 'jarfile' has no file name").WithHint(hint));
  }
  WEIR_REST_ASSIGN_OR_RESPOND(JarInfo jar, ctx.dispatcher->UploadJar(name, part.content));
  return JsonResponse(200, JarUploadJson(jar));
}

RestResponse HandleRun(const RestContext& ctx, const RestRequest& request) {
  const std::string& jar_id = request.path_params.at("jarid");
  WEIR_REST_ASSIGN_OR_RESPOND(JarRunRequest run, ParseJarRunRequest(request.body, request.query));
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, ctx.dispatcher->RunJar(jar_id, run));
  return JsonResponse(200, {{"jobid", id.ToHex()}});
}

}  // namespace

void RegisterJarHandlers(Router& router, const RestContext& ctx) {
  router.Add("GET", "/jars", [&ctx](const RestRequest&) {
    return JsonResponse(200, JarListJson(ctx.Address(), ctx.dispatcher->ListJars()));
  });
  router.Add("POST", "/jars/upload", [&ctx](const RestRequest& request) {
    return HandleUpload(ctx, request);
  });
  router.Add("POST", "/jars/:jarid/run", [&ctx](const RestRequest& request) {
    return HandleRun(ctx, request);
  });
  router.Add("DELETE", "/jars/:jarid", [&ctx](const RestRequest& request) {
    Status st = ctx.dispatcher->DeleteJar(request.path_params.at("jarid"));
    if (!st.ok()) return ErrorResponse(st);
    return JsonResponse(200, nlohmann::json::object());
  });
}

}  // namespace weir::runtime

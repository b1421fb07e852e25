// The web dashboard: GET / (and /index.html) and its scripts and styles, from the files
// of runtime/rest/web/ compiled into the runtime. The page reads the REST API itself.

#include <string>

#include "lib/common/string_util.h"
#include "runtime/rest/dashboard_files_internal.h"
#include "runtime/rest/rest_handlers_internal.h"

namespace weir::runtime {

namespace {

std::string ContentTypeOf(const std::string& name) {
  if (EndsWith(name, ".html")) return "text/html; charset=UTF-8";
  if (EndsWith(name, ".js")) return "text/javascript; charset=UTF-8";
  if (EndsWith(name, ".css")) return "text/css; charset=UTF-8";
  if (EndsWith(name, ".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

RestResponse FileResponse(const DashboardFile& file) {
  RestResponse res;
  res.body.assign(reinterpret_cast<const char*>(file.data), file.size);
  res.content_type = ContentTypeOf(file.name);
  // A new runtime may serve newer files: the browser checks each time.
  res.headers.emplace_back("Cache-Control", "no-cache");
  return res;
}

}  // namespace

void RegisterDashboardHandlers(Router& router) {
  for (int i = 0; i < kDashboardFileCount; ++i) {
    const DashboardFile& file = kDashboardFiles[i];
    auto serve = [&file](const RestRequest&) { return FileResponse(file); };
    router.Add("GET", std::string("/") + file.name, serve);
    if (std::string(file.name) == "index.html") router.Add("GET", "/", serve);
  }
}

}  // namespace weir::runtime

// GET /overview and GET /config.

#include <ctime>

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

namespace {

// The local time zone's abbreviation ("UTC", "CET") and offset from UTC in ms.
void LocalTimeZone(std::string* name, int64_t* offset_ms) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  *name = local.tm_zone != nullptr ? local.tm_zone : "UTC";
  *offset_ms = static_cast<int64_t>(local.tm_gmtoff) * 1000;
}

}  // namespace

std::string RestContext::Address() const {
  return "http://" + options.bind_address + ":" + std::to_string(bound_port.load());
}

void RegisterClusterHandlers(Router& router, const RestContext& ctx) {
  router.Add("GET", "/overview", [&ctx](const RestRequest&) {
    return JsonResponse(200, ClusterOverviewJson(ctx.dispatcher->Overview(), ctx.options.version,
                                                 ctx.options.commit));
  });
  router.Add("GET", "/config", [&ctx](const RestRequest&) {
    std::string tz_name;
    int64_t tz_offset = 0;
    LocalTimeZone(&tz_name, &tz_offset);
    return JsonResponse(
        200, DashboardConfigJson(ctx.options.version, ctx.options.commit, tz_name, tz_offset));
  });
}

}  // namespace weir::runtime

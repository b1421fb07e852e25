#include "runtime/rest/rest_router_internal.h"

#include <set>

#include "lib/common/string_util.h"
#include "runtime/rest/status_http.h"

namespace weir::runtime {

const std::string* RestRequest::Query(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? nullptr : &it->second;
}

RestResponse ErrorResponse(const Status& status) {
  RestResponse res;
  res.status = HttpStatusFor(status);
  res.body = ErrorBody(status);
  return res;
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  for (auto& part : Split(path, '/')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

void Router::Add(const std::string& method, const std::string& pattern, RestHandler handler) {
  routes_.push_back(Route_{method, SplitPath(pattern), std::move(handler)});
}

namespace {

// True when `segments` fit `pattern`; fills `params`.
bool Match(const std::vector<std::string>& pattern, const std::vector<std::string>& segments,
           std::map<std::string, std::string>* params) {
  if (pattern.size() != segments.size()) return false;
  params->clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (!pattern[i].empty() && pattern[i][0] == ':') {
      (*params)[pattern[i].substr(1)] = segments[i];
    } else if (pattern[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

// True when `a` is more specific than `b`: at the first position where one has a
// literal and the other a parameter, the literal wins.
bool MoreSpecific(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    bool a_param = !a[i].empty() && a[i][0] == ':';
    bool b_param = !b[i].empty() && b[i][0] == ':';
    if (a_param != b_param) return !a_param;
  }
  return false;
}

}  // namespace

namespace {

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> segments = SplitPath(path);
  if (!segments.empty() && segments[0] == "v1") segments.erase(segments.begin());
  return segments;
}

RestResponse NotFound(const std::string& path) {
  RestResponse res;
  res.status = 404;
  res.body = ErrorBody(std::vector<std::string>{"Not found: " + path});
  return res;
}

}  // namespace

RestResponse Router::Route(RestRequest& request) const {
  const std::vector<std::string> segments = Segments(request.path);
  const std::string method = request.method == "HEAD" ? "GET" : request.method;

  const Route_* best = nullptr;
  std::map<std::string, std::string> best_params, params;
  bool path_matched = false;
  for (const auto& route : routes_) {
    if (!Match(route.segments, segments, &params)) continue;
    path_matched = true;
    if (route.method != method) continue;
    if (best == nullptr || MoreSpecific(route.segments, best->segments)) {
      best = &route;
      best_params = params;
    }
  }
  if (best != nullptr) {
    request.path_params = std::move(best_params);
    return best->handler(request);
  }
  if (!path_matched) return NotFound(request.path);
  return MethodNotAllowed(request.method, request.path);
}

std::vector<std::string> Router::AllowedMethods(const std::string& path) const {
  const std::vector<std::string> segments = Segments(path);
  std::set<std::string> allowed;
  std::map<std::string, std::string> params;
  for (const auto& route : routes_) {
    if (Match(route.segments, segments, &params)) allowed.insert(route.method);
  }
  if (allowed.count("GET") != 0) allowed.insert("HEAD");
  return {allowed.begin(), allowed.end()};
}

RestResponse Router::MethodNotAllowed(const std::string& method, const std::string& path) const {
  std::vector<std::string> methods = AllowedMethods(path);
  if (methods.empty()) return NotFound(path);
  RestResponse res;
  res.status = 405;
  res.body = ErrorBody(std::vector<std::string>{
      "method '" + method + "' is not allowed on '" + path + "'", "hint: use " + Join(methods, " or ")});
  res.headers.emplace_back("Allow", Join(methods, ", "));
  return res;
}

}  // namespace weir::runtime

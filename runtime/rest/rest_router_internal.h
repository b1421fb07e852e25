#pragma once
// Request routing for the REST server, free of the HTTP library: the server turns an
// httplib request into a RestRequest, the Router picks the handler, and the handler's
// RestResponse goes back out. Internal to runtime/rest (and its tests).

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/status.h"

namespace weir::runtime {

struct RestRequest {
  struct FilePart {
    std::string filename;      // as sent by the client
    std::string content_type;
    std::string content;
  };
  std::string method;          // "GET", "POST", ... ("HEAD" is routed as "GET")
  std::string path;            // as received (decoded), for messages
  std::map<std::string, std::string> path_params;      // filled by the Router
  std::multimap<std::string, std::string> query;       // decoded query parameters
  std::string content_type;
  std::string body;            // empty for multipart requests
  std::multimap<std::string, FilePart> files;          // multipart/form-data parts

  // The first value of a query parameter, or nullptr when absent.
  const std::string* Query(const std::string& name) const;
};

struct RestResponse {
  int status = 200;
  std::string body;            // JSON text, unless content_type says otherwise
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;    // empty: JSON (the API); set by the dashboard's files
};

// A RestResponse carrying Flink's error body for `status` (see status_http.h).
RestResponse ErrorResponse(const Status& status);

using RestHandler = std::function<RestResponse(const RestRequest&)>;

class Router {
 public:
  // `pattern` is a path like "/jobs/:jobid/exceptions"; ":name" matches one non-empty
  // segment and is passed in RestRequest::path_params. Register without "/v1".
  void Add(const std::string& method, const std::string& pattern, RestHandler handler);

  // Strips an optional "/v1" prefix and a trailing '/', then runs the most specific
  // route for the path and method (a literal segment beats a ":param" one).
  // A path no route matches → 404 {"errors":["Not found: <path>"]}; a path that some
  // route matches but not with this method → MethodNotAllowed().
  RestResponse Route(RestRequest& request) const;

  // The methods `path` is served with, sorted: those of every route that matches it, and
  // HEAD wherever GET is (it is answered as GET). Empty when no route matches.
  std::vector<std::string> AllowedMethods(const std::string& path) const;
  // 405 for `method` on `path` with Flink's error body and an Allow header listing
  // AllowedMethods(path); 404 when no route matches the path.
  RestResponse MethodNotAllowed(const std::string& method, const std::string& path) const;

 private:
  struct Route_ {
    std::string method;
    std::vector<std::string> segments;
    RestHandler handler;
  };
  std::vector<Route_> routes_;
};

// Splits "/a/b/" into {"a", "b"}; "/" into {}.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace weir::runtime

#include "runtime/rest/rest_server.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "lib/common/logging.h"
#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_router_internal.h"
#include "runtime/rest/status_http.h"

namespace weir::runtime {

namespace {

constexpr char kJsonContentType[] = "application/json; charset=UTF-8";

// SO_REUSEADDR only. httplib's default also sets SO_REUSEPORT, which would let a second
// server bind a port that is in use instead of failing.
void SocketOptions(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

RestRequest ToRestRequest(const httplib::Request& req) {
  RestRequest out;
  out.method = req.method;
  out.path = req.path;
  out.query = req.params;
  out.content_type = req.get_header_value("Content-Type");
  out.body = req.body;
  for (const auto& [name, part] : req.files) {
    out.files.emplace(name, RestRequest::FilePart{part.filename, part.content_type, part.content});
  }
  return out;
}

void WriteResponse(const RestResponse& rest, httplib::Response& res) {
  res.status = rest.status;
  for (const auto& [name, value] : rest.headers) res.set_header(name, value);
  res.set_content(rest.body, rest.content_type.empty() ? kJsonContentType : rest.content_type);
}

}  // namespace

struct RestServer::Impl {
  RestContext ctx;
  Router router;
  httplib::Server server;
  std::mutex mu;          // guards Start/Stop
  std::thread thread;     // runs server.listen_after_bind()
  std::atomic<bool> listen_returned{false};
  bool started = false;

  void Serve(const httplib::Request& req, httplib::Response& res) {
    RestRequest request = ToRestRequest(req);
    RestResponse response;
    try {
      response = router.Route(request);
    } catch (const std::exception& e) {
      LogError("REST {} {} failed: {}", req.method, req.path, e.what());
      response.status = 500;
      response.body = ErrorBody(std::vector<std::string>{
          std::string("internal server error while handling '") + req.path + "': " + e.what()});
    }
    WriteResponse(response, res);
  }

  // Errors httplib answers itself (before our router runs) get Flink's error body too.
  httplib::Server::HandlerResponse OnError(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::vector<std::string> errors;
    if (res.status == 413) {
      std::string size = req.get_header_value("Content-Length");
      errors.push_back("request body" + (size.empty() ? "" : " of " + size + " bytes") +
                       " exceeds the maximum content length of " +
                       std::to_string(ctx.options.max_content_length) + " bytes");
      errors.push_back("hint: raise rest.server.max-content-length (e.g. -D "
                       "rest.server.max-content-length=<bytes>)");
    } else if (res.status == 404) {
      errors.push_back("Not found: " + req.path);
    } else if (res.status == 414) {
      errors.push_back("request URI is too long");
    } else if (res.status == 400 && (req.method == "TRACE" || req.method == "CONNECT")) {
      // httplib parses these methods but has no handlers for them: the router's 405 (with
      // its Allow header), or its 404 for a path nothing serves.
      WriteResponse(router.MethodNotAllowed(req.method, req.path), res);
      return httplib::Server::HandlerResponse::Handled;
    } else if (res.status == 400) {
      errors.push_back("bad request: the HTTP request could not be parsed");
    } else {
      errors.push_back("HTTP error " + std::to_string(res.status) + " for '" + req.path + "'");
    }
    res.set_content(ErrorBody(errors), kJsonContentType);
    return httplib::Server::HandlerResponse::Handled;
  }
};

RestServer::RestServer(Dispatcher& dispatcher, RestServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl* impl = impl_.get();
  impl->ctx.dispatcher = &dispatcher;
  impl->ctx.options = std::move(options);
  RegisterClusterHandlers(impl->router, impl->ctx);
  RegisterJobHandlers(impl->router, impl->ctx);
  RegisterCheckpointHandlers(impl->router, impl->ctx);
  RegisterSavepointHandlers(impl->router, impl->ctx);
  RegisterJarHandlers(impl->router, impl->ctx);
  RegisterVertexHandlers(impl->router, impl->ctx);
  RegisterDashboardHandlers(impl->router);

  httplib::Server& svr = impl->server;
  auto serve = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->Serve(req, res);
  };
  // One catch-all per method: routing, 404 and 405 are the Router's.
  const std::string any = ".*";
  svr.Get(any, serve);
  svr.Post(any, serve);
  svr.Put(any, serve);
  svr.Patch(any, serve);
  svr.Delete(any, serve);
  svr.Options(any, serve);
  // A body-less request (PATCH/POST/PUT/DELETE with neither Content-Length nor chunked
  // encoding, as `curl -X PATCH .../jobs/<id>?mode=cancel` sends) has an empty body
  // by HTTP's rules; httplib would instead wait for the connection to close. Serve
  // those before httplib reads.
  svr.set_pre_routing_handler([impl](const httplib::Request& req, httplib::Response& res) {
    bool may_have_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
                         req.method == "DELETE";
    if (!may_have_body || req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    impl->Serve(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [impl](const httplib::Request& req, httplib::Response& res) {
        return impl->OnError(req, res);
      }));
  svr.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(ErrorBody(std::vector<std::string>{
                            "internal server error while handling '" + req.path + "'"}),
                        kJsonContentType);
      });
  svr.set_socket_options(SocketOptions);
  svr.set_payload_max_length(static_cast<size_t>(impl->ctx.options.max_content_length));
  svr.set_default_headers({{"Access-Control-Allow-Origin", "*"}});
  svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    LogDebug("REST {} {} -> {}", req.method, req.path, res.status);
  });
}

RestServer::~RestServer() { Stop(); }

Status RestServer::Start() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const RestServerOptions& opts = impl_->ctx.options;
  if (impl_->started) {
    return Status::FailedPrecondition("the REST server on '" + opts.bind_address + ":" +
                                      std::to_string(impl_->ctx.bound_port.load()) +
                                      "' was already started; a server cannot be started twice");
  }
  if (opts.port < 0 || opts.port > 65535) {
    return Status::InvalidArgument("invalid REST port " + std::to_string(opts.port) +
                                   ": expected 0..65535")
        .WithHint("set rest.port (or rest.bind-port) with -D rest.port=<port>");
  }
  if (opts.max_content_length <= 0) {
    return Status::InvalidArgument("invalid rest.server.max-content-length " +
                                   std::to_string(opts.max_content_length) +
                                   ": expected a positive number of bytes");
  }
  const std::string where = opts.bind_address + ":" + std::to_string(opts.port);
  errno = 0;
  int port = -1;
  if (opts.port == 0) {
    port = impl_->server.bind_to_any_port(opts.bind_address);
  } else if (impl_->server.bind_to_port(opts.bind_address, opts.port)) {
    port = opts.port;
  }
  if (port < 0) {
    int err = errno;
    if (err == EADDRINUSE) {
      return Status::FailedPrecondition("cannot start the REST server on '" + where +
                                        "': address already in use")
          .WithHint("set rest.port (or rest.bind-port) with -D rest.port=<port>, or stop the "
                    "process using it");
    }
    std::string reason = err != 0 ? std::strerror(err) : "the address cannot be resolved or bound";
    return Status::FailedPrecondition("cannot start the REST server on '" + where + "': " + reason)
        .WithHint("check rest.bind-address (-D rest.bind-address=<address>) and rest.port "
                  "(-D rest.port=<port>)");
  }
  impl_->ctx.bound_port = port;
  impl_->started = true;
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->listen_returned = true;
  });
  // The socket already listens (connections queue); wait for the accept loop too.
  while (!impl_->server.is_running() && !impl_->listen_returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!impl_->server.is_running()) {
    impl_->thread.join();
    return Status::Internal("the REST server on '" + opts.bind_address + ":" +
                            std::to_string(port) + "' stopped right after starting");
  }
  LogInfo("REST server listening on http://{}:{}", opts.bind_address, port);
  return Status::OK();
}

int RestServer::port() const { return impl_->ctx.bound_port.load(); }

void RestServer::Stop() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->started) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace weir::runtime

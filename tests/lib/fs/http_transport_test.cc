// HttpTransport's retries against a real HTTP server on loopback that throttles, fails and
// refuses: which answers are retried, how many times, and that the rest are not.
#include "lib/fs/http_transport.h"

#include <catch2/catch.hpp>

#include <atomic>

#include "tests/lib/cli/test_support.h"

namespace weir {
namespace {

using testing::FreePort;
using testing::TestHttpServer;

RetryPolicy FastRetries(int attempts) {
  RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = std::chrono::milliseconds(2);
  p.max_backoff = std::chrono::milliseconds(8);
  return p;
}

TEST_CASE("http transport: throttling and 5xx are retried until an answer succeeds", "[fs]") {
  TestHttpServer server;
  std::atomic<int> calls{0};
  server.server().Get("/flaky", [&](const httplib::Request&, httplib::Response& res) {
    int n = ++calls;
    if (n == 1) {
      res.status = 503;
      res.set_content("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
                      "application/xml");
    } else if (n == 2) {
      res.status = 500;
    } else {
      res.set_content("ok", "text/plain");
    }
  });
  server.Start();
  HttpTransport http("test", FastRetries(5));
  HttpRequest r;
  r.url = "http://" + server.host_port() + "/flaky";
  HttpResponse resp = http.Perform(r);
  CHECK_FALSE(resp.transport_error);
  CHECK(resp.code == 200);
  CHECK(resp.body == "ok");
  CHECK(calls == 3);
  CHECK(http.requests() == 3);
}

TEST_CASE("http transport: retries stop after the policy's attempts and return the last answer", "[fs]") {
  TestHttpServer server;
  std::atomic<int> calls{0};
  server.server().Put("/down", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    CHECK(req.body == "payload");  // the body is sent again with every attempt
    res.status = 503;
  });
  server.server().Get("/missing", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 404;
  });
  server.Start();
  HttpTransport http("test", FastRetries(3));
  HttpRequest put;
  put.method = "PUT";
  put.url = "http://" + server.host_port() + "/down";
  put.body = "payload";
  HttpResponse resp = http.Perform(put);
  CHECK(resp.code == 503);
  CHECK(calls == 3);

  calls = 0;
  HttpRequest get;
  get.url = "http://" + server.host_port() + "/missing";
  CHECK(http.Perform(get).code == 404);
  CHECK(calls == 1);  // a client error is not retried
}

TEST_CASE("http transport: a refused connection is retried, then reported as a transport error", "[fs]") {
  HttpTransport http("test", FastRetries(3));
  HttpRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(FreePort()) + "/x";
  HttpResponse resp = http.Perform(r);
  CHECK(resp.transport_error);
  CHECK_FALSE(resp.error.empty());
  CHECK(http.requests() == 3);
}

TEST_CASE("http transport: a caller decides what else is retried", "[fs]") {
  TestHttpServer server;
  std::atomic<int> calls{0};
  server.server().Post("/complete", [&](const httplib::Request&, httplib::Response& res) {
    // S3 may answer a multipart completion with 200 and an error in the body.
    res.set_content(++calls == 1 ? "<Error><Code>InternalError</Code></Error>" : "<Done/>", "application/xml");
  });
  server.Start();
  HttpTransport http("test", FastRetries(4));
  HttpRequest r;
  r.method = "POST";
  r.url = "http://" + server.host_port() + "/complete";
  HttpResponse resp = http.Perform(r, [](const HttpResponse& x) {
    return HttpTransport::IsRetryable(x) || x.body.find("<Error>") != std::string::npos;
  });
  CHECK(resp.body == "<Done/>");
  CHECK(calls == 2);
}

TEST_CASE("http transport: URI encoding is AWS's", "[fs]") {
  CHECK(UriEncode("a/b c+d~e_f.g-h", true) == "a/b%20c%2Bd~e_f.g-h");
  CHECK(UriEncode("a/b", false) == "a%2Fb");
  CHECK(UriEncode("\xc3\xa9", true) == "%C3%A9");
}

}  // namespace
}  // namespace weir

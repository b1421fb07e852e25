#pragma once
// A Flink-shaped REST endpoint for the savepoint, stop, cancel -s and dispose tests, on a real
// HTTP server (TestHttpServer): it knows one running job (kSavepointJobId), records every
// request body, answers the triggers with a trigger id, and completes the operation after a
// configurable number of IN_PROGRESS polls, with a location or a failure cause.

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/lib/cli/test_support.h"

namespace weir::testing {

inline constexpr char kSavepointJobId[] = "cca7bc1061d61cf15238e92312c2fc20";
inline constexpr char kTriggerId[] = "5f3c8e0b9d1a4c2e8f7a6b5c4d3e2f10";
inline constexpr char kDisposalTriggerId[] = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
inline constexpr char kSavepointLocation[] =
    "file:/tmp/flink-savepoints/savepoint-cca7bc-bb1e257f0dab";

class FakeSavepointEndpoint {
 public:
  struct Request {
    std::string method;
    std::string path;
    nlohmann::json body;  // null when there was none
  };

  // How the next operation ends. Set before Start() or under no concurrent request.
  int in_progress_polls = 2;  // IN_PROGRESS answers before COMPLETED
  bool never_complete = false;
  std::string location = kSavepointLocation;
  std::optional<nlohmann::json> failure_cause;  // COMPLETED with this failure-cause
  // Refuse the trigger (POST savepoints/stop/disposal) with this HTTP status and errors body.
  int refuse_status = 0;
  std::string refuse_message;

  FakeSavepointEndpoint() {
    auto& s = http_.server();
    s.Post(R"(/v1/jobs/(\w+)/(savepoints|stop))",
           [this](const httplib::Request& req, httplib::Response& res) {
             Record(req);
             if (req.matches[1] != kSavepointJobId) return NotFound(req.matches[1], res);
             if (refuse_status != 0) return Errors(res, refuse_status, refuse_message);
             Answer(res, 202, {{"request-id", kTriggerId}});
           });
    s.Get(R"(/v1/jobs/(\w+)/savepoints/(\w+))",
          [this](const httplib::Request& req, httplib::Response& res) {
            Record(req);
            if (req.matches[1] != kSavepointJobId) return NotFound(req.matches[1], res);
            if (req.matches[2] != kTriggerId) {
              return Errors(res, 404, "There is no savepoint operation with triggerId=" +
                                          std::string(req.matches[2]) + " for job " +
                                          std::string(req.matches[1]) + ".");
            }
            Poll(res, /*savepoint=*/true);
          });
    s.Post("/v1/savepoint-disposal", [this](const httplib::Request& req, httplib::Response& res) {
      Record(req);
      if (refuse_status != 0) return Errors(res, refuse_status, refuse_message);
      Answer(res, 200, {{"request-id", kDisposalTriggerId}});
    });
    s.Get(R"(/v1/savepoint-disposal/(\w+))",
          [this](const httplib::Request& req, httplib::Response& res) {
            Record(req);
            if (req.matches[1] != kDisposalTriggerId) {
              return Errors(res, 404, "Operation not found under key: " +
                                          std::string(req.matches[1]));
            }
            Poll(res, /*savepoint=*/false);
          });
  }

  void Start() { http_.Start(); }
  std::string host_port() const { return http_.host_port(); }
  RestClientOptions options() const { return http_.options(); }

  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // The body of the first request to `path` (null if none).
  nlohmann::json BodyOf(const std::string& path) {
    for (const auto& r : requests()) {
      if (r.path == path) return r.body;
    }
    return nullptr;
  }
  int polls() {
    std::lock_guard<std::mutex> lock(mu_);
    return polls_;
  }

 private:
  static void Answer(httplib::Response& res, int status, const nlohmann::json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }
  static void Errors(httplib::Response& res, int status, const std::string& message) {
    Answer(res, status, {{"errors", {message}}});
  }
  static void NotFound(const std::string& job, httplib::Response& res) {
    Errors(res, 404, "Job " + job + " not found");
  }

  void Record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    nlohmann::json body = req.body.empty()
                              ? nlohmann::json()
                              : nlohmann::json::parse(req.body, nullptr, false);
    requests_.push_back({req.method, req.path, body});
  }

  void Poll(httplib::Response& res, bool savepoint) {
    int n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = ++polls_;
    }
    if (never_complete || n <= in_progress_polls) {
      return Answer(res, 200, {{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}});
    }
    nlohmann::json operation;
    if (failure_cause) {
      operation = {{"failure-cause", *failure_cause}};
    } else if (savepoint) {
      operation = {{"location", location}};
    } else {
      operation = {{"failure-cause", nullptr}};
    }
    Answer(res, 200, {{"status", {{"id", "COMPLETED"}}}, {"operation", operation}});
  }

  TestHttpServer http_;
  std::mutex mu_;
  std::vector<Request> requests_;
  int polls_ = 0;
};

}  // namespace weir::testing

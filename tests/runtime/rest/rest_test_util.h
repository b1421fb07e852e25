#pragma once
// Shared setup for the REST tests: sample jobs and jars, and a RestServer on a free
// port over a FakeDispatcher, with an httplib::Client pointed at it.

#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "lib/common/ids.h"
#include "runtime/rest/rest_server.h"
#include "tests/runtime/rest/fake_dispatcher.h"

namespace weir::runtime::testing {

inline JobId ParsedId(const std::string& hex) { return JobId::Parse(hex).value(); }

constexpr char kRunningJobId[] = "0123456789abcdef0123456789abcdef";
constexpr char kFailedJobId[] = "fedcba9876543210fedcba9876543210";
constexpr char kUnknownJobId[] = "00000000000000000000000000000001";

// A running job of three vertices: Source (p=1) -> Map (p=2, HASH) -> Sink (p=2, FORWARD).
inline JobInfo RunningJob() {
  JobInfo job;
  job.id = ParsedId(kRunningJobId);
  job.name = "number_sum";
  job.status = JobStatus::kRunning;
  job.start_time = 1700000000000;
  job.end_time = -1;
  job.timestamps = {{JobStatus::kInitializing, 1700000000000},
                    {JobStatus::kCreated, 1700000000010},
                    {JobStatus::kRunning, 1700000000100}};
  job.max_parallelism = 128;
  const char* names[] = {"Source: numbers", "Sum", "Sink: print"};
  int parallelism[] = {1, 2, 2};
  for (int i = 0; i < 3; ++i) {
    VertexInfo v;
    v.id = Id16::FromHash(names[i]);
    v.name = names[i];
    v.parallelism = parallelism[i];
    v.status = ExecutionState::kRunning;
    v.start_time = 1700000000100;
    v.tasks = {{ExecutionState::kRunning, parallelism[i]}};
    v.metrics.read_records = 10 * i;
    v.metrics.write_records = 10 * (i + 1);
    for (int s = 0; s < parallelism[i]; ++s) {
      SubtaskInfo sub;
      sub.subtask = s;
      sub.status = ExecutionState::kRunning;
      sub.start_time = v.start_time;
      sub.metrics.read_records = 5 * i;
      sub.metrics.write_records = 5 * (i + 1);
      sub.metrics.backpressured_ms = 100 * i;
      sub.metrics.idle_ms = 1000;
      sub.metrics.busy_ms = 200;
      v.subtasks.push_back(sub);
    }
    job.vertices.push_back(v);
  }
  job.edges = {{0, 1, "HASH"}, {1, 2, "FORWARD"}};
  return job;
}

// A failed job with one vertex whose subtask counts are left to the vertex state.
inline JobInfo FailedJob() {
  JobInfo job;
  job.id = ParsedId(kFailedJobId);
  job.name = "word_count";
  job.status = JobStatus::kFailed;
  job.start_time = 1600000000000;
  job.end_time = 1600000005000;
  job.timestamps = {{JobStatus::kRunning, 1600000000100}, {JobStatus::kFailed, 1600000005000}};
  VertexInfo v;
  v.id = Id16::FromHash("Tokenizer");
  v.name = "Tokenizer";
  v.parallelism = 3;
  v.status = ExecutionState::kFailed;
  v.start_time = 1600000000100;
  v.end_time = 1600000005000;
  job.vertices.push_back(v);
  return job;
}

inline ExceptionEntry SampleException(int i, bool task = true) {
  ExceptionEntry e;
  e.exception_name = "std::runtime_error";
  e.stacktrace = "std::runtime_error: boom " + std::to_string(i);
  e.timestamp = 1600000004000 + i;
  if (task) {
    e.task_name = "Tokenizer (" + std::to_string(i % 3 + 1) + "/3)";
    e.location = "localhost";
  }
  return e;
}

inline CheckpointStatsEntry SampleCheckpoint(int64_t id, const std::string& status) {
  CheckpointStatsEntry e;
  e.id = id;
  e.status = status;
  e.checkpoint_type = "CHECKPOINT";
  e.trigger_timestamp = 1700000010000 + id * 1000;
  e.num_subtasks = 5;
  if (status == "COMPLETED") {
    e.latest_ack_timestamp = e.trigger_timestamp + 40 + id;
    e.state_size = 1000 * id;
    e.checkpointed_size = 1000 * id;
    e.end_to_end_duration = 40 + id;
    e.num_acknowledged_subtasks = 5;
    e.external_path = "file:///tmp/chk/chk-" + std::to_string(id);
  } else if (status == "FAILED") {
    e.num_acknowledged_subtasks = 2;
    e.latest_ack_timestamp = e.trigger_timestamp + 5;
    e.end_to_end_duration = 600000;
    e.failure_timestamp = e.trigger_timestamp + 600000;
    e.failure_message = "Checkpoint expired before completing.";
  } else {
    e.num_acknowledged_subtasks = 1;
    e.end_to_end_duration = 12;
  }
  CheckpointStatsEntry::TaskStats sum;
  sum.vertex = Id16::FromHash("Sum");
  sum.num_subtasks = 2;
  sum.num_acknowledged_subtasks = status == "COMPLETED" ? 2 : 1;
  sum.latest_ack_timestamp = e.trigger_timestamp + 30;
  sum.state_size = e.state_size;
  e.tasks.push_back(sum);
  return e;
}

// Checkpoints 1..3 completed, 4 failed, 5 a savepoint, 6 in progress; restored from 1.
inline CheckpointingStats SampleCheckpointStats() {
  CheckpointingStats s;
  for (int64_t id = 1; id <= 3; ++id) {
    CheckpointStatsEntry e = SampleCheckpoint(id, "COMPLETED");
    s.completed_samples.push_back(
        {e.state_size, e.checkpointed_size, e.end_to_end_duration, e.persisted_data});
    s.history.insert(s.history.begin(), e);
  }
  s.history.insert(s.history.begin(), SampleCheckpoint(4, "FAILED"));
  CheckpointStatsEntry savepoint = SampleCheckpoint(5, "COMPLETED");
  savepoint.is_savepoint = true;
  savepoint.checkpoint_type = "SAVEPOINT";
  savepoint.savepoint_format = "CANONICAL";
  s.history.insert(s.history.begin(), savepoint);
  s.history.insert(s.history.begin(), SampleCheckpoint(6, "IN_PROGRESS"));
  s.restored = 1;
  s.total = 6;
  s.in_progress = 1;
  s.completed = 4;
  s.failed = 1;
  s.latest_completed = s.history[3];  // checkpoint 3
  s.latest_savepoint = savepoint;
  s.latest_failed = s.history[2];  // checkpoint 4
  s.latest_restored = RestoredCheckpointInfo{1, 1700000009000, false, "file:///tmp/chk/chk-1"};
  return s;
}

inline CheckpointConfigInfo SampleCheckpointConfig() {
  CheckpointConfigInfo c;
  c.mode = "exactly_once";
  c.interval_ms = 10000;
  c.timeout_ms = 600000;
  c.max_concurrent = 1;
  c.externalization_enabled = true;
  c.delete_on_cancellation = false;
  c.state_backend = "HashMapStateBackend";
  c.checkpoint_storage = "FileSystemCheckpointStorage";
  return c;
}

struct ServerFixture {
  explicit ServerFixture(RestServerOptions options = {}) {
    options.port = 0;
    dispatcher.AddJob(RunningJob());
    dispatcher.AddJob(FailedJob());
    JobExceptions ex;
    ex.root = SampleException(0);
    ex.history = {SampleException(0), SampleException(1, /*task=*/false), SampleException(2)};
    dispatcher.SetExceptions(ParsedId(kFailedJobId), ex);
    JobResult result;
    result.id = ParsedId(kFailedJobId);
    result.application_status = "FAILED";
    result.net_runtime_ms = 5000;
    result.failure = "std::runtime_error: boom 0";
    dispatcher.SetResult(ParsedId(kFailedJobId), result);
    dispatcher.SetCheckpoints(ParsedId(kRunningJobId), SampleCheckpointStats(),
                              SampleCheckpointConfig());
    ClusterOverview overview;
    overview.taskmanagers = 1;
    overview.slots_total = 4;
    overview.slots_available = 2;
    overview.jobs_running = 1;
    overview.jobs_failed = 1;
    dispatcher.set_overview(overview);
    server = std::make_unique<RestServer>(dispatcher, options);
    Status st = server->Start();
    if (!st.ok()) throw std::runtime_error("cannot start the REST server: " + st.ToString());
    client = std::make_unique<httplib::Client>("localhost", server->port());
    client->set_read_timeout(10, 0);
  }

  // Uploads a fake ELF "jar" and returns its id.
  std::string UploadJar(const std::string& name = "job.so") {
    httplib::MultipartFormDataItems items = {
        {"jarfile", std::string("\x7f" "ELF fake shared object"), name, "application/x-java-archive"}};
    auto res = client->Post("/v1/jars/upload", items);
    if (!res || res->status != 200) throw std::runtime_error("upload failed");
    std::string filename = nlohmann::json::parse(res->body)["filename"];
    return filename.substr(filename.find_last_of('/') + 1);
  }

  FakeDispatcher dispatcher;
  std::unique_ptr<RestServer> server;
  std::unique_ptr<httplib::Client> client;
};

inline nlohmann::json Body(const httplib::Result& res) { return nlohmann::json::parse(res->body); }

// One request's answer: its status, its body, and the body as JSON. Get and Post fail the
// test when there is no answer or its body is not JSON, naming the request.
struct Reply {
  int status = 0;
  nlohmann::json body;
  std::string text;
};

inline Reply ToReply(const httplib::Result& res, const std::string& what) {
  if (!res) FAIL("no response to " << what);
  Reply r;
  r.status = res->status;
  r.text = res->body;
  try {
    r.body = nlohmann::json::parse(res->body);
  } catch (const nlohmann::json::parse_error&) {
    FAIL(what << " answered a body that is not JSON: " << res->body);
  }
  return r;
}

inline Reply Post(ServerFixture& f, const std::string& url, const std::string& body) {
  return ToReply(f.client->Post(url.c_str(), body, "application/json"), "POST " + url + " " + body);
}

inline Reply Get(ServerFixture& f, const std::string& url) {
  return ToReply(f.client->Get(url.c_str()), "GET " + url);
}

}  // namespace weir::runtime::testing

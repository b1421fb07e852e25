// High availability on one machine: the settings, the storage directory's lock and
// files (runtime/cluster/high_availability.h), and jobs resumed by a second dispatcher
// from what a first one recorded.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "lib/common/logging.h"
#include "lib/config/config.h"
#include "lib/fs/file_system.h"
#include "runtime/cluster/high_availability.h"
#include "runtime/cluster/local_dispatcher.h"
#include "tests/runtime/cluster/test_support.h"

namespace fs = std::filesystem;
using weir::Configuration;
using weir::JobId;
using weir::runtime::CheckpointPointer;
using weir::runtime::FileSystemHaStore;
using weir::runtime::HighAvailabilitySettings;
using weir::runtime::JarRunRequest;
using weir::runtime::JobRecord;
using weir::runtime::JobRecordState;
using weir::runtime::JobStatus;
using weir::runtime::LocalDispatcher;
using weir::runtime::RecoveredJob;

using namespace weir::testing;

namespace {

Configuration Config(std::initializer_list<std::pair<const char*, std::string>> entries) {
  Configuration c;
  for (const auto& [k, v] : entries) c.Set(k, v);
  return c;
}

JobRecord SampleRecord() {
  JobRecord r;
  r.id = JobId::Generate();
  r.job_name = "Number Sum";
  r.entry_class = "NumberSum";
  r.program_args = {"--count", "10", "--output", "/tmp/out dir"};
  r.parallelism = 3;
  r.configuration = {{"execution.checkpointing.interval", "1s"}, {"pipeline.max-parallelism", "64"}};
  r.restore_path = "/savepoints/savepoint-abc";
  r.allow_non_restored_state = true;
  r.claim_mode = "CLAIM";
  r.submitted_ms = 1700000000000;
  return r;
}

std::vector<uint8_t> ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                            static_cast<std::streamsize>(bytes.size()));
}

std::vector<RecoveredJob> ListOrFail(FileSystemHaStore& store) {
  std::vector<weir::Status> errors;
  auto jobs = store.ListJobs(&errors);
  for (const auto& e : errors) FAIL_CHECK(e.ToString());
  return jobs;
}

// Polls `done` every 10 ms for up to `seconds`.
template <class F>
bool Eventually(F done, int seconds = 20) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Local files under "observed://local/<absolute path>": calls `before_delete` with the
// path of every file or directory before it is deleted, to see what else was true then.
class ObservedFileSystem final : public weir::FileSystem {
 public:
  using Observer = std::function<void(const std::string& path)>;
  explicit ObservedFileSystem(Observer before_delete) : before_delete_(std::move(before_delete)) {}

  std::string scheme() const override { return "observed"; }
  weir::Result<std::unique_ptr<weir::WritableFile>> Create(const std::string& path) override {
    return local_->Create(Local(path));
  }
  weir::Status PublishAtomically(const std::string& path, std::string_view contents) override {
    return local_->PublishAtomically(Local(path), contents);
  }
  weir::Result<weir::Bytes> ReadRange(const std::string& path, uint64_t offset, uint64_t length) override {
    return local_->ReadRange(Local(path), offset, length);
  }
  weir::Result<weir::FileInfo> Stat(const std::string& path) override {
    auto info = local_->Stat(Local(path));
    if (info.ok()) info->path = path;
    return info;
  }
  weir::Result<std::vector<weir::FileInfo>> List(const std::string& path) override {
    auto children = local_->List(Local(path));
    if (children.ok()) {
      for (auto& c : *children) c.path = kPrefix + c.path;
    }
    return children;
  }
  weir::Status MakeDirectories(const std::string& path) override { return local_->MakeDirectories(Local(path)); }
  weir::Status DeleteFiles(const std::vector<std::string>& paths) override {
    std::vector<std::string> local;
    for (const auto& p : paths) {
      before_delete_(p);
      local.push_back(Local(p));
    }
    return local_->DeleteFiles(local);
  }
  weir::Status DeleteRecursively(const std::string& path) override {
    before_delete_(path);
    return local_->DeleteRecursively(Local(path));
  }
  weir::Status DeleteDirectoryIfEmpty(const std::string& path) override {
    return local_->DeleteDirectoryIfEmpty(Local(path));
  }

  static constexpr const char* kPrefix = "observed://local";

 private:
  static std::string Local(const std::string& path) { return path.substr(std::string(kPrefix).size()); }

  Observer before_delete_;
  std::shared_ptr<weir::FileSystem> local_ = weir::LocalFileSystem();
};

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("high availability: settings", "[ha]") {
  struct Case {
    Configuration config;
    bool ok;
    std::string text;  // the storage directory, or a part of the error message
  };
  const Case cases[] = {
      {Config({}), true, ""},
      {Config({{"high-availability.type", "NONE"}, {"high-availability.storageDir", "/x"}}), true, ""},
      {Config({{"high-availability.type", "filesystem"}, {"high-availability.storageDir", "/var/lib/weir/ha/"}}),
       true, "/var/lib/weir/ha"},
      {Config({{"high-availability", "FILESYSTEM"}, {"high-availability.storageDir", "file:///srv/ha"}}), true,
       "/srv/ha"},
      {Config({{"high-availability.type", "filesystem"}}), false, "'high-availability.storageDir' is not set"},
      {Config({{"high-availability.type", "filesystem"}, {"high-availability.storageDir", "s3://bucket/ha"}}), false,
       "must be a local directory, not 's3://bucket/ha'"},
      {Config({{"high-availability.type", "filesystem"}, {"high-availability.storageDir", "hdfs://nn:8020/ha"}}),
       false, "must be a local directory"},
      {Config({{"high-availability.type", "filesystem"}, {"high-availability.storageDir", "relative/ha"}}), false,
       "must be an absolute path"},
      {Config({{"high-availability.type", "zookeeper"}}), false, "without ZooKeeper or Kubernetes"},
      {Config({{"high-availability.type", "etcd"}}), false, "expected one of NONE, filesystem"},
  };
  for (const auto& c : cases) {
    auto s = HighAvailabilitySettings::FromConfig(c.config);
    INFO((s.ok() ? std::string("ok") : s.status().ToString()));
    REQUIRE(s.ok() == c.ok);
    if (c.ok) {
      CHECK(s->enabled == !c.text.empty());
      CHECK(s->storage_dir == c.text);
    } else {
      CHECK(s.status().message().find(c.text) != std::string::npos);
    }
  }
}

TEST_CASE("high availability: a second runtime on the storage directory is refused, until the first ends",
          "[ha]") {
  TempDir tmp;
  const std::string dir = tmp / "ha";
  auto first = FileSystemHaStore::Open(dir);
  REQUIRE(first.ok());
  (*first)->NoteRestAddress("http://localhost:8081");
  auto second = FileSystemHaStore::Open(dir);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == weir::StatusCode::kFailedPrecondition);
  CHECK(second.status().message().find("'" + dir + "' is in use by another weir runtime (pid " +
                                       std::to_string(::getpid()) + ", rest http://localhost:8081)") !=
        std::string::npos);
  CHECK(second.status().hint().find("another high-availability.storageDir") != std::string::npos);
  first->reset();
  CHECK(FileSystemHaStore::Open(dir).ok());
}

TEST_CASE("high availability: records, checkpoint pointers and removal", "[ha]") {
  TempDir tmp;
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  JobRecord record = SampleRecord();
  std::ofstream(tmp / "job.so") << "the job's code";
  REQUIRE((*store)->AddJob(record, tmp / "job.so").ok());

  auto jobs = ListOrFail(**store);
  REQUIRE(jobs.size() == 1);
  const JobRecord& back = jobs[0].record;
  CHECK(back.id == record.id);
  CHECK(back.job_name == record.job_name);
  CHECK(back.entry_class == record.entry_class);
  CHECK(back.program_args == record.program_args);
  CHECK(back.parallelism == record.parallelism);
  CHECK(back.configuration == record.configuration);
  CHECK(back.restore_path == record.restore_path);
  CHECK(back.allow_non_restored_state);
  CHECK(back.claim_mode == "CLAIM");
  CHECK(back.submitted_ms == record.submitted_ms);
  CHECK(back.state == JobRecordState::kRunning);
  CHECK_FALSE(jobs[0].latest.has_value());
  std::ifstream copy(jobs[0].job_file);
  std::string code((std::istreambuf_iterator<char>(copy)), std::istreambuf_iterator<char>());
  CHECK(code == "the job's code");

  REQUIRE((*store)->PublishCheckpoint(record.id, 7, "/chk/" + record.id.ToHex() + "/chk-7").ok());
  REQUIRE((*store)->PublishCheckpoint(record.id, 8, "s3://bucket/chk/" + record.id.ToHex() + "/chk-8").ok());
  REQUIRE((*store)->SetState(record.id, JobRecordState::kCancelling).ok());
  jobs = ListOrFail(**store);
  REQUIRE(jobs.size() == 1);
  REQUIRE(jobs[0].latest.has_value());
  CHECK(jobs[0].latest->checkpoint_id == 8);
  CHECK(jobs[0].latest->path == "s3://bucket/chk/" + record.id.ToHex() + "/chk-8");
  CHECK(jobs[0].record.state == JobRecordState::kCancelling);
  // No temporary files are left beside the records.
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path() / "ha" / "jobs" / record.id.ToHex())) {
    ++files;
    CHECK(e.path().filename().string().find("inprogress") == std::string::npos);
  }
  CHECK(files == 3);

  JobId unknown = JobId::Generate();
  CHECK((*store)->PublishCheckpoint(unknown, 1, "/x").IsNotFound());
  CHECK((*store)->SetState(unknown, JobRecordState::kStopped).IsNotFound());

  REQUIRE((*store)->RemoveJob(record.id).ok());
  CHECK(ListOrFail(**store).empty());
  CHECK((*store)->RemoveJob(record.id).ok());
  CHECK_FALSE(fs::exists(tmp.path() / "ha" / "jobs" / record.id.ToHex()));
}

TEST_CASE("high availability: what a crash can leave behind is ignored or finished", "[ha]") {
  TempDir tmp;
  const fs::path jobs = tmp.path() / "ha" / "jobs";
  fs::create_directories(jobs / (".removed-" + JobId::Generate().ToHex()));  // an interrupted removal
  fs::create_directories(jobs / JobId::Generate().ToHex());                  // an AddJob without its record
  std::ofstream(jobs / JobId::Generate().ToHex() / "job.so");
  auto store = FileSystemHaStore::Open((tmp.path() / "ha").string());
  REQUIRE(store.ok());
  CHECK(ListOrFail(**store).empty());
  int removed_left = 0;
  for (const auto& e : fs::directory_iterator(jobs)) removed_left += e.path().filename().string()[0] == '.';
  CHECK(removed_left == 0);
  // A job file that cannot be read records nothing.
  auto added = (*store)->AddJob(SampleRecord(), tmp / "missing.so");
  CHECK(added.code() == weir::StatusCode::kIOError);
  CHECK(added.message().find("missing.so") != std::string::npos);
  CHECK(ListOrFail(**store).empty());
}

TEST_CASE("high availability: damaged records are reported naming the file", "[ha]") {
  const JobRecord record = SampleRecord();
  const std::vector<uint8_t> good = weir::runtime::EncodeJobRecord(record);
  REQUIRE(weir::runtime::DecodeJobRecord(good, "record").ok());
  struct Case {
    const char* what;
    std::function<void(std::vector<uint8_t>&)> damage;
    const char* message;
  };
  const Case cases[] = {
      {"bad magic", [](auto& b) { b[0] = 'X'; }, "'record'"},
      {"newer version", [](auto& b) { b[8] = 9; }, "'record'"},
      {"checksum mismatch", [](auto& b) { b[30] ^= 0x40; }, "'record'"},
      {"truncated", [](auto& b) { b.resize(b.size() - 7); }, "'record'"},
      {"empty", [](auto& b) { b.clear(); }, "'record'"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    std::vector<uint8_t> bytes = good;
    c.damage(bytes);
    auto decoded = weir::runtime::DecodeJobRecord(bytes, "record");
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.status().code() == weir::StatusCode::kCorruption);
    CHECK(decoded.status().message().find(c.message) != std::string::npos);
  }
  auto pointer = weir::runtime::EncodeCheckpointPointer(CheckpointPointer{5, "/chk/x/chk-5"});
  REQUIRE(weir::runtime::DecodeCheckpointPointer(pointer, "checkpoint").ok());
  pointer[pointer.size() - 1] ^= 1;
  CHECK(weir::runtime::DecodeCheckpointPointer(pointer, "checkpoint").status().code() == weir::StatusCode::kCorruption);
  CHECK(weir::runtime::DecodeCheckpointPointer(good, "checkpoint").status().code() == weir::StatusCode::kCorruption);  // a record

  // In a storage directory: the damaged job is reported and left alone; the others list.
  TempDir tmp;
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  std::ofstream(tmp / "job.so") << "code";
  JobRecord other = SampleRecord();
  REQUIRE((*store)->AddJob(record, tmp / "job.so").ok());
  REQUIRE((*store)->AddJob(other, tmp / "job.so").ok());
  const fs::path damaged = tmp.path() / "ha" / "jobs" / record.id.ToHex() / "record";
  auto bytes = ReadBytes(damaged);
  bytes[bytes.size() / 2] ^= 0xff;
  WriteBytes(damaged, bytes);
  std::vector<weir::Status> errors;
  auto jobs = (*store)->ListJobs(&errors);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].record.id == other.id);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message().find(damaged.string()) != std::string::npos);
  CHECK(fs::exists(damaged));
}

TEST_CASE("high availability: a job whose checkpoints would stay in memory is refused", "[ha][integration]") {
  TempDir tmp;
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  LocalDispatcher dispatcher(Configuration(), tmp / "uploads");
  dispatcher.EnableHighAvailability(std::move(*store));
  JarRunRequest req;
  req.program_args = {"--count", "10", "--sink", "discard"};
  req.flink_configuration = {{"execution.checkpointing.interval", "1s"},
                             {"execution.checkpointing.storage", "jobmanager"}};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().code() == weir::StatusCode::kFailedPrecondition);
  CHECK(id.status().message().find("high-availability.type: filesystem") != std::string::npos);
  CHECK(dispatcher.ListJobs().empty());
}

TEST_CASE("high availability: a second runtime resumes the job with its id from its latest checkpoint",
          "[ha][integration]") {
  TempDir tmp;
  const std::string ha_dir = tmp / "ha";
  const int64_t count = 20000;
  JobId id;
  {
    auto store = FileSystemHaStore::Open(ha_dir);
    REQUIRE(store.ok());
    std::shared_ptr<FileSystemHaStore> shared = std::move(*store);
    LocalDispatcher first(Configuration(), tmp / "uploads-1");
    first.EnableHighAvailability(shared);
    JarRunRequest req;
    req.program_args = {"--count", std::to_string(count), "--rate", "4000", "--output", tmp / "out"};
    req.parallelism = 2;
    // Retained on cancellation: the first runtime's end below must leave its checkpoints as
    // a crash would (checkpoints go to <storageDir>/checkpoints, set by the dispatcher).
    req.flink_configuration = {{"execution.checkpointing.interval", "50ms"},
                               {"execution.checkpointing.externalized-checkpoint-retention",
                                "RETAIN_ON_CANCELLATION"}};
    auto submitted = first.SubmitJobFile(kNumberSum, req);
    REQUIRE(submitted.ok());
    id = *submitted;
    REQUIRE(Eventually([&] {
      std::vector<weir::Status> errors;
      auto jobs = shared->ListJobs(&errors);
      return jobs.size() == 1 && jobs[0].latest && jobs[0].latest->checkpoint_id >= 3;
    }));
    first.DetachHighAvailability();  // the process "dies": the record stays as it is
  }
  auto jobs_left = [&] {
    auto store = FileSystemHaStore::Open(ha_dir);
    REQUIRE(store.ok());
    return ListOrFail(**store);
  };
  auto left = jobs_left();
  REQUIRE(left.size() == 1);
  CHECK(left[0].record.id == id);
  CHECK(left[0].record.configuration.at("execution.checkpointing.dir") == ha_dir + "/checkpoints");
  REQUIRE(left[0].latest.has_value());
  const bool pointer_intact = fs::exists(fs::path(left[0].latest->path) / "_metadata");

  auto store = FileSystemHaStore::Open(ha_dir);
  REQUIRE(store.ok());
  std::shared_ptr<FileSystemHaStore> shared = std::move(*store);
  LocalDispatcher second(Configuration(), tmp / "uploads-2");
  second.EnableHighAvailability(shared);
  std::vector<JobId> resumed = second.ResumeRecordedJobs();
  REQUIRE(resumed == std::vector<JobId>{id});
  auto info = second.GetJob(id);
  REQUIRE(info.ok());
  CHECK(info->name == "Number Sum");
  auto stats = second.GetCheckpointStats(id);
  REQUIRE(stats.ok());
  REQUIRE(stats->latest_restored.has_value());
  // The recorded checkpoint, unless it is gone: the first runtime's end raced its
  // writing, or checkpoints the first runtime completed after it stopped recording them
  // subsumed it. Then the newest complete one is restored instead (older or newer).
  if (pointer_intact) {
    CHECK(stats->latest_restored->id == left[0].latest->checkpoint_id);
  } else {
    CHECK(stats->latest_restored->id != left[0].latest->checkpoint_id);
  }
  REQUIRE(*second.WaitForJob(id) == JobStatus::kFinished);
  int hidden = 0;
  CHECK(LineDifference(CommittedLines(tmp.path() / "out", &hidden), ExpectedNumberSum(count)) == "");
  CHECK(hidden == 0);
  std::vector<weir::Status> errors;
  CHECK(shared->ListJobs(&errors).empty());  // a finished job is forgotten
}

TEST_CASE("high availability: jobs being cancelled or stopped are not resumed", "[ha][integration]") {
  TempDir tmp;
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  std::shared_ptr<FileSystemHaStore> shared = std::move(*store);
  std::ofstream(tmp / "job.so") << "never loaded";
  JobRecord cancelling = SampleRecord();
  JobRecord stopped = SampleRecord();
  REQUIRE(shared->AddJob(cancelling, tmp / "job.so").ok());
  REQUIRE(shared->AddJob(stopped, tmp / "job.so").ok());
  REQUIRE(shared->SetState(cancelling.id, JobRecordState::kCancelling).ok());
  REQUIRE(shared->SetState(stopped.id, JobRecordState::kStopped).ok());
  LocalDispatcher dispatcher(Configuration(), tmp / "uploads");
  dispatcher.EnableHighAvailability(shared);
  CHECK(dispatcher.ResumeRecordedJobs().empty());
  CHECK(dispatcher.ListJobs().empty());
  CHECK(ListOrFail(*shared).empty());
}

TEST_CASE("high availability: a cancel is recorded before the job ends, and an ended job is forgotten",
          "[ha][integration]") {
  TempDir tmp;
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  std::shared_ptr<FileSystemHaStore> shared = std::move(*store);
  LocalDispatcher dispatcher(Configuration(), tmp / "uploads");
  dispatcher.EnableHighAvailability(shared);
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "1000", "--sink", "discard"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  REQUIRE(ListOrFail(*shared).size() == 1);
  CHECK(ListOrFail(*shared)[0].record.state == JobRecordState::kRunning);
  REQUIRE(dispatcher.CancelJob(*id).ok());
  CHECK(*dispatcher.WaitForJob(*id) == JobStatus::kCanceled);
  CHECK(ListOrFail(*shared).empty());
}

// Flink's order: a job's end is recorded (its job result) before its checkpoints are
// cleaned up. A runtime killed in between must leave either the checkpoints or a record
// that the job ended: with neither, an operator restores an older savepoint and the
// output the job committed since is written twice.
TEST_CASE("high availability: a job's end is recorded before the retention policy discards its checkpoints",
          "[ha][integration]") {
  TempDir tmp;
  const fs::path log = tmp / "runtime.log";
  REQUIRE(weir::SetLogFile(log));
  weir::SetLogLevel(weir::LogLevel::kInfo);
  auto store = FileSystemHaStore::Open(tmp / "ha");
  REQUIRE(store.ok());
  std::shared_ptr<FileSystemHaStore> shared = std::move(*store);

  // What was true when each _metadata was deleted.
  struct Deletion {
    std::string path;
    size_t recorded_jobs;
    std::string log;
  };
  std::mutex mu;
  std::vector<Deletion> deletions;
  weir::RegisterFileSystem("observed", [&](const weir::Uri&, const Configuration&) {
    return weir::Result<std::shared_ptr<weir::FileSystem>>(
        std::make_shared<ObservedFileSystem>([&](const std::string& path) {
          if (weir::BaseName(path) != "_metadata") return;
          std::vector<weir::Status> errors;
          Deletion d{path, shared->ListJobs(&errors).size(), ReadText(log)};
          std::lock_guard lock(mu);
          deletions.push_back(std::move(d));
        }));
  });

  LocalDispatcher dispatcher(Configuration(), tmp / "uploads");
  dispatcher.EnableHighAvailability(shared);
  JarRunRequest req;
  req.program_args = {"--count", "600", "--rate", "3000", "--output", tmp / "out"};
  req.flink_configuration = {{"execution.checkpointing.interval", "20ms"},
                             {"execution.checkpointing.dir", std::string(ObservedFileSystem::kPrefix) + (tmp / "cp")}};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  CHECK(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  auto stats = dispatcher.GetCheckpointStats(*id);
  REQUIRE(weir::SetLogFile("/dev/stderr"));
  weir::SetLogLevel(weir::LogLevel::kWarn);

  REQUIRE(stats.ok());
  REQUIRE(stats->latest_completed.has_value());
  const std::string last = stats->latest_completed->external_path + "/_metadata";
  std::lock_guard lock(mu);
  auto it = std::find_if(deletions.begin(), deletions.end(), [&](const Deletion& d) { return d.path == last; });
  REQUIRE(it != deletions.end());
  CHECK(it->recorded_jobs == 0);  // the next runtime would not resume it
  CHECK(it->log.find("job=" + id->ToHex() + " ended (FINISHED)") != std::string::npos);
  CHECK(!fs::exists(tmp.path() / "cp" / id->ToHex()));  // and then its checkpoints went
  CHECK(LineDifference(CommittedLines(tmp / "out"), ExpectedNumberSum(600)) == "");
}

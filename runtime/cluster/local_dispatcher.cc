#include "runtime/cluster/local_dispatcher.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/format/snapshot_io.h"
#include "lib/fs/file_system.h"
#include "lib/common/time_util.h"
#include "lib/config/options.h"

namespace fs = std::filesystem;

namespace weir::runtime {

namespace {
Status JobNotFound(const JobId& id) {
  return Status::NotFound("job '" + id.ToHex() + "' not found")
      .WithHint("run 'weir list -a' to see the jobs this runtime knows");
}

std::string SafeFileName(const std::string& name) {
  std::string base = fs::path(name).filename().string();
  std::string out;
  for (char c : base) out.push_back((std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_');
  return out.empty() ? "job.so" : out;
}
}  // namespace

LocalDispatcher::LocalDispatcher(Configuration config, std::string upload_dir)
    : config_(std::move(config)), upload_dir_(std::move(upload_dir)) {
  std::error_code ec;
  fs::create_directories(upload_dir_, ec);
  auto capacity = config_.GetInt(options::kJobStoreMaxCapacity);
  if (capacity.ok() && *capacity) job_store_capacity_ = std::max<int64_t>(0, **capacity);
  auto expiration = config_.GetInt(options::kJobStoreExpirationTime);
  if (expiration.ok() && *expiration) job_store_expiration_ms_ = std::max<int64_t>(0, **expiration) * 1000;
}

LocalDispatcher::~LocalDispatcher() { Shutdown(); }

void LocalDispatcher::Shutdown() {
  std::vector<std::shared_ptr<JobMaster>> jobs;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, job] : jobs_) jobs.push_back(job);
  }
  for (auto& job : jobs) {
    (void)job->Cancel();
    job->WaitForTermination();
  }
}

// jobstore.expiration-time and jobstore.max-capacity (Flink's keys): ended jobs
// older than the expiration go, then the oldest ended ones beyond the capacity.
void LocalDispatcher::PruneJobStoreLocked() {
  const int64_t now = NowMillis();
  std::vector<std::pair<int64_t, JobId>> ended;  // (end time, id)
  for (const auto& [id, job] : jobs_) {
    auto end = job->EndTime();
    if (end) ended.emplace_back(*end, id);
  }
  std::sort(ended.begin(), ended.end());
  size_t keep_from = 0;
  while (keep_from < ended.size() && now - ended[keep_from].first > job_store_expiration_ms_) ++keep_from;
  size_t left = ended.size() - keep_from;
  if (static_cast<int64_t>(left) > job_store_capacity_) keep_from += left - static_cast<size_t>(job_store_capacity_);
  for (size_t i = 0; i < keep_from; ++i) {
    LogInfo("job={} removed from the job store (jobstore.expiration-time / jobstore.max-capacity)",
            ended[i].second.ToHex());
    jobs_.erase(ended[i].second);
  }
}

std::shared_ptr<JobMaster> LocalDispatcher::Find(const JobId& id) {
  std::lock_guard lock(mu_);
  PruneJobStoreLocked();
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

Result<JobId> LocalDispatcher::SubmitJobFile(const std::string& path, const JarRunRequest& request,
                                             const std::function<void(const JobId&)>& before_start) {
  WEIR_ASSIGN_OR_RETURN(auto library, JobLibrary::Open(path));
  return Submit(std::move(library), request, before_start);
}

Result<JobId> LocalDispatcher::Submit(std::shared_ptr<JobLibrary> library, const JarRunRequest& request,
                                      const std::function<void(const JobId&)>& before_start,
                                      const RecoveredJob* resumed) {
  Configuration config = config_;
  for (const auto& [k, v] : request.flink_configuration) config.Set(k, v);
  std::map<std::string, std::string> recorded_config = request.flink_configuration;
  int parallelism = 1;
  if (request.parallelism) {
    parallelism = *request.parallelism;
  } else {
    WEIR_ASSIGN_OR_RETURN(auto p, config.GetInt(options::kParallelismDefault));
    if (p) parallelism = static_cast<int>(*p);
  }
  if (parallelism < 1) {
    return Status::InvalidArgument("the parallelism must be a positive number: " + std::to_string(parallelism));
  }
  WEIR_ASSIGN_OR_RETURN(StreamGraph graph, library->BuildGraph(request.entry_class, request.program_args, parallelism));
  for (const auto& [k, v] : graph.config) config.Set(k, v);
  std::vector<std::string> warnings;
  WEIR_RETURN_IF_ERROR(config.Validate(&warnings));
  for (const auto& w : warnings) LogWarn("{}", w);
  WEIR_ASSIGN_OR_RETURN(auto max_p, config.GetInt(options::kPipelineMaxParallelism));
  if (max_p && graph.max_parallelism == 0) graph.max_parallelism = static_cast<int>(*max_p);
  if (ha_) WEIR_RETURN_IF_ERROR(PrepareForHighAvailability(config, recorded_config));

  RestoreSettings restore;
  restore.path = request.savepoint_path;
  restore.allow_non_restored_state = request.allow_non_restored_state;
  if (!request.claim_mode.empty()) restore.claim_mode = ToUpper(request.claim_mode);
  if (restore.path.empty()) {
    WEIR_ASSIGN_OR_RETURN(auto path, config.GetString(options::kStateRecoveryPath));
    if (path) restore.path = *path;
    WEIR_ASSIGN_OR_RETURN(auto ignore, config.GetBool(options::kStateRecoveryIgnoreUnclaimed));
    if (ignore) restore.allow_non_restored_state = restore.allow_non_restored_state || *ignore;
  }
  if (request.claim_mode.empty()) {
    WEIR_ASSIGN_OR_RETURN(auto claim, config.GetEnum(options::kStateRecoveryClaimMode));
    if (claim) restore.claim_mode = *claim;
  }
  restore.path = StripFileScheme(restore.path);

  JobId id = request.job_id ? *request.job_id : JobId::Generate();
  {
    // The id is reserved before the job is created, so two submissions with one id
    // cannot both start.
    std::lock_guard lock(mu_);
    PruneJobStoreLocked();
    if (jobs_.count(id) || reserved_ids_.count(id)) {
      return Status::AlreadyExists("job '" + id.ToHex() + "' already exists")
          .WithHint("submit without a fixed job id, or with one that is not in 'weir list -a'");
    }
    reserved_ids_.insert(id);
  }
  const std::string job_name = graph.job_name;
  auto master = JobMaster::Create(id, std::move(graph), parallelism, config, restore, library);
  // High availability: the job is recorded (durably) before it starts, so that no
  // checkpoint of it completes unrecorded.
  Status recorded = Status::OK();
  if (master.ok() && ha_ && !resumed) {
    JobRecord record;
    record.id = id;
    record.job_name = job_name;
    record.entry_class = request.entry_class;
    record.program_args = request.program_args;
    record.parallelism = request.parallelism;
    record.configuration = recorded_config;
    record.restore_path = request.savepoint_path;
    record.allow_non_restored_state = request.allow_non_restored_state;
    record.claim_mode = request.claim_mode;
    record.submitted_ms = NowMillis();
    recorded = ha_->store->AddJob(record, library->path());
  }
  if (master.ok() && recorded.ok() && ha_) AttachDurabilityHooks(**master);
  std::shared_ptr<JobMaster> job;
  {
    std::lock_guard lock(mu_);
    reserved_ids_.erase(id);
    if (!master.ok()) return master.status();
    if (!recorded.ok()) return recorded;
    job = std::shared_ptr<JobMaster>(std::move(*master));
    jobs_[id] = job;
  }
  LogInfo("job={} submitted from '{}'", id.ToHex(), library->path());
  if (before_start) before_start(id);
  job->Start();
  return id;
}

Result<JobStatus> LocalDispatcher::WaitForJob(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->WaitForTermination();
}

ClusterOverview LocalDispatcher::Overview() {
  ClusterOverview o;
  o.taskmanagers = 1;
  int running_tasks = 0;
  for (const auto& info : ListJobs()) {
    switch (info.status) {
      case JobStatus::kFinished: ++o.jobs_finished; break;
      case JobStatus::kCanceled: ++o.jobs_cancelled; break;
      case JobStatus::kFailed: ++o.jobs_failed; break;
      default:
        ++o.jobs_running;
        for (const auto& v : info.vertices) running_tasks += v.parallelism;
    }
  }
  // Each subtask runs on a thread of its own: report the machine's cores as slots.
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  o.slots_total = std::max(cores, running_tasks);
  o.slots_available = std::max(0, o.slots_total - running_tasks);
  return o;
}

std::vector<JobInfo> LocalDispatcher::ListJobs() {
  std::vector<std::shared_ptr<JobMaster>> jobs;
  {
    std::lock_guard lock(mu_);
    PruneJobStoreLocked();
    for (auto& [id, job] : jobs_) jobs.push_back(job);
  }
  std::vector<JobInfo> out;
  for (auto& job : jobs) out.push_back(job->Info());
  return out;
}

Result<JobInfo> LocalDispatcher::GetJob(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->Info();
}

Status LocalDispatcher::CancelJob(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  // High availability: a job whose cancel was asked for is not resumed, even when the
  // runtime dies before the job has ended.
  if (std::shared_ptr<HighAvailability> ha = ha_; ha && ha->attached && !job->EndTime()) {
    Status marked = ha->store->SetState(id, JobRecordState::kCancelling);
    if (!marked.ok() && !marked.IsNotFound()) {
      LogWarn("job={} cancelling, but the high-availability record could not say so (a runtime restarted "
              "before the job ended would resume it): {}", id.ToHex(), marked.message());
    }
  }
  return job->Cancel();
}

Result<JobExceptions> LocalDispatcher::GetExceptions(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->Exceptions();
}

Result<std::optional<JobResult>> LocalDispatcher::GetJobResult(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->GetResult();
}

Result<CheckpointingStats> LocalDispatcher::GetCheckpointStats(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  if (!job->checkpointing_enabled()) {
    return Status::NotFound("Checkpointing is not enabled for job '" + id.ToHex() + "'");
  }
  return job->CheckpointStats();
}

Result<CheckpointConfigInfo> LocalDispatcher::GetCheckpointConfig(const JobId& id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  if (!job->checkpointing_enabled()) {
    return Status::NotFound("Checkpointing is not enabled for job '" + id.ToHex() + "'");
  }
  return job->CheckpointConfig();
}

Result<CheckpointStatsEntry> LocalDispatcher::GetCheckpointDetails(const JobId& id, int64_t checkpoint_id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  if (!job->checkpointing_enabled()) {
    return Status::NotFound("Checkpointing is not enabled for job '" + id.ToHex() + "'");
  }
  return job->CheckpointDetails(checkpoint_id);
}

namespace {
Result<SnapshotFormat> ParseFormat(const std::string& format) {
  std::string f = ToUpper(format);
  if (f.empty() || f == "CANONICAL") return SnapshotFormat::kCanonical;
  if (f == "NATIVE") return SnapshotFormat::kNative;
  return Status::InvalidArgument("unknown savepoint format '" + format + "': use CANONICAL or NATIVE");
}
}  // namespace

// The hashmap backend's native format is its canonical one: both types produce the
// same backend-independent files; the metadata records which was asked for.
Result<TriggerId> LocalDispatcher::TriggerSavepoint(const JobId& id, const std::string& target_dir, bool cancel_job,
                                                    const std::string& format, std::optional<TriggerId> trigger_id) {
  WEIR_ASSIGN_OR_RETURN(SnapshotFormat f, ParseFormat(format));
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->TriggerSavepoint(target_dir, cancel_job, f, trigger_id);
}

Result<TriggerId> LocalDispatcher::StopWithSavepoint(const JobId& id, const std::string& target_dir, bool drain,
                                                     const std::string& format, std::optional<TriggerId> trigger_id) {
  WEIR_ASSIGN_OR_RETURN(SnapshotFormat f, ParseFormat(format));
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->StopWithSavepoint(target_dir, drain, f, trigger_id);
}

Result<AsyncOperationStatus> LocalDispatcher::GetSavepointStatus(const JobId& id, const TriggerId& trigger) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  return job->SavepointStatus(trigger);
}

Result<TriggerId> LocalDispatcher::TriggerCheckpoint(const JobId& id, CheckpointTriggerType type,
                                                     std::optional<TriggerId> trigger_id) {
  auto job = Find(id);
  if (!job) return JobNotFound(id);
  const TriggerId trigger = trigger_id ? *trigger_id : TriggerId::Generate();
  const auto key = std::make_pair(id, trigger);
  {
    std::lock_guard lock(mu_);
    if (checkpoint_triggers_.count(key)) return trigger;  // a retried request
    checkpoint_triggers_[key] = AsyncOperationStatus{};
  }
  // Runs on the coordinator's thread, which ends before this dispatcher does (Shutdown).
  Status st = job->RequestCheckpoint(type, [this, key](Result<int64_t> result) {
    std::lock_guard lock(mu_);
    AsyncOperationStatus& op = checkpoint_triggers_[key];
    op.completed = true;
    if (result.ok()) {
      op.checkpoint_id = *result;
    } else {
      op.failure = result.status().message();
      op.failure_class = "weir::CheckpointException";
    }
  });
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    checkpoint_triggers_.erase(key);
    return st;
  }
  return trigger;
}

Result<AsyncOperationStatus> LocalDispatcher::GetCheckpointTriggerStatus(const JobId& id, const TriggerId& trigger) {
  if (!Find(id)) return JobNotFound(id);
  std::lock_guard lock(mu_);
  auto it = checkpoint_triggers_.find({id, trigger});
  if (it == checkpoint_triggers_.end()) {
    return Status::NotFound("There is no checkpoint operation with triggerId=" + trigger.ToHex() + " for job " +
                            id.ToHex() + ".");
  }
  return it->second;
}

Result<TriggerId> LocalDispatcher::DisposeSavepoint(const std::string& path, std::optional<TriggerId> trigger_id) {
  TriggerId trigger = trigger_id ? *trigger_id : TriggerId::Generate();
  {
    std::lock_guard lock(mu_);
    if (disposals_.count(trigger)) return trigger;
  }
  std::string p = StripFileScheme(path);
  AsyncOperationStatus status;
  status.completed = true;
  // A savepoint directory or its _metadata, on any file system (s3://, hdfs://, local).
  std::string dir = BaseName(p) == kMetadataFileName ? ParentPath(p) : p;
  std::string meta = JoinPath(dir, kMetadataFileName);
  auto file = ReadSnapshotFile(meta);
  Status valid = file.ok() ? UnframeFile(*file, kMetaMagic, kMetadataVersion, meta).status()
                 : file.status().IsNotFound() ? Status::NotFound("'" + p + "' is not a savepoint: it has no _metadata")
                                              : file.status();
  if (!valid.ok()) {
    status.failure = valid.message();
    status.failure_class = "weir::SavepointDisposalException";
  } else {
    Status removed = DiscardSnapshotDirectory(dir);
    if (!removed.ok()) {
      status.failure = removed.message();
      status.failure_class = "weir::SavepointDisposalException";
    }
  }
  std::lock_guard lock(mu_);
  disposals_[trigger] = status;
  return trigger;
}

Result<AsyncOperationStatus> LocalDispatcher::GetDisposalStatus(const TriggerId& trigger) {
  std::lock_guard lock(mu_);
  auto it = disposals_.find(trigger);
  if (it == disposals_.end()) return Status::NotFound("disposal trigger '" + trigger.ToHex() + "' not found");
  return it->second;
}

Result<JarInfo> LocalDispatcher::UploadJar(const std::string& original_name, const std::string& bytes) {
  JarInfo info;
  info.name = SafeFileName(original_name);
  info.id = Id16::Generate().ToHex() + "_" + info.name;
  info.path = (fs::path(upload_dir_) / info.id).string();
  info.uploaded = NowMillis();
  {
    std::ofstream out(info.path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      return Status::IOError("cannot store the upload in '" + info.path + "'")
          .WithHint("check that web.upload.dir is writable and has space");
    }
  }
  auto library = JobLibrary::Open(info.path);
  if (!library.ok()) {
    std::error_code ec;
    fs::remove(info.path, ec);
    Status s = library.status();
    return s.IsNotFound() ? Status::InvalidArgument(s.message()) : s;
  }
  info.entries = (*library)->entries();
  std::lock_guard lock(mu_);
  jars_[info.id] = info;
  return info;
}

std::vector<JarInfo> LocalDispatcher::ListJars() {
  std::lock_guard lock(mu_);
  std::vector<JarInfo> out;
  for (const auto& [id, jar] : jars_) out.push_back(jar);
  return out;
}

Status LocalDispatcher::DeleteJar(const std::string& jar_id) {
  std::string path;
  {
    std::lock_guard lock(mu_);
    auto it = jars_.find(jar_id);
    if (it == jars_.end()) return Status::NotFound("jar '" + jar_id + "' not found");
    path = it->second.path;
    jars_.erase(it);
  }
  // Running jobs keep the code loaded; the file itself can go.
  std::error_code ec;
  fs::remove(path, ec);
  return Status::OK();
}

Result<JobId> LocalDispatcher::RunJar(const std::string& jar_id, const JarRunRequest& request) {
  std::string path;
  {
    std::lock_guard lock(mu_);
    auto it = jars_.find(jar_id);
    if (it == jars_.end()) {
      return Status::NotFound("jar '" + jar_id + "' not found").WithHint("upload it first with POST /jars/upload");
    }
    path = it->second.path;
  }
  WEIR_ASSIGN_OR_RETURN(auto library, JobLibrary::Open(path));
  return Submit(std::move(library), request);
}

// --- high availability ---

void LocalDispatcher::EnableHighAvailability(std::shared_ptr<FileSystemHaStore> store) {
  auto ha = std::make_shared<HighAvailability>();
  ha->store = std::move(store);
  ha_ = std::move(ha);
}

void LocalDispatcher::DetachHighAvailability() {
  if (ha_) ha_->attached = false;
}

Status LocalDispatcher::PrepareForHighAvailability(Configuration& config,
                                                   std::map<std::string, std::string>& recorded) {
  WEIR_ASSIGN_OR_RETURN(CheckpointSettings settings, CheckpointSettings::FromConfig(config));
  if (!settings.enabled || !settings.dir.empty()) return Status::OK();
  // Checkpoints must outlive the process: without a directory of its own, the job's go
  // under the storage directory (Flink keeps in-memory checkpoints' metadata there too).
  const std::string dir = ha_->store->DefaultCheckpointDir();
  Configuration with_dir = config;
  with_dir.Set(options::kCheckpointingDir.key, dir);
  WEIR_ASSIGN_OR_RETURN(CheckpointSettings again, CheckpointSettings::FromConfig(with_dir));
  if (again.dir.empty()) {
    return Status::FailedPrecondition(
               "the job keeps its checkpoints in memory (execution.checkpointing.storage or state.backend.type "
               "'jobmanager'), which a restarted runtime cannot restore from, and this runtime runs with "
               "high-availability.type: filesystem")
        .WithHint("leave execution.checkpointing.storage unset (checkpoints then go to '" + dir +
                  "'), or set execution.checkpointing.dir");
  }
  config = std::move(with_dir);
  recorded[options::kCheckpointingDir.key] = dir;
  return Status::OK();
}

void LocalDispatcher::AttachDurabilityHooks(JobMaster& job) {
  std::shared_ptr<HighAvailability> ha = ha_;
  const JobId id = job.id();
  job.SetDurabilityHooks(
      [ha, id](const CompletedSnapshot& snapshot, CheckpointKind kind) -> Status {
        if (!ha->attached) return Status::OK();
        // A completed stop-with-savepoint ends the job for good: never resumed.
        if (kind == CheckpointKind::kSyncSavepoint) return ha->store->SetState(id, JobRecordState::kStopped);
        if (snapshot.external_path.empty()) return Status::OK();
        return ha->store->PublishCheckpoint(id, snapshot.id, snapshot.external_path);
      },
      [ha, id](JobStatus status) {
        if (!ha->attached) return;
        Status removed = ha->store->RemoveJob(id);
        if (!removed.ok()) {
          LogError("job={} ended ({}) but its high-availability record could not be removed, so the next runtime "
                   "would resume it: {}; remove '{}/jobs/{}' by hand",
                   id.ToHex(), JobStatusName(status), removed.message(), ha->store->storage_dir(), id.ToHex());
        }
      });
}

namespace {

// Whether `dir` holds a checkpoint whose _metadata is intact (the state files are
// checked when the job loads it).
bool HasValidMetadata(const std::string& dir) {
  const std::string meta = JoinPath(dir, kMetadataFileName);
  auto file = ReadSnapshotFile(meta);
  return file.ok() && UnframeFile(*file, kMetaMagic, kMetadataVersion, meta).ok();
}

}  // namespace

std::vector<JobId> LocalDispatcher::ResumeRecordedJobs() {
  std::vector<JobId> resumed_ids;
  std::shared_ptr<HighAvailability> ha = ha_;
  if (!ha) return resumed_ids;
  const std::string& storage = ha->store->storage_dir();
  std::vector<Status> errors;
  std::vector<RecoveredJob> jobs = ha->store->ListJobs(&errors);
  for (const Status& e : errors) {
    LogError("high availability: a recorded job cannot be read, so it is not resumed: {}; hint: remove its "
             "directory under '{}/jobs' to forget it",
             e.message(), storage);
  }
  for (const RecoveredJob& job : jobs) {
    const JobRecord& r = job.record;
    const std::string id = r.id.ToHex();
    if (r.state != JobRecordState::kRunning) {
      LogInfo("job={} ('{}') {} when the previous runtime ended: not resumed", id, r.job_name,
              r.state == JobRecordState::kCancelling ? "was being cancelled" : "had been stopped with a savepoint");
      Status removed = ha->store->RemoveJob(r.id);
      if (!removed.ok()) LogWarn("job={}: {}", id, removed.message());
      continue;
    }
    JarRunRequest request;
    request.entry_class = r.entry_class;
    request.program_args = r.program_args;
    request.parallelism = r.parallelism;
    request.job_id = r.id;
    request.flink_configuration = r.configuration;
    request.allow_non_restored_state = r.allow_non_restored_state;
    std::string from = "as it was first submitted";
    if (job.latest) {
      // The job's own checkpoint, claimed: it goes once a newer one is retained.
      request.savepoint_path = job.latest->path;
      request.claim_mode = "CLAIM";
      from = "from checkpoint " + std::to_string(job.latest->checkpoint_id) + " ('" + job.latest->path + "')";
      if (!HasValidMetadata(job.latest->path)) {
        // The checkpoint went away while its successor was being recorded (a failover
        // raced the pointer): the newest complete checkpoint of the job is as good.
        std::string note;
        auto newest = ResolveSnapshotPath(ParentPath(job.latest->path), &note);
        if (!newest.ok()) {
          LogError("job={} ('{}') cannot be resumed: its latest checkpoint '{}' is gone and its checkpoint "
                   "directory holds no other complete one ({}); hint: restore it by hand with 'weir run -s', then "
                   "remove '{}/jobs/{}'",
                   id, r.job_name, job.latest->path, newest.status().message(), storage, id);
          continue;
        }
        LogWarn("job={}: its latest recorded checkpoint '{}' is gone; {}", id, job.latest->path, note);
        request.savepoint_path = *newest;
        from = "from '" + *newest + "'";
      }
    } else {
      request.savepoint_path = r.restore_path;
      request.claim_mode = r.claim_mode;
      if (!r.restore_path.empty()) from = "from '" + r.restore_path + "', as it was first submitted";
    }
    auto library = JobLibrary::Open(job.job_file);
    Result<JobId> submitted = library.ok() ? Submit(*library, request, nullptr, &job) : library.status();
    if (!submitted.ok()) {
      LogError("job={} ('{}') cannot be resumed {}: {}; hint: fix the cause and restart the runtime, or remove "
               "'{}/jobs/{}' to forget the job",
               id, r.job_name, from, submitted.status().message(), storage, id);
      continue;
    }
    LogInfo("job={} ('{}') resumed {} (high availability)", id, r.job_name, from);
    resumed_ids.push_back(r.id);
  }
  return resumed_ids;
}

}  // namespace weir::runtime

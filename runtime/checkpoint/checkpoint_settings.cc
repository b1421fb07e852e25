#include "runtime/checkpoint/checkpoint_settings.h"

#include "lib/common/string_util.h"
#include "lib/config/options.h"
#include "lib/fs/file_system.h"

namespace weir::runtime {

Result<CheckpointSettings> CheckpointSettings::FromConfig(const Configuration& config) {
  CheckpointSettings s;
  WEIR_ASSIGN_OR_RETURN(auto interval, config.GetDuration(options::kCheckpointingInterval));
  if (interval && interval->count() > 0) {
    s.enabled = true;
    s.interval = *interval;
    if (s.interval.count() < 10) {
      return Status::InvalidArgument("invalid value for '" + options::kCheckpointingInterval.key +
                                     "': the minimum checkpoint interval is 10 ms");
    }
  }
  WEIR_ASSIGN_OR_RETURN(auto mode, config.GetEnum(options::kCheckpointingMode));
  s.exactly_once = !mode || *mode == "EXACTLY_ONCE";
  WEIR_ASSIGN_OR_RETURN(auto timeout, config.GetDuration(options::kCheckpointingTimeout));
  if (timeout) s.timeout = *timeout;
  if (s.timeout.count() < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingTimeout.key + "': must be positive");
  }
  WEIR_ASSIGN_OR_RETURN(auto min_pause, config.GetDuration(options::kCheckpointingMinPause));
  if (min_pause) s.min_pause = *min_pause;
  WEIR_ASSIGN_OR_RETURN(auto max_concurrent, config.GetInt(options::kCheckpointingMaxConcurrent));
  if (max_concurrent) s.max_concurrent = static_cast<int>(*max_concurrent);
  if (s.max_concurrent < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingMaxConcurrent.key +
                                   "': must be at least 1");
  }
  WEIR_ASSIGN_OR_RETURN(auto tolerable, config.GetInt(options::kCheckpointingTolerableFailures));
  if (tolerable) s.tolerable_failures = static_cast<int>(*tolerable);
  WEIR_ASSIGN_OR_RETURN(auto retained, config.GetInt(options::kCheckpointingNumRetained));
  if (retained) s.num_retained = static_cast<int>(*retained);
  if (s.num_retained < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingNumRetained.key +
                                   "': must be at least 1");
  }
  WEIR_ASSIGN_OR_RETURN(auto history, config.GetInt(options::kCheckpointsHistory));
  if (history) s.history_size = static_cast<int>(*history);
  WEIR_ASSIGN_OR_RETURN(auto retention, config.GetEnum(options::kCheckpointingExternalizedRetention));
  if (retention) s.retention = *retention;
  WEIR_ASSIGN_OR_RETURN(auto dir, config.GetString(options::kCheckpointingDir));
  if (dir) s.dir = StripFileScheme(*dir);
  WEIR_ASSIGN_OR_RETURN(auto storage, config.GetEnum(options::kCheckpointingStorage));
  if (storage && *storage == "jobmanager") s.dir.clear();
  if (storage && *storage == "filesystem" && s.dir.empty()) {
    return Status::InvalidArgument("'" + options::kCheckpointingStorage.key + "' is filesystem but '" +
                                   options::kCheckpointingDir.key + "' is not set")
        .WithHint("set -D execution.checkpointing.dir=/path/to/checkpoints");
  }
  // A URI of a file system this weir has (s3://, hdfs://) with the settings it needs.
  if (!s.dir.empty()) WEIR_RETURN_IF_ERROR(OpenFileSystem(s.dir, config).status());
  WEIR_ASSIGN_OR_RETURN(auto savepoint_dir, config.GetString(options::kCheckpointingSavepointDir));
  if (savepoint_dir) s.savepoint_dir = StripFileScheme(*savepoint_dir);
  if (!s.savepoint_dir.empty()) WEIR_RETURN_IF_ERROR(OpenFileSystem(s.savepoint_dir, config).status());
  WEIR_ASSIGN_OR_RETURN(auto unaligned, config.GetBool(options::kCheckpointingUnaligned));
  s.unaligned = unaligned.value_or(false);
  // Flink's rules: unaligned checkpoints persist in-flight data to stay exactly-once,
  // and one at a time (their captures of in-flight data cannot overlap).
  if (s.unaligned && !s.exactly_once) {
    return Status::InvalidArgument("unaligned checkpoints ('" + options::kCheckpointingUnaligned.key +
                                   "') are only supported with the EXACTLY_ONCE checkpointing mode")
        .WithHint("remove -D " + options::kCheckpointingMode.key + "=AT_LEAST_ONCE, or turn unaligned checkpoints off");
  }
  if (s.unaligned && s.max_concurrent > 1) {
    return Status::InvalidArgument("unaligned checkpoints ('" + options::kCheckpointingUnaligned.key +
                                   "') are only supported with '" + options::kCheckpointingMaxConcurrent.key +
                                   "' 1, not " + std::to_string(s.max_concurrent))
        .WithHint("set -D " + options::kCheckpointingMaxConcurrent.key + "=1");
  }
  WEIR_ASSIGN_OR_RETURN(auto aligned_timeout, config.GetDuration(options::kCheckpointingAlignedTimeout));
  if (aligned_timeout) s.aligned_timeout = *aligned_timeout;
  if (s.aligned_timeout.count() < 0) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingAlignedTimeout.key +
                                   "': must not be negative");
  }
  WEIR_ASSIGN_OR_RETURN(auto after_finish, config.GetBool(options::kCheckpointingAfterTasksFinish));
  if (after_finish && !*after_finish) {
    return Status::InvalidArgument("'" + options::kCheckpointingAfterTasksFinish.key +
                                   "' cannot be false in weir: without checkpoints after tasks finish, a "
                                   "bounded job's two-phase-commit sinks would never commit their last output")
        .WithHint("remove the key (true is the default)");
  }
  WEIR_ASSIGN_OR_RETURN(auto backend, config.GetEnum(options::kStateBackendType));
  std::string type = backend ? ToLower(*backend) : "hashmap";
  // Flink's legacy backend names: state on the heap, with checkpoints in the
  // JobManager's memory (jobmanager, memory, MemoryStateBackend) or in the checkpoint
  // directory (filesystem, FsStateBackend, which needs one); RocksDBStateBackend.
  if (type == "jobmanager" || type == "memory" || type == "memorystatebackend") {
    s.dir.clear();
    type = "hashmap";
  } else if (type == "filesystem" || type == "fsstatebackend") {
    if (s.dir.empty()) {
      return Status::InvalidArgument("state backend '" + *backend + "' writes checkpoints to '" +
                                     options::kCheckpointingDir.key + "', which is not set")
          .WithHint("set -D execution.checkpointing.dir=/path/to/checkpoints, or use state.backend.type: hashmap");
    }
    type = "hashmap";
  } else if (type == "rocksdbstatebackend") {
    type = "rocksdb";
  }
  s.state_backend = type;
  WEIR_ASSIGN_OR_RETURN(auto incremental, config.GetBool(options::kCheckpointingIncremental));
  s.incremental = incremental.value_or(false);
  WEIR_ASSIGN_OR_RETURN(auto threshold, config.GetMemorySize(options::kCheckpointingInlineThreshold));
  if (threshold) {
    if (*threshold < 0 || *threshold > (1 << 20)) {
      return Status::InvalidArgument("invalid value for '" + options::kCheckpointingInlineThreshold.key +
                                     "': at most 1mb");
    }
    s.inline_threshold = static_cast<uint64_t>(*threshold);
  }
  return s;
}

CheckpointConfigInfo CheckpointSettings::ToInfo() const {
  CheckpointConfigInfo i;
  i.mode = exactly_once ? "exactly_once" : "at_least_once";
  i.interval_ms = enabled ? interval.count() : INT64_MAX;
  i.timeout_ms = timeout.count();
  i.min_pause_ms = min_pause.count();
  i.max_concurrent = max_concurrent;
  i.externalization_enabled = retention != "NO_EXTERNALIZED_CHECKPOINTS";
  i.delete_on_cancellation = retention != "RETAIN_ON_CANCELLATION";
  i.state_backend = state_backend == "rocksdb" ? "EmbeddedRocksDBStateBackend" : "HashMapStateBackend";
  i.checkpoint_storage = dir.empty() ? "JobManagerCheckpointStorage" : "FileSystemCheckpointStorage";
  i.unaligned_checkpoints = unaligned;
  i.tolerable_failed_checkpoints = tolerable_failures;
  i.aligned_checkpoint_timeout_ms = aligned_timeout.count();
  i.checkpoints_after_tasks_finish = true;
  return i;
}

}  // namespace weir::runtime

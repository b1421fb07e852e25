#pragma once
// High availability on one machine (`high-availability.type: filesystem`, weir's own):
// the runtime keeps what it needs to bring its jobs back after it dies in a local
// storage directory, and a restarted runtime on that directory resumes them.
//
//   <storageDir>/lock                     flock()ed by the one runtime using the directory
//                                         (released when that process dies); holds its pid
//   <storageDir>/jobs/<job-id>/job.so     the job's shared object, copied at submission
//   <storageDir>/jobs/<job-id>/record     the submission: entry point, arguments,
//                                         parallelism, configuration, restore settings, and
//                                         whether the job is being cancelled or was stopped
//   <storageDir>/jobs/<job-id>/checkpoint the job's latest completed checkpoint: id and path
//
// `record` and `checkpoint` are framed like checkpoint files (magic, version, length,
// payload, CRC-32C; lib/format/checkpoint_format.h) and replaced atomically (temporary
// file, fsync, rename, fsync of the directory). The pointer is written before the tasks
// hear that the checkpoint completed (before a two-phase-commit sink commits), so a
// resumed job never restores from a checkpoint older than what was committed. A job that
// ended (finished, cancelled, failed, stopped) loses its directory before its terminal
// status shows. The format is described in high_availability_format.md.
//
// The storage directory is local only (a lock must die with its holder; checkpoints
// themselves may still go to s3:// or hdfs://).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/ids.h"
#include "lib/common/status.h"
#include "lib/config/config.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

// high-availability.type and high-availability.storageDir.
struct HighAvailabilitySettings {
  bool enabled = false;
  std::string storage_dir;  // a local directory (file: URIs are accepted and stripped)

  // InvalidArgument naming the key: a type other than NONE / filesystem, filesystem
  // without a storage directory, or a storage directory that is not local.
  static Result<HighAvailabilitySettings> FromConfig(const Configuration& config);
};

// Where a recorded job stands.
enum class JobRecordState : uint8_t {
  kRunning = 0,     // resumed by the next runtime
  kCancelling = 1,  // a cancel was asked for: not resumed
  kStopped = 2,     // its stop-with-savepoint completed: not resumed
};

// What a runtime needs to submit a job again, as it was submitted.
struct JobRecord {
  JobId id;
  std::string job_name;  // for log lines
  std::string entry_class;
  std::vector<std::string> program_args;
  std::optional<int> parallelism;
  std::map<std::string, std::string> configuration;  // the submission's own settings
  std::string restore_path;                           // -s of the submission ("" = none)
  bool allow_non_restored_state = false;
  std::string claim_mode;
  int64_t submitted_ms = 0;
  JobRecordState state = JobRecordState::kRunning;
};

// The latest completed checkpoint of a job.
struct CheckpointPointer {
  int64_t checkpoint_id = 0;
  std::string path;  // the checkpoint directory (local path or URI)
};

// A job found in the storage directory.
struct RecoveredJob {
  JobRecord record;
  std::string job_file;                      // <storageDir>/jobs/<id>/job.so
  std::optional<CheckpointPointer> latest;   // none before the first checkpoint
};

// The storage directory of one runtime. Thread-safe. The lock is held from Open until
// the object is destroyed (or the process ends).
class FileSystemHaStore {
 public:
  // Creates the directory when missing and takes its lock. FailedPrecondition naming
  // the directory and the holder's pid when another runtime holds it; IOError when the
  // directory cannot be created or written.
  static Result<std::unique_ptr<FileSystemHaStore>> Open(const std::string& storage_dir);
  ~FileSystemHaStore();

  const std::string& storage_dir() const { return dir_; }
  // Where jobs without a checkpoint directory of their own keep their checkpoints.
  std::string DefaultCheckpointDir() const;
  // Adds the runtime's REST address to the lock file, for the message a second runtime
  // prints. Best effort.
  void NoteRestAddress(const std::string& url);

  // Records a new job: copies `job_file` and writes the record, durably. IOError naming
  // the file on failure (nothing of the job is left behind then).
  Status AddJob(const JobRecord& record, const std::string& job_file);
  // Replaces the job's record state. NotFound when the job has no record.
  Status SetState(const JobId& id, JobRecordState state);
  // Makes `checkpoint_id` at `path` the job's latest completed checkpoint, durably.
  Status PublishCheckpoint(const JobId& id, int64_t checkpoint_id, const std::string& path);
  // Forgets a job that ended. Not an error when it has no record.
  Status RemoveJob(const JobId& id);

  // Every recorded job, oldest submission first. A job whose record cannot be read is
  // reported in `errors` (naming the file) and left in place.
  std::vector<RecoveredJob> ListJobs(std::vector<Status>* errors) const;

 private:
  FileSystemHaStore(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string JobDir(const JobId& id) const;
  Result<JobRecord> ReadRecord(const std::string& path) const;
  Status WriteRecord(const JobRecord& record);

  const std::string dir_;
  int lock_fd_ = -1;
  mutable std::mutex mu_;  // serializes record rewrites
};

// Encoding of the two files (exposed for the format tests).
std::vector<uint8_t> EncodeJobRecord(const JobRecord& record);
Result<JobRecord> DecodeJobRecord(const std::vector<uint8_t>& file, const std::string& what);
std::vector<uint8_t> EncodeCheckpointPointer(const CheckpointPointer& pointer);
Result<CheckpointPointer> DecodeCheckpointPointer(const std::vector<uint8_t>& file, const std::string& what);

}  // namespace weir::runtime

#pragma once
// CompletedSnapshot: a completed checkpoint or savepoint in memory, and its writing
// to and loading from a snapshot directory. Used by the runtime and by `weir inspect`.
//
// A directory is a local path, a file: URI, or any URI a registered file system serves
// (s3://bucket/prefix, hdfs://host:port/path; lib/fs/file_system.h).

#include <map>
#include <string>
#include <vector>

#include "lib/api/state_snapshot.h"
#include "lib/format/checkpoint_format.h"

namespace weir {

struct CompletedSnapshot {
  struct Operator {
    std::string uid;
    std::string name;
    int parallelism = 1;
    int max_parallelism = 128;
    std::vector<OperatorSubtaskSnapshot> subtasks;  // index = subtask
  };
  JobId job_id;
  int64_t id = 0;
  int64_t timestamp = 0;
  SnapshotKind kind = SnapshotKind::kCheckpoint;
  SnapshotFormat format = SnapshotFormat::kCanonical;
  std::string external_path;  // the snapshot directory; empty when kept in memory only
  int64_t state_size = 0;     // bytes written
  std::map<std::string, Operator> operators;  // by uid
};

// Writes the state files and then `_metadata` (durably, atomically, last) into `dir`,
// which is created. Sets snapshot.external_path and state_size. IOError naming the
// path (Unavailable when a remote store cannot be reached). Requests on an object
// store: one PUT per state file (a multipart upload for large ones) and one for
// `_metadata`.
Status WriteSnapshot(const std::string& dir, CompletedSnapshot& snapshot);

// Loads a snapshot for restore. `path` is a snapshot directory or its `_metadata`
// file. Verifies the metadata and every state file (size and checksum). Errors name the
// file: NotFound (missing path, or a directory without `_metadata`), Corruption.
Result<CompletedSnapshot> LoadSnapshot(const std::string& path);

// Resolves what `weir run -s` accepts (a path or a file: URI) to a snapshot directory: a snapshot directory,
// its `_metadata`, or a job's checkpoint directory (<dir>/<job-id>, holding chk-<n>
// directories: the newest one with a `_metadata` is taken; `chosen` tells which).
Result<std::string> ResolveSnapshotPath(const std::string& path_or_uri, std::string* chosen_note);

// Deletes a snapshot directory (metadata first, so a half-deleted snapshot is never
// taken for a complete one; then the rest, batched on an object store). Deleting
// again after a partial failure finishes the job.
Status DiscardSnapshotDirectory(const std::string& dir);

// Reads a whole file of a snapshot (e.g. its `_metadata`) from the file system that
// holds it. NotFound naming the path when it does not exist.
Result<Bytes> ReadSnapshotFile(const std::string& path);

}  // namespace weir

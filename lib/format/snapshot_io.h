#pragma once
// CompletedSnapshot: a completed checkpoint or savepoint in memory, and its writing
// to and loading from a snapshot directory. Used by the runtime and by `weir inspect`.
//
// A directory is a local path, a file: URI, or any URI a registered file system serves
// (s3://bucket/prefix, hdfs://host:port/path; lib/fs/file_system.h).

#include <map>
#include <string>
#include <vector>

#include "lib/api/keyed_state_backend.h"
#include "lib/api/state_snapshot.h"
#include "lib/format/checkpoint_format.h"

namespace weir {

// Writes `_metadata` (durably, atomically) into `dir`, which is created: the tasks
// have written the state files already, so it is the last file of the snapshot. Sets
// snapshot.external_path. IOError naming the path (Unavailable when a remote store
// cannot be reached). One PUT on an object store.
Status WriteSnapshot(const std::string& dir, CompletedSnapshot& snapshot);

// Loads a snapshot's metadata for restore. `path` is a snapshot directory or its
// `_metadata` file. Checks the metadata, and that every state file it references exists
// with its size; with `verify_contents` also reads them and checks their checksums.
// Snapshots of metadata versions 1 and 2 are read whole and converted. Errors name the
// file: NotFound (missing path or file, or a directory without `_metadata`), Corruption.
Result<CompletedSnapshot> LoadSnapshot(const std::string& path, bool verify_contents = false);

// Writes `bytes` as one state stream of `out` (a file, or inline when small).
Result<StreamHandle> WriteStateStream(SnapshotOutput& out, StateScope scope, const Bytes& bytes);

// Writes operator state lists as one stream (OperatorSubtaskState::operator_state).
Result<StreamHandle> WriteOperatorState(SnapshotOutput& out, const OperatorStateSnapshot& state);

// The bytes of a state stream (inline, or its file), size and checksum checked.
// NotFound / Corruption naming the file.
Result<Bytes> ReadStateStream(const StreamHandle& handle);

// Checks that every file `snapshot` references exists with its size, and with
// `read_contents` that its checksum matches. The first problem, naming the file.
Status VerifySnapshotFiles(const CompletedSnapshot& snapshot, bool read_contents);

// Resolves what `weir run -s` accepts (a path or a file: URI) to a snapshot directory: a snapshot directory,
// its `_metadata`, or a job's checkpoint directory (<dir>/<job-id>, holding chk-<n>
// directories: the newest one with a `_metadata` is taken; `chosen` tells which).
Result<std::string> ResolveSnapshotPath(const std::string& path_or_uri, std::string* chosen_note);
// How many times a reader of a running job's checkpoint directory takes the newest
// checkpoint again when the one it chose was subsumed and deleted while it read it (with
// checkpoints every 100 ms on a slow store that happens more than once in a row).
inline constexpr int kNewestCheckpointAttempts = 10;

// Deletes a snapshot directory (metadata first, so a half-deleted snapshot is never
// taken for a complete one; then the rest, batched on an object store). Deleting
// again after a partial failure finishes the job.
Status DiscardSnapshotDirectory(const std::string& dir);

// Reads a whole file of a snapshot (e.g. its `_metadata`) from the file system that
// holds it. NotFound naming the path when it does not exist.
Result<Bytes> ReadSnapshotFile(const std::string& path);

}  // namespace weir

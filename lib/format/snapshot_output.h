#pragma once
// The SnapshotOutput (lib/api/keyed_state_backend.h) of a checkpoint's storage: state
// streams become files with random names in the snapshot's own directory (exclusive
// scope) or the job's shared directory, except exclusive streams no larger than the
// inline threshold, which stay in memory and go inline into _metadata. With no
// directory everything stays inline (in-memory checkpoint storage). A local upload is
// a hard link when it can be (a backend's files never change once written).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lib/api/keyed_state_backend.h"

namespace weir {

class CancellableSnapshotOutput : public SnapshotOutput {
 public:
  // Writing stops early from now on (Create and Upload return Aborted).
  virtual void Cancel() = 0;
};

// `exclusive_dir` empty: in memory. `shared_dir` empty: shared streams go into
// `exclusive_dir` too (savepoints are self-contained). `inline_threshold` 0: never inline.
std::shared_ptr<CancellableSnapshotOutput> MakeDirectoryOutput(std::string exclusive_dir, std::string shared_dir,
                                                              uint64_t inline_threshold);

// One writer's view of a SnapshotOutput (which the subtasks of a checkpoint share): it
// forwards everything and remembers the shared-scope files this writer completed. A
// snapshot that is never acknowledged (its write failed, or its checkpoint was aborted
// and the write stopped) deletes them with DeleteWritten(): no checkpoint references
// them, and nothing else knows of them. (Exclusive files go with the checkpoint's
// directory.)
class SharedFileTracker final : public SnapshotOutput {
 public:
  explicit SharedFileTracker(std::shared_ptr<SnapshotOutput> out) : out_(std::move(out)) {}

  Result<std::unique_ptr<StateOutputStream>> Create(StateScope scope) override;
  Result<StreamHandle> Upload(const std::string& local_path, StateScope scope) override;
  bool cancelled() const override { return out_->cancelled(); }

  // The shared files written so far (not inline ones).
  std::vector<std::string> written() const;
  // Deletes them (batched per file system); the error names what is left.
  Status DeleteWritten();

 private:
  class Stream;
  void Record(const StreamHandle& handle);

  std::shared_ptr<SnapshotOutput> out_;
  mutable std::mutex mu_;
  std::vector<std::string> written_;
};

}  // namespace weir

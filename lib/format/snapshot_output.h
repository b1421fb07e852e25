#pragma once
// The SnapshotOutput (lib/api/keyed_state_backend.h) of a checkpoint's storage: state
// streams become files with random names in the snapshot's own directory (exclusive
// scope) or the job's shared directory, except exclusive streams no larger than the
// inline threshold, which stay in memory and go inline into _metadata. With no
// directory everything stays inline (in-memory checkpoint storage). A local upload is
// a hard link when it can be (a backend's files never change once written).

#include <cstdint>
#include <memory>
#include <string>

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

}  // namespace weir

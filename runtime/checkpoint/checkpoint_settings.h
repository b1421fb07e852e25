#pragma once
// CheckpointSettings: a job's checkpoint configuration, read from the
// execution.checkpointing.* keys (and their legacy state.* spellings) with Flink's
// names, defaults and rules.

#include <chrono>
#include <string>

#include "lib/common/status.h"
#include "lib/config/config.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

struct CheckpointSettings {
  bool enabled = false;  // an interval is set
  std::chrono::milliseconds interval{0};
  bool exactly_once = true;
  std::chrono::milliseconds timeout{600000};
  std::chrono::milliseconds min_pause{0};
  int max_concurrent = 1;
  int tolerable_failures = 0;
  int num_retained = 1;
  int history_size = 10;  // checkpoints kept in the statistics' history
  std::string retention = "NO_EXTERNALIZED_CHECKPOINTS";
  std::string dir;  // <execution.checkpointing.dir>; empty: in memory (jobmanager storage)
  std::string savepoint_dir;
  bool unaligned = false;
  std::chrono::milliseconds aligned_timeout{0};
  std::string state_backend = "hashmap";  // normalized: "hashmap" or "rocksdb"
  bool incremental = false;                // execution.checkpointing.incremental
  uint64_t inline_threshold = 20 * 1024;    // execution.checkpointing.data-inline-threshold

  // InvalidArgument naming the key for bad values or combinations.
  static Result<CheckpointSettings> FromConfig(const Configuration& config);
  CheckpointConfigInfo ToInfo() const;
};

}  // namespace weir::runtime

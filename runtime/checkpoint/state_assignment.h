#pragma once
// How the state of a snapshot is given to the subtasks of a (possibly rescaled) job.

#include "lib/format/snapshot_io.h"

namespace weir::runtime {

// The state subtask `subtask` of an operator with `parallelism` subtasks and
// `max_parallelism` key groups gets from `op`: keyed state by key group, split list
// state evenly (each subtask keeps its own list when the parallelism is unchanged),
// union list state whole, broadcast state from subtask 0.
RestoredState AssignState(const CompletedSnapshot::Operator& op, int parallelism, int max_parallelism, int subtask);

}  // namespace weir::runtime

#pragma once
// How the state of a snapshot is given to the subtasks of a (possibly rescaled) job.

#include <vector>

#include "lib/api/channel_io.h"
#include "lib/format/snapshot_io.h"

namespace weir::runtime {

// Whether every subtask of `op` had finished (FLIP-147) when the snapshot was taken.
bool IsFullyFinished(const CompletedSnapshot::Operator& op);

// The operator state lists of every subtask of `op` (empty for finished ones), read
// from their streams. NotFound / Corruption naming the file.
Result<std::vector<OperatorStateSnapshot>> ReadOperatorStates(const CompletedSnapshot::Operator& op);

// The state subtask `subtask` of an operator with `parallelism` subtasks and
// `max_parallelism` key groups gets from `op`: the keyed state handles that overlap
// its key groups (the task reads them), split list state evenly (each subtask keeps
// its own list when the parallelism is unchanged and no subtask had finished), union
// list state whole, broadcast state from old subtask `subtask mod old parallelism`.
// `operator_states` are ReadOperatorStates(op). Finished subtasks contribute nothing;
// a fully finished operator gives RestoredState::finished and no state.
RestoredState AssignState(const CompletedSnapshot::Operator& op, const std::vector<OperatorStateSnapshot>& operator_states,
                          int parallelism, int max_parallelism, int subtask);

// The in-flight data (channel state of an unaligned checkpoint) subtask `subtask` of a
// task at `parallelism` replays, from `op`, the head operator of the task, whose input
// edges have the strategies `inputs`: the old subtasks' streams of which InFlightShareOf
// gives it records on some input (the task picks them input by input). Sets
// r->channel_state.
void AssignChannelState(const CompletedSnapshot::Operator& op, const std::vector<ShipStrategy>& inputs,
                        int parallelism, int subtask, RestoredState* r);

}  // namespace weir::runtime

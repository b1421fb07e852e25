#include "runtime/checkpoint/state_assignment.h"

#include <algorithm>

#include "runtime/core/execution_plan.h"

namespace weir::runtime {

bool IsFullyFinished(const CompletedSnapshot::Operator& op) {
  if (op.subtasks.empty()) return false;
  for (const auto& s : op.subtasks) {
    if (!s.finished) return false;
  }
  return true;
}

Result<std::vector<OperatorStateSnapshot>> ReadOperatorStates(const CompletedSnapshot::Operator& op) {
  std::vector<OperatorStateSnapshot> out(op.subtasks.size());
  for (size_t s = 0; s < op.subtasks.size(); ++s) {
    const auto& handle = op.subtasks[s].operator_state;
    if (!handle) continue;
    WEIR_ASSIGN_OR_RETURN(Bytes bytes, ReadStateStream(*handle));
    std::string what = handle->is_inline() ? "of operator '" + op.uid + "'" : handle->path;
    WEIR_ASSIGN_OR_RETURN(out[s], DecodeOperatorState(bytes, what));
  }
  return out;
}

RestoredState AssignState(const CompletedSnapshot::Operator& op, const std::vector<OperatorStateSnapshot>& operator_states,
                          int parallelism, int max_parallelism, int subtask) {
  RestoredState r;
  r.restored = true;
  r.finished = IsFullyFinished(op);
  if (r.finished) return r;
  KeyGroupRange range = KeyGroupRangeForOperator(max_parallelism, parallelism, subtask);
  // Split lists are redistributed when the parallelism changed, or when some subtasks
  // finished (their lists are gone: FLIP-147 restores a partly finished operator as a
  // downscale).
  bool any_finished = false;
  for (const auto& snap : op.subtasks) any_finished = any_finished || snap.finished;
  const bool redistribute = parallelism != op.parallelism || any_finished;
  std::map<std::string, std::vector<Bytes>> split_all;
  for (size_t s = 0; s < op.subtasks.size(); ++s) {
    const auto& snap = op.subtasks[s];
    if (snap.finished) continue;
    for (const auto& handle : snap.keyed) {
      KeyGroupRange h = handle.range();
      // Overlapping key groups; a handle whose range is empty still names its states.
      if (h.size() == 0 || (h.start <= range.end && range.start <= h.end)) r.keyed_handles.push_back(handle);
    }
    if (s >= operator_states.size()) continue;
    for (const auto& list : operator_states[s].lists) {
      auto& mine = r.operator_lists[list.name];  // registers the name even when empty
      mine.mode = list.mode;
      switch (list.mode) {
        case OperatorStateMode::kUnion:
          mine.elements.insert(mine.elements.end(), list.elements.begin(), list.elements.end());
          break;
        case OperatorStateMode::kBroadcast:
          // Every subtask kept a full copy; new subtask i reads old subtask i mod p_old.
          if (static_cast<int>(s) == subtask % static_cast<int>(op.subtasks.size())) mine.elements = list.elements;
          break;
        case OperatorStateMode::kSplit:
          if (!redistribute) {
            if (static_cast<int>(s) == subtask) mine.elements = list.elements;
          } else {
            auto& all = split_all[list.name];
            all.insert(all.end(), list.elements.begin(), list.elements.end());
          }
          break;
      }
    }
  }
  // Redistributed split lists: contiguous, nearly equal parts in subtask order.
  for (auto& [name, all] : split_all) {
    size_t n = all.size();
    size_t begin = n * subtask / parallelism;
    size_t end = n * (subtask + 1) / parallelism;
    r.operator_lists[name].elements.assign(all.begin() + static_cast<long>(begin),
                                           all.begin() + static_cast<long>(end));
  }
  return r;
}

void AssignChannelState(const CompletedSnapshot::Operator& op, const std::vector<ShipStrategy>& inputs,
                        int parallelism, int subtask, RestoredState* r) {
  r->channel_state.clear();
  const int old_parallelism = static_cast<int>(op.subtasks.size());
  for (int s = 0; s < old_parallelism; ++s) {
    const auto& handle = op.subtasks[s].channel_state;
    if (!handle) continue;
    const bool mine = std::any_of(inputs.begin(), inputs.end(), [&](ShipStrategy input) {
      return InFlightShareOf(input, s, old_parallelism, subtask, parallelism) != InFlightShare::kNone;
    });
    if (mine) r->channel_state.push_back({*handle, s, old_parallelism});
  }
}

}  // namespace weir::runtime

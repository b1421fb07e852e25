#pragma once
// A checkpoint coordinator with its checkpoint storage, as the job master makes them,
// and operator state as a task acknowledges it.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/format/checkpoint_format.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/state/checkpoint_storage.h"

namespace weir::testing {

struct TestCoordinator {
  TestCoordinator(JobId job, runtime::CheckpointSettings settings, runtime::CheckpointHooks hooks,
                  std::vector<runtime::CheckpointTask> tasks, std::map<std::string, std::pair<int, int>> operators)
      : storage(job, settings.dir, settings.inline_threshold),
        coordinator(job, settings, std::move(hooks), std::move(tasks), std::move(operators), &storage) {}
  runtime::CheckpointStorage storage;
  runtime::CheckpointCoordinator coordinator;
};

// A subtask's acknowledgement holding operator state lists (inline).
inline OperatorSubtaskState WithLists(std::vector<OperatorStateSnapshot::List> lists, bool input_ended = false) {
  OperatorSubtaskState st;
  st.input_ended = input_ended;
  OperatorStateSnapshot snapshot;
  snapshot.lists = std::move(lists);
  for (const auto& l : snapshot.lists) {
    if (l.mode == OperatorStateMode::kUnion && !l.elements.empty()) st.union_list = l.name;
  }
  StreamHandle h;
  h.data = EncodeOperatorState(snapshot);
  h.size = h.data.size();
  h.crc = Crc32cOf(h.data);
  st.operator_state = std::move(h);
  return st;
}

// The operator state lists of an acknowledged or restored subtask.
inline std::vector<OperatorStateSnapshot::List> ListsOf(const OperatorSubtaskState& st) {
  if (!st.operator_state) return {};
  auto decoded = DecodeOperatorState(st.operator_state->data, "inline operator state");
  return decoded.ok() ? decoded->lists : std::vector<OperatorStateSnapshot::List>{};
}

}  // namespace weir::testing

#include "lib/api/state_snapshot.h"

namespace weir {

const char* StateKindName(StateKind kind) {
  switch (kind) {
    case StateKind::kValue: return "value";
    case StateKind::kList: return "list";
    case StateKind::kMap: return "map";
    case StateKind::kReducing: return "reducing";
    case StateKind::kAggregating: return "aggregating";
  }
  return "unknown";
}

std::optional<StateKind> ParseStateKind(const std::string& name) {
  for (StateKind k : {StateKind::kValue, StateKind::kList, StateKind::kMap, StateKind::kReducing,
                      StateKind::kAggregating}) {
    if (name == StateKindName(k)) return k;
  }
  return std::nullopt;
}

KeyGroupRange KeyedStateHandle::range() const {
  switch (type) {
    case Type::kKeyGroups: return key_groups.range;
    case Type::kNative: return native.range;
    case Type::kLegacy: return legacy.range;
  }
  return {};
}

std::vector<StateMeta> KeyedStateHandle::states() const {
  switch (type) {
    case Type::kKeyGroups: return key_groups.states;
    case Type::kNative: return native.states;
    case Type::kLegacy: {
      std::vector<StateMeta> out;
      for (const auto& t : legacy.tables) out.push_back({t.name, t.kind});
      return out;
    }
  }
  return {};
}

uint64_t KeyedStateHandle::StateSize() const {
  switch (type) {
    case Type::kKeyGroups: return key_groups.stream.size;
    case Type::kNative: {
      uint64_t n = 0;
      for (const auto& [name, h] : native.shared_files) n += h.size;
      for (const auto& [name, h] : native.private_files) n += h.size;
      return n;
    }
    case Type::kLegacy: {
      uint64_t n = 0;
      for (const auto& t : legacy.tables) {
        for (const auto& b : t.key_groups) n += b.size();
      }
      return n;
    }
  }
  return 0;
}

uint64_t KeyedStateHandle::CheckpointedSize() const {
  return type == Type::kNative ? native.checkpointed_size : StateSize();
}

uint64_t OperatorSubtaskState::StateSize() const {
  uint64_t n = (operator_state ? operator_state->size : 0) + (channel_state ? channel_state->size : 0);
  for (const auto& k : keyed) n += k.StateSize();
  return n;
}

uint64_t OperatorSubtaskState::CheckpointedSize() const {
  uint64_t n = (operator_state ? operator_state->size : 0) + (channel_state ? channel_state->size : 0);
  for (const auto& k : keyed) n += k.CheckpointedSize();
  return n;
}

}  // namespace weir

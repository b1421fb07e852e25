#include "lib/api/heap_state.h"

#include <unistd.h>

#include <stdexcept>
#include <string>

#include "lib/api/key_groups_writer.h"

namespace weir {

void ThrowKeyGroupOutOfRange(int key_group, const KeyGroupRange& range) {
  throw std::logic_error("a record's key falls into key group " + std::to_string(key_group) +
                         ", which this subtask does not own (its key groups are " +
                         std::to_string(range.start) + ".." + std::to_string(range.end) +
                         "): the key selector is not deterministic. KeyBy's function must return the same "
                         "key for a record every time it is called (no clocks, random numbers or mutable "
                         "state in it)");
}

void ThrowStateKindMismatch(const std::string& name, StateKind registered, StateKind requested) {
  throw std::logic_error("keyed state '" + name + "' is " + StateKindName(registered) + " state (registered or " +
                         "restored so), but the job asks for it as " + StateKindName(requested) +
                         " state, or with other types: give the new state another name");
}

size_t PrefetchStateBytes() {
  static const size_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const size_t l2_bytes = l2 > 0 ? static_cast<size_t>(l2) : size_t{1} << 20;
    return l2_bytes * 5 / 2;
  }();
  return bytes;
}

namespace heap_internal {

Result<std::vector<KeyedStateHandle>> HeapSnapshot::Write(SnapshotOutput& out) {
  LegacyKeyedTables legacy;
  legacy.range = range_;
  std::vector<StateMeta> states;
  std::vector<Table*> canonical;
  for (auto& t : tables_) {
    if (t.restored && t.restored->legacy) {
      LegacyKeyedTables::Table lt;
      lt.name = t.meta.name;
      lt.kind = t.meta.kind;
      lt.key_groups.resize(range_.size());
      for (const auto& [g, blob] : t.restored->key_groups) {
        if (range_.Contains(g)) lt.key_groups[g - range_.start] = blob;
      }
      legacy.tables.push_back(std::move(lt));
      continue;
    }
    states.push_back(t.meta);
    canonical.push_back(&t);
  }
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<StateOutputStream> stream, out.Create(StateScope::kExclusive));
  KeyGroupsWriter writer(range_, std::move(states), std::move(stream));
  std::vector<std::string_view> rows(canonical.size());
  for (int i = 0; i < range_.size(); ++i) {
    if (out.cancelled()) return Status::Aborted("the checkpoint was aborted");
    for (size_t s = 0; s < canonical.size(); ++s) {
      Table* t = canonical[s];
      rows[s] = {};
      if (t->pinned) {
        rows[s] = t->pinned->KeyGroupRows(i);
      } else {
        auto it = t->restored->key_groups.find(range_.start + i);
        if (it != t->restored->key_groups.end()) {
          rows[s] = {reinterpret_cast<const char*>(it->second.data()), it->second.size()};
        }
      }
    }
    WEIR_RETURN_IF_ERROR(writer.AddKeyGroup(rows));
    for (Table* t : canonical) {
      if (t->pinned) t->pinned->Release(i);
    }
  }
  std::vector<KeyedStateHandle> handles;
  WEIR_ASSIGN_OR_RETURN(KeyedStateHandle handle, writer.Finish());
  handles.push_back(std::move(handle));
  if (!legacy.tables.empty()) {
    KeyedStateHandle lh;
    lh.type = KeyedStateHandle::Type::kLegacy;
    lh.legacy = std::move(legacy);
    handles.push_back(std::move(lh));
  }
  return handles;
}

}  // namespace heap_internal

}  // namespace weir

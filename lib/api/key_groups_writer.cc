#include "lib/api/key_groups_writer.h"

#include "lib/api/keyed_state_rows.h"
#include "lib/common/hash.h"

namespace weir {

KeyGroupsWriter::KeyGroupsWriter(KeyGroupRange range, std::vector<StateMeta> states,
                                 std::unique_ptr<StateOutputStream> stream)
    : stream_(std::move(stream)) {
  handle_.type = KeyedStateHandle::Type::kKeyGroups;
  handle_.key_groups.range = range;
  handle_.key_groups.states = std::move(states);
}

Status KeyGroupsWriter::AddKeyGroup(const std::vector<std::string_view>& rows_per_state) {
  KeyGroupsHandle& kg = handle_.key_groups;
  if (rows_per_state.size() != kg.states.size()) {
    return Status::Internal("a key group section needs the rows of " + std::to_string(kg.states.size()) +
                            " states, got " + std::to_string(rows_per_state.size()));
  }
  if (static_cast<int>(kg.offsets.size()) >= kg.range.size()) {
    return Status::Internal("more key groups than the range " + std::to_string(kg.range.start) + ".." + std::to_string(kg.range.end) + " holds");
  }
  section_.clear();
  for (std::string_view rows : rows_per_state) {
    AppendVarint(&section_, rows.size());
    section_.append(rows);
  }
  kg.offsets.push_back(stream_->size());
  kg.lengths.push_back(section_.size());
  kg.crcs.push_back(Crc32c(section_.data(), section_.size()));
  return stream_->Append(section_);
}

Result<KeyedStateHandle> KeyGroupsWriter::Finish() {
  KeyGroupsHandle& kg = handle_.key_groups;
  if (static_cast<int>(kg.offsets.size()) != kg.range.size()) {
    return Status::Internal("a key-group snapshot of " + std::to_string(kg.range.start) + ".." + std::to_string(kg.range.end) + " got " +
                            std::to_string(kg.offsets.size()) + " key groups");
  }
  WEIR_ASSIGN_OR_RETURN(kg.stream, stream_->Close());
  return std::move(handle_);
}

}  // namespace weir

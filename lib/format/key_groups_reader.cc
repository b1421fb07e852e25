#include "lib/format/key_groups_reader.h"

#include <algorithm>

#include "lib/api/serialization.h"
#include "lib/common/hash.h"
#include "lib/fs/file_system.h"

namespace weir {

namespace {

Status MergeKind(RestoredKeyedState& state, StateKind kind, bool legacy, const std::string& name) {
  if (!state.key_groups.empty() && (state.kind != kind || state.legacy != legacy)) {
    return Status::Corruption("restored keyed state '" + name + "' is " + StateKindName(state.kind) +
                              " state in one part of the snapshot and " + StateKindName(kind) + " in another");
  }
  state.kind = kind;
  state.legacy = legacy;
  return Status::OK();
}

Status ReadKeyGroupsHandle(const KeyGroupsHandle& h, KeyGroupRange range,
                           std::map<std::string, RestoredKeyedState>* out) {
  const int first = std::max(range.start, h.range.start);
  const int last = std::min(range.end, h.range.end);
  for (const auto& s : h.states) (*out)[s.name];  // registers the names even when empty here
  if (first > last) return Status::OK();
  const size_t a = static_cast<size_t>(first - h.range.start);
  const size_t b = static_cast<size_t>(last - h.range.start);
  const uint64_t begin = h.offsets[a];
  const uint64_t end = h.offsets[b] + h.lengths[b];
  Bytes bytes;
  const std::string what = h.stream.is_inline() ? std::string("inline keyed state") : "state file '" + h.stream.path + "'";
  if (h.stream.is_inline()) {
    if (end > h.stream.data.size()) return Status::Corruption(what + " is shorter than its key groups");
    bytes.assign(h.stream.data.begin() + static_cast<long>(begin), h.stream.data.begin() + static_cast<long>(end));
  } else {
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(h.stream.path));
    auto read = fs->ReadRange(h.stream.path, begin, end - begin);
    if (!read.ok()) {
      if (read.status().IsNotFound()) return Status::NotFound(what + " is missing");
      return read.status();
    }
    bytes = std::move(*read);
    if (bytes.size() != end - begin) return Status::Corruption(what + " is shorter than its metadata says");
  }
  for (size_t i = a; i <= b; ++i) {
    const uint8_t* section = bytes.data() + (h.offsets[i] - begin);
    if (Crc32c(section, h.lengths[i]) != h.crcs[i]) {
      return Status::Corruption(what + " fails the checksum of key group " +
                                std::to_string(h.range.start + static_cast<int>(i)));
    }
    try {
      DataInput in(section, section + h.lengths[i]);
      for (const auto& s : h.states) {
        uint64_t n = in.ReadVarint();
        if (n > in.remaining()) throw DeserializationError("rows beyond the key group");
        auto& state = (*out)[s.name];
        WEIR_RETURN_IF_ERROR(MergeKind(state, s.kind, false, s.name));
        if (n > 0) state.key_groups[h.range.start + static_cast<int>(i)].assign(in.position(), in.position() + n);
        in.Skip(n);
      }
      if (!in.AtEnd()) throw DeserializationError("trailing bytes");
    } catch (const DeserializationError& e) {
      return Status::Corruption(what + " is corrupt in key group " + std::to_string(h.range.start + static_cast<int>(i)) +
                                ": " + e.what());
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::map<std::string, RestoredKeyedState>> ReadKeyGroups(const std::vector<KeyedStateHandle>& handles,
                                                               KeyGroupRange range) {
  std::map<std::string, RestoredKeyedState> out;
  for (const auto& h : handles) {
    switch (h.type) {
      case KeyedStateHandle::Type::kKeyGroups:
        WEIR_RETURN_IF_ERROR(ReadKeyGroupsHandle(h.key_groups, range, &out));
        break;
      case KeyedStateHandle::Type::kLegacy:
        for (const auto& t : h.legacy.tables) {
          auto& state = out[t.name];
          WEIR_RETURN_IF_ERROR(MergeKind(state, t.kind, true, t.name));
          for (int i = 0; i < h.legacy.range.size(); ++i) {
            int kg = h.legacy.range.start + i;
            if (range.Contains(kg) && !t.key_groups[i].empty()) state.key_groups[kg] = t.key_groups[i];
          }
        }
        break;
      case KeyedStateHandle::Type::kNative:
        break;
    }
  }
  return out;
}

}  // namespace weir

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

// A piece of a handle's stream: the sections of key groups a..b (indexes into `h`'s),
// read and checked against their checksums.
Result<Bytes> ReadKeyGroupSections(const KeyGroupsHandle& h, size_t a, size_t b, const std::string& what) {
  const uint64_t begin = h.offsets[a];
  const uint64_t end = h.offsets[b] + h.lengths[b];
  Bytes bytes;
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
    if (Crc32c(bytes.data() + (h.offsets[i] - begin), h.lengths[i]) != h.crcs[i]) {
      return Status::Corruption(what + " fails the checksum of key group " +
                                std::to_string(h.range.start + static_cast<int>(i)));
    }
  }
  return bytes;
}

Status ForEachRowsOfHandle(const KeyGroupsHandle& h, KeyGroupRange range,
                           const std::function<Status(const RestoredRows&)>& fn, size_t read_bytes) {
  const int first = std::max(range.start, h.range.start);
  const int last = std::min(range.end, h.range.end);
  if (first > last) return Status::OK();
  const std::string what = h.stream.is_inline() ? std::string("inline keyed state") : "state file '" + h.stream.path + "'";
  size_t a = static_cast<size_t>(first - h.range.start);
  const size_t b_last = static_cast<size_t>(last - h.range.start);
  while (a <= b_last) {
    // The key groups [a, b] of this piece: at least one, then as many as fit in read_bytes.
    size_t b = a;
    while (b < b_last && h.offsets[b + 1] + h.lengths[b + 1] - h.offsets[a] <= read_bytes) ++b;
    WEIR_ASSIGN_OR_RETURN(Bytes bytes, ReadKeyGroupSections(h, a, b, what));
    for (size_t i = a; i <= b; ++i) {
      const int kg = h.range.start + static_cast<int>(i);
      const uint8_t* section = bytes.data() + (h.offsets[i] - h.offsets[a]);
      try {
        DataInput in(section, section + h.lengths[i]);
        for (const auto& s : h.states) {
          const uint64_t n = in.ReadVarint();
          if (n > in.remaining()) throw DeserializationError("rows beyond the key group");
          if (n > 0) {
            const std::string_view rows(reinterpret_cast<const char*>(in.position()), n);
            WEIR_RETURN_IF_ERROR(fn(RestoredRows{s.name, s.kind, false, kg, rows}));
          }
          in.Skip(n);
        }
        if (!in.AtEnd()) throw DeserializationError("trailing bytes");
      } catch (const DeserializationError& e) {
        return Status::Corruption(what + " is corrupt in key group " + std::to_string(kg) + ": " + e.what());
      }
    }
    a = b + 1;
  }
  return Status::OK();
}

}  // namespace

Status ForEachRestoredRows(const std::vector<KeyedStateHandle>& handles, KeyGroupRange range,
                           const std::function<Status(const RestoredRows&)>& fn, size_t read_bytes) {
  for (const auto& h : handles) {
    switch (h.type) {
      case KeyedStateHandle::Type::kKeyGroups:
        WEIR_RETURN_IF_ERROR(ForEachRowsOfHandle(h.key_groups, range, fn, read_bytes));
        break;
      case KeyedStateHandle::Type::kLegacy:
        for (const auto& t : h.legacy.tables) {
          for (int i = 0; i < h.legacy.range.size(); ++i) {
            const int kg = h.legacy.range.start + i;
            const Bytes& rows = t.key_groups[static_cast<size_t>(i)];
            if (!range.Contains(kg) || rows.empty()) continue;
            WEIR_RETURN_IF_ERROR(fn(RestoredRows{t.name, t.kind, true, kg,
                                                 std::string_view(reinterpret_cast<const char*>(rows.data()),
                                                                  rows.size())}));
          }
        }
        break;
      case KeyedStateHandle::Type::kNative:
        break;
    }
  }
  return Status::OK();
}

Result<std::map<std::string, RestoredKeyedState>> ReadKeyGroups(const std::vector<KeyedStateHandle>& handles,
                                                               KeyGroupRange range) {
  std::map<std::string, RestoredKeyedState> out;
  // Every state a handle names is listed, with its kind, even without rows here.
  for (const auto& h : handles) {
    if (h.type != KeyedStateHandle::Type::kKeyGroups) continue;
    for (const auto& s : h.key_groups.states) {
      auto& state = out[s.name];
      if (state.key_groups.empty()) state.kind = s.kind;
    }
  }
  WEIR_RETURN_IF_ERROR(ForEachRestoredRows(handles, range, [&](const RestoredRows& r) {
    auto& state = out[r.state];
    WEIR_RETURN_IF_ERROR(MergeKind(state, r.kind, r.legacy, r.state));
    const auto* rows = reinterpret_cast<const uint8_t*>(r.rows.data());
    state.key_groups[r.key_group].assign(rows, rows + r.rows.size());
    return Status::OK();
  }));
  return out;
}

}  // namespace weir

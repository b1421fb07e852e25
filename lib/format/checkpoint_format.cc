#include "lib/format/checkpoint_format.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "lib/api/serialization.h"
#include "lib/fs/file_system.h"

namespace weir {

uint64_t CompletedSnapshot::StateSize() const {
  uint64_t n = 0;
  for (const auto& [uid, op] : operators) {
    for (const auto& s : op.subtasks) n += s.StateSize();
  }
  return n;
}

uint64_t CompletedSnapshot::CheckpointedSize() const {
  uint64_t n = 0;
  for (const auto& [uid, op] : operators) {
    for (const auto& s : op.subtasks) n += s.CheckpointedSize();
  }
  return n;
}

bool CompletedSnapshot::HasNativeKeyedState() const {
  for (const auto& [uid, op] : operators) {
    for (const auto& s : op.subtasks) {
      for (const auto& k : s.keyed) {
        if (k.type == KeyedStateHandle::Type::kNative) return true;
      }
    }
  }
  return false;
}

std::vector<const StreamHandle*> CompletedSnapshot::Files() const {
  std::vector<const StreamHandle*> out;
  auto add = [&](const StreamHandle& h) {
    if (!h.is_inline()) out.push_back(&h);
  };
  for (const auto& [uid, op] : operators) {
    for (const auto& s : op.subtasks) {
      if (s.operator_state) add(*s.operator_state);
      if (s.channel_state) add(*s.channel_state);
      for (const auto& k : s.keyed) {
        if (k.type == KeyedStateHandle::Type::kKeyGroups) add(k.key_groups.stream);
        for (const auto& [name, h] : k.native.shared_files) add(h);
        for (const auto& [name, h] : k.native.private_files) add(h);
      }
    }
  }
  return out;
}

namespace {

// Stream handle encodings.
enum : uint8_t { kInline = 0, kRelativeFile = 1, kAbsoluteFile = 2 };

std::string RelativeTo(const std::string& path, const std::string& dir) {
  if (dir.empty()) return "";
  std::string prefix = dir.back() == '/' ? dir : dir + "/";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : "";
}

void WriteString(DataOutput& out, const std::string& s) { Serializer<std::string>::Write(out, s); }
std::string ReadString(DataInput& in) {
  std::string s;
  Serializer<std::string>::Read(in, s);
  return s;
}

uint64_t ReadCount(DataInput& in, const char* what) {
  uint64_t n = in.ReadVarint();
  if (n > in.remaining()) throw DeserializationError(std::string(what) + " count beyond the data");
  return n;
}

void WriteStream(DataOutput& out, const StreamHandle& h, const std::string& dir) {
  if (h.is_inline()) {
    out.WriteFixed<uint8_t>(kInline);
    Serializer<Bytes>::Write(out, h.data);
  } else {
    std::string rel = RelativeTo(h.path, dir);
    out.WriteFixed<uint8_t>(rel.empty() ? kAbsoluteFile : kRelativeFile);
    WriteString(out, rel.empty() ? h.path : rel);
  }
  out.WriteFixed<uint64_t>(h.size);
  out.WriteFixed<uint32_t>(h.crc);
}

StreamHandle ReadStream(DataInput& in, const std::string& dir) {
  StreamHandle h;
  uint8_t kind = in.ReadFixed<uint8_t>();
  switch (kind) {
    case kInline:
      Serializer<Bytes>::Read(in, h.data);
      break;
    case kRelativeFile:
      h.path = JoinPath(dir, ReadString(in));
      break;
    case kAbsoluteFile:
      h.path = ReadString(in);
      break;
    default:
      throw DeserializationError("bad stream handle kind");
  }
  h.size = in.ReadFixed<uint64_t>();
  h.crc = in.ReadFixed<uint32_t>();
  if (h.is_inline() && h.size != h.data.size()) throw DeserializationError("inline state of the wrong size");
  if (!h.is_inline() && h.path.empty()) throw DeserializationError("a state file without a name");
  return h;
}

void WriteRange(DataOutput& out, const KeyGroupRange& r) {
  out.WriteFixed<int32_t>(r.start);
  out.WriteFixed<int32_t>(r.end);
}
KeyGroupRange ReadRange(DataInput& in) {
  KeyGroupRange r;
  r.start = in.ReadFixed<int32_t>();
  r.end = in.ReadFixed<int32_t>();
  if (r.start < 0 || r.end < r.start - 1 || r.end >= kUpperBoundMaxParallelism) {
    throw DeserializationError("bad key group range");
  }
  return r;
}

void WriteStates(DataOutput& out, const std::vector<StateMeta>& states) {
  out.WriteVarint(states.size());
  for (const auto& s : states) {
    WriteString(out, s.name);
    out.WriteFixed<uint8_t>(static_cast<uint8_t>(s.kind));
  }
}
std::vector<StateMeta> ReadStates(DataInput& in) {
  std::vector<StateMeta> states(ReadCount(in, "state"));
  for (auto& s : states) {
    s.name = ReadString(in);
    uint8_t kind = in.ReadFixed<uint8_t>();
    if (kind > static_cast<uint8_t>(StateKind::kAggregating)) throw DeserializationError("bad state kind");
    s.kind = static_cast<StateKind>(kind);
  }
  return states;
}

void WriteFiles(DataOutput& out, const std::vector<std::pair<std::string, StreamHandle>>& files,
                const std::string& dir) {
  out.WriteVarint(files.size());
  for (const auto& [name, h] : files) {
    WriteString(out, name);
    WriteStream(out, h, dir);
  }
}
std::vector<std::pair<std::string, StreamHandle>> ReadFiles(DataInput& in, const std::string& dir) {
  std::vector<std::pair<std::string, StreamHandle>> files(ReadCount(in, "file"));
  for (auto& [name, h] : files) {
    name = ReadString(in);
    h = ReadStream(in, dir);
  }
  return files;
}

void WriteKeyed(DataOutput& out, const KeyedStateHandle& k, const std::string& dir) {
  out.WriteFixed<uint8_t>(static_cast<uint8_t>(k.type));
  switch (k.type) {
    case KeyedStateHandle::Type::kKeyGroups: {
      const auto& g = k.key_groups;
      WriteRange(out, g.range);
      WriteStates(out, g.states);
      Serializer<std::vector<uint64_t>>::Write(out, g.offsets);
      Serializer<std::vector<uint64_t>>::Write(out, g.lengths);
      Serializer<std::vector<uint32_t>>::Write(out, g.crcs);
      WriteStream(out, g.stream, dir);
      break;
    }
    case KeyedStateHandle::Type::kNative: {
      const auto& n = k.native;
      WriteString(out, n.backend);
      WriteString(out, n.backend_id);
      WriteRange(out, n.range);
      WriteStates(out, n.states);
      WriteFiles(out, n.shared_files, dir);
      WriteFiles(out, n.private_files, dir);
      out.WriteFixed<uint64_t>(n.checkpointed_size);
      break;
    }
    case KeyedStateHandle::Type::kLegacy: {
      const auto& l = k.legacy;
      WriteRange(out, l.range);
      out.WriteVarint(l.tables.size());
      for (const auto& t : l.tables) {
        WriteString(out, t.name);
        out.WriteFixed<uint8_t>(static_cast<uint8_t>(t.kind));
        Serializer<std::vector<Bytes>>::Write(out, t.key_groups);
      }
      break;
    }
  }
}

KeyedStateHandle ReadKeyed(DataInput& in, const std::string& dir) {
  KeyedStateHandle k;
  uint8_t type = in.ReadFixed<uint8_t>();
  if (type > static_cast<uint8_t>(KeyedStateHandle::Type::kLegacy)) throw DeserializationError("bad keyed handle");
  k.type = static_cast<KeyedStateHandle::Type>(type);
  switch (k.type) {
    case KeyedStateHandle::Type::kKeyGroups: {
      auto& g = k.key_groups;
      g.range = ReadRange(in);
      g.states = ReadStates(in);
      Serializer<std::vector<uint64_t>>::Read(in, g.offsets);
      Serializer<std::vector<uint64_t>>::Read(in, g.lengths);
      Serializer<std::vector<uint32_t>>::Read(in, g.crcs);
      const size_t n = static_cast<size_t>(g.range.size());
      if (g.offsets.size() != n || g.lengths.size() != n || g.crcs.size() != n) {
        throw DeserializationError("key group offsets that do not match the range");
      }
      g.stream = ReadStream(in, dir);
      for (size_t i = 0; i < n; ++i) {
        if (g.offsets[i] + g.lengths[i] > g.stream.size) throw DeserializationError("a key group beyond its stream");
      }
      break;
    }
    case KeyedStateHandle::Type::kNative: {
      auto& n = k.native;
      n.backend = ReadString(in);
      n.backend_id = ReadString(in);
      n.range = ReadRange(in);
      n.states = ReadStates(in);
      n.shared_files = ReadFiles(in, dir);
      n.private_files = ReadFiles(in, dir);
      n.checkpointed_size = in.ReadFixed<uint64_t>();
      break;
    }
    case KeyedStateHandle::Type::kLegacy: {
      auto& l = k.legacy;
      l.range = ReadRange(in);
      l.tables.resize(ReadCount(in, "table"));
      for (auto& t : l.tables) {
        t.name = ReadString(in);
        uint8_t kind = in.ReadFixed<uint8_t>();
        if (kind > static_cast<uint8_t>(StateKind::kAggregating)) throw DeserializationError("bad state kind");
        t.kind = static_cast<StateKind>(kind);
        Serializer<std::vector<Bytes>>::Read(in, t.key_groups);
        if (static_cast<int>(t.key_groups.size()) != l.range.size()) {
          throw DeserializationError("state '" + t.name + "' has a key-group count that does not match its range");
        }
      }
      break;
    }
  }
  return k;
}

JobId ReadJobId(DataInput& in);

// A snapshot's job id, id, timestamp, kind and format (every metadata version).
CompletedSnapshot ReadSnapshotHeader(DataInput& in) {
  CompletedSnapshot m;
  m.job_id = ReadJobId(in);
  m.id = in.ReadFixed<int64_t>();
  m.timestamp = in.ReadFixed<int64_t>();
  uint8_t kind = in.ReadFixed<uint8_t>();
  uint8_t format = in.ReadFixed<uint8_t>();
  if (kind > 1 || format > 1) throw DeserializationError("bad kind or format");
  m.kind = static_cast<SnapshotKind>(kind);
  m.format = static_cast<SnapshotFormat>(format);
  return m;
}

// An operator's uid, name, parallelism and max parallelism (every metadata version).
CompletedSnapshot::Operator ReadOperatorHeader(DataInput& in) {
  CompletedSnapshot::Operator op;
  op.uid = ReadString(in);
  op.name = ReadString(in);
  op.parallelism = in.ReadFixed<int32_t>();
  op.max_parallelism = in.ReadFixed<int32_t>();
  if (op.parallelism < 1 || op.max_parallelism < op.parallelism) {
    throw DeserializationError("operator '" + op.uid + "' has an impossible parallelism");
  }
  return op;
}

JobId ReadJobId(DataInput& in) {
  std::array<uint8_t, 16> id{};
  in.ReadBytes(id.data(), 16);
  std::string hex;
  static const char* kDigits = "0123456789abcdef";
  for (auto b : id) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 15]);
  }
  return *Id16::Parse(hex);
}

// Versions 1 and 2: per subtask the name of its state file (relative), its size and
// checksum, and (2) whether it had finished. LoadSnapshot reads the files.
Result<CompletedSnapshot> DecodeLegacyMetadata(DataInput& in, uint32_t version, const std::string& dir) {
  CompletedSnapshot m = ReadSnapshotHeader(in);
  m.version = version;
  uint64_t n = ReadCount(in, "operator");
  for (uint64_t i = 0; i < n; ++i) {
    CompletedSnapshot::Operator op = ReadOperatorHeader(in);
    op.subtasks.resize(op.parallelism);
    uint64_t k = ReadCount(in, "subtask");
    for (uint64_t j = 0; j < k; ++j) {
      int subtask = in.ReadFixed<int32_t>();
      std::string file = ReadString(in);
      uint64_t size = in.ReadFixed<uint64_t>();
      uint32_t crc = in.ReadFixed<uint32_t>();
      bool finished = version >= 2 && in.ReadFixed<uint8_t>() == 1;
      if (subtask < 0 || subtask >= op.parallelism) {
        throw DeserializationError("subtask " + std::to_string(subtask) + " of operator '" + op.uid +
                                   "', which has parallelism " + std::to_string(op.parallelism));
      }
      auto& s = op.subtasks[subtask];
      s.finished = finished;
      if (!file.empty()) {
        // The whole framed state file, to be read and converted by LoadSnapshot.
        s.operator_state = StreamHandle{JoinPath(dir, file), {}, size, crc};
      }
    }
    m.operators[op.uid] = std::move(op);
  }
  return m;
}

}  // namespace

Bytes EncodeMetadata(const CompletedSnapshot& m, const std::string& dir) {
  Bytes buf;
  DataOutput out(&buf);
  out.WriteBytes(m.job_id.bytes().data(), 16);
  out.WriteFixed<int64_t>(m.id);
  out.WriteFixed<int64_t>(m.timestamp);
  out.WriteFixed<uint8_t>(static_cast<uint8_t>(m.kind));
  out.WriteFixed<uint8_t>(static_cast<uint8_t>(m.format));
  WriteString(out, m.backend);
  out.WriteVarint(m.operators.size());
  for (const auto& [uid, op] : m.operators) {
    WriteString(out, op.uid);
    WriteString(out, op.name);
    out.WriteFixed<int32_t>(op.parallelism);
    out.WriteFixed<int32_t>(op.max_parallelism);
    out.WriteVarint(op.subtasks.size());
    for (const auto& s : op.subtasks) {
      out.WriteFixed<uint8_t>(s.finished ? 1 : 0);
      out.WriteVarint(s.keyed.size());
      for (const auto& k : s.keyed) WriteKeyed(out, k, dir);
      out.WriteFixed<uint8_t>(s.operator_state ? 1 : 0);
      if (s.operator_state) WriteStream(out, *s.operator_state, dir);
      out.WriteFixed<uint8_t>(s.channel_state ? 1 : 0);
      if (s.channel_state) WriteStream(out, *s.channel_state, dir);
    }
  }
  return buf;
}

Result<CompletedSnapshot> DecodeMetadata(const Bytes& payload, const std::string& what, uint32_t version,
                                         const std::string& dir) {
  try {
    DataInput in(payload);
    if (version < 3) {
      auto legacy = DecodeLegacyMetadata(in, version, dir);
      if (legacy.ok() && !in.AtEnd()) throw DeserializationError("trailing bytes");
      return legacy;
    }
    CompletedSnapshot m = ReadSnapshotHeader(in);
    m.backend = ReadString(in);
    uint64_t n = ReadCount(in, "operator");
    for (uint64_t i = 0; i < n; ++i) {
      CompletedSnapshot::Operator op = ReadOperatorHeader(in);
      uint64_t k = ReadCount(in, "subtask");
      if (k != static_cast<uint64_t>(op.parallelism)) {
        throw DeserializationError("operator '" + op.uid + "' lists " + std::to_string(k) +
                                   " subtasks for parallelism " + std::to_string(op.parallelism));
      }
      op.subtasks.resize(k);
      for (auto& s : op.subtasks) {
        uint8_t finished = in.ReadFixed<uint8_t>();
        if (finished > 1) throw DeserializationError("bad finished flag");
        s.finished = finished == 1;
        s.keyed.resize(ReadCount(in, "keyed state"));
        for (auto& h : s.keyed) h = ReadKeyed(in, dir);
        uint8_t has_operator_state = in.ReadFixed<uint8_t>();
        if (has_operator_state > 1) throw DeserializationError("bad operator state flag");
        if (has_operator_state) s.operator_state = ReadStream(in, dir);
        if (version >= 4) {
          uint8_t has_channel_state = in.ReadFixed<uint8_t>();
          if (has_channel_state > 1) throw DeserializationError("bad channel state flag");
          if (has_channel_state) s.channel_state = ReadStream(in, dir);
        }
        if (s.finished && (!s.keyed.empty() || s.operator_state || s.channel_state)) {
          throw DeserializationError("a finished subtask with state");
        }
      }
      m.operators[op.uid] = std::move(op);
    }
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
    return m;
  } catch (const DeserializationError& e) {
    return Status::Corruption("metadata file '" + what + "' is corrupt: " + e.what());
  }
}

Bytes EncodeOperatorState(const OperatorStateSnapshot& state) {
  Bytes buf;
  DataOutput out(&buf);
  out.WriteVarint(state.lists.size());
  for (const auto& l : state.lists) {
    WriteString(out, l.name);
    out.WriteFixed<uint8_t>(static_cast<uint8_t>(l.mode));
    Serializer<std::vector<Bytes>>::Write(out, l.elements);
  }
  return buf;
}

namespace {
// The record format of channel state whose hash edges' records carry their KeyHash.
constexpr uint64_t kChannelStateKeyHashes = 1;
}  // namespace

Bytes EncodeChannelState(const ChannelStateSnapshot& state) {
  Bytes buf;
  size_t payload = 0;
  for (const auto& [channel, bytes] : state.buffers) payload += bytes.size();
  buf.reserve(payload + 16 * state.buffers.size() + 16);  // the buffers and (about) their framing: one allocation
  DataOutput out(&buf);
  out.WriteVarint(state.buffers.size());
  for (const auto& [channel, bytes] : state.buffers) {
    out.WriteVarint(static_cast<uint64_t>(channel));
    Serializer<Bytes>::Write(out, bytes);
  }
  // The buffers' inputs follow (every buffer's, or none when all are input 0 and the
  // records carry no key hashes: the layout before either), then the record format.
  const bool other_inputs = std::any_of(state.inputs.begin(), state.inputs.end(), [](int input) { return input != 0; });
  if (other_inputs || state.key_hashes) {
    out.WriteVarint(state.buffers.size());
    for (size_t i = 0; i < state.buffers.size(); ++i) {
      out.WriteVarint(static_cast<uint64_t>(state.inputs.empty() ? 0 : state.inputs[i]));
    }
  }
  if (state.key_hashes) out.WriteVarint(kChannelStateKeyHashes);
  return buf;
}

Result<ChannelStateSnapshot> DecodeChannelState(const Bytes& payload, const std::string& what) {
  try {
    DataInput in(payload);
    ChannelStateSnapshot state;
    state.buffers.resize(ReadCount(in, "buffer"));
    for (auto& [channel, bytes] : state.buffers) {
      channel = static_cast<int>(in.ReadVarint());
      Serializer<Bytes>::Read(in, bytes);
    }
    if (!in.AtEnd()) {
      state.inputs.resize(ReadCount(in, "input"));
      if (state.inputs.size() != state.buffers.size()) {
        throw DeserializationError(std::to_string(state.inputs.size()) + " inputs for " +
                                   std::to_string(state.buffers.size()) + " buffers");
      }
      for (int& input : state.inputs) input = static_cast<int>(in.ReadVarint());
    }
    // The record format: absent before records on hash edges carried their key hashes.
    state.key_hashes = false;
    if (!in.AtEnd()) {
      const uint64_t format = in.ReadVarint();
      if (format != kChannelStateKeyHashes) {
        throw DeserializationError("unknown record format " + std::to_string(format) +
                                   " (written by a newer weir?)");
      }
      state.key_hashes = true;
    }
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
    return state;
  } catch (const DeserializationError& e) {
    return Status::Corruption("channel state " + what + " is corrupt: " + e.what());
  }
}

namespace {
void ReadOperatorLists(DataInput& in, OperatorStateSnapshot* state) {
  state->lists.resize(ReadCount(in, "list"));
  for (auto& l : state->lists) {
    l.name = ReadString(in);
    uint8_t mode = in.ReadFixed<uint8_t>();
    if (mode > 2) throw DeserializationError("bad distribution mode");
    l.mode = static_cast<OperatorStateMode>(mode);
    Serializer<std::vector<Bytes>>::Read(in, l.elements);
  }
}
}  // namespace

Result<OperatorStateSnapshot> DecodeOperatorState(const Bytes& payload, const std::string& what) {
  OperatorStateSnapshot state;
  try {
    DataInput in(payload);
    ReadOperatorLists(in, &state);
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
  } catch (const DeserializationError& e) {
    return Status::Corruption("operator state '" + what + "' is corrupt: " + e.what());
  }
  return state;
}

Result<OperatorSubtaskState> DecodeLegacySubtaskState(const Bytes& payload, const std::string& what) {
  OperatorSubtaskState s;
  try {
    DataInput in(payload);
    uint8_t has_keyed = in.ReadFixed<uint8_t>();
    if (has_keyed > 1) throw DeserializationError("bad keyed flag");
    if (has_keyed) {
      KeyedStateHandle k;
      k.type = KeyedStateHandle::Type::kLegacy;
      in.ReadFixed<int32_t>();  // max parallelism: the operator's
      k.legacy.range.start = in.ReadFixed<int32_t>();
      k.legacy.range.end = in.ReadFixed<int32_t>();
      k.legacy.tables.resize(ReadCount(in, "table"));
      for (auto& t : k.legacy.tables) {
        t.name = ReadString(in);
        auto kind = ParseStateKind(ReadString(in));
        if (!kind) throw DeserializationError("unknown state kind of '" + t.name + "'");
        t.kind = *kind;
        Serializer<std::vector<Bytes>>::Read(in, t.key_groups);
        if (static_cast<int>(t.key_groups.size()) != k.legacy.range.size()) {
          throw DeserializationError("state '" + t.name + "' has a key-group count that does not match its range");
        }
      }
      s.keyed.push_back(std::move(k));
    }
    OperatorStateSnapshot lists;
    ReadOperatorLists(in, &lists);
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
    Bytes encoded = EncodeOperatorState(lists);
    s.operator_state = StreamHandle{"", encoded, encoded.size(), Crc32cOf(encoded)};
    for (const auto& l : lists.lists) {
      if (l.mode == OperatorStateMode::kUnion && !l.elements.empty()) s.union_list = l.name;
    }
  } catch (const DeserializationError& e) {
    return Status::Corruption("state file '" + what + "' is corrupt: " + e.what());
  }
  return s;
}

Bytes FrameFile(const char magic[8], uint32_t version, const Bytes& payload) {
  Bytes out;
  DataOutput w(&out);
  w.WriteBytes(magic, 8);
  w.WriteFixed<uint32_t>(version);
  w.WriteFixed<uint64_t>(payload.size());
  w.WriteBytes(payload.data(), payload.size());
  w.WriteFixed<uint32_t>(Crc32c(payload.data(), payload.size()));
  return out;
}

Result<Bytes> UnframeFile(const Bytes& file, const char magic[8], uint32_t max_version, const std::string& what,
                          uint32_t* version_out) {
  constexpr size_t kHeader = 8 + 4 + 8;
  if (file.size() < kHeader + 4) {
    return Status::Corruption("'" + what + "' is truncated (" + std::to_string(file.size()) + " bytes)");
  }
  if (std::memcmp(file.data(), magic, 8) != 0) {
    return Status::Corruption("'" + what + "' is not a weir " +
                              std::string(magic[4] == 'M' ? "checkpoint metadata" : "state") +
                              " file (bad magic number)");
  }
  uint32_t version;
  uint64_t length;
  std::memcpy(&version, file.data() + 8, 4);
  std::memcpy(&length, file.data() + 12, 8);
  if (version == 0 || version > max_version) {
    return Status::Corruption("'" + what + "' has format version " + std::to_string(version) +
                              "; this weir reads up to version " + std::to_string(max_version));
  }
  if (length != file.size() - kHeader - 4) {
    return Status::Corruption("'" + what + "' is truncated or has trailing bytes (length " + std::to_string(length) +
                              ", file holds " + std::to_string(file.size() - kHeader - 4) + ")");
  }
  Bytes payload(file.begin() + kHeader, file.begin() + kHeader + static_cast<long>(length));
  uint32_t crc;
  std::memcpy(&crc, file.data() + kHeader + length, 4);
  if (crc != Crc32c(payload.data(), payload.size())) {
    return Status::Corruption("'" + what + "' failed its checksum");
  }
  if (version_out) *version_out = version;
  return payload;
}

}  // namespace weir

#include "lib/format/checkpoint_format.h"


#include <cerrno>
#include <cstring>
#include <filesystem>

#include "lib/api/serialization.h"
#include "lib/common/hash.h"

namespace fs = std::filesystem;

namespace weir {

namespace {

void WriteKeyed(DataOutput& out, const KeyedStateSnapshot& k) {
  out.WriteFixed<int32_t>(k.max_parallelism);
  out.WriteFixed<int32_t>(k.range.start);
  out.WriteFixed<int32_t>(k.range.end);
  out.WriteVarint(k.tables.size());
  for (const auto& t : k.tables) {
    Serializer<std::string>::Write(out, t.name);
    Serializer<std::string>::Write(out, t.kind);
    Serializer<std::vector<Bytes>>::Write(out, t.key_groups);
  }
}

void ReadKeyed(DataInput& in, KeyedStateSnapshot& k) {
  k.max_parallelism = in.ReadFixed<int32_t>();
  k.range.start = in.ReadFixed<int32_t>();
  k.range.end = in.ReadFixed<int32_t>();
  uint64_t n = in.ReadVarint();
  if (n > in.remaining()) throw DeserializationError("table count beyond the data");
  k.tables.resize(n);
  for (auto& t : k.tables) {
    Serializer<std::string>::Read(in, t.name);
    Serializer<std::string>::Read(in, t.kind);
    Serializer<std::vector<Bytes>>::Read(in, t.key_groups);
    if (static_cast<int>(t.key_groups.size()) != k.range.size()) {
      throw DeserializationError("state '" + t.name + "' has a key-group count that does not match its range");
    }
  }
}

}  // namespace

Bytes EncodeSubtaskSnapshot(const OperatorSubtaskSnapshot& s) {
  Bytes buf;
  DataOutput out(&buf);
  out.WriteFixed<uint8_t>(s.has_keyed ? 1 : 0);
  if (s.has_keyed) WriteKeyed(out, s.keyed);
  out.WriteVarint(s.operator_state.lists.size());
  for (const auto& l : s.operator_state.lists) {
    Serializer<std::string>::Write(out, l.name);
    out.WriteFixed<uint8_t>(static_cast<uint8_t>(l.mode));
    Serializer<std::vector<Bytes>>::Write(out, l.elements);
  }
  return buf;
}

Result<OperatorSubtaskSnapshot> DecodeSubtaskSnapshot(const Bytes& payload, const std::string& what) {
  OperatorSubtaskSnapshot s;
  try {
    DataInput in(payload);
    uint8_t has_keyed = in.ReadFixed<uint8_t>();
    if (has_keyed > 1) throw DeserializationError("bad keyed flag");
    s.has_keyed = has_keyed == 1;
    if (s.has_keyed) ReadKeyed(in, s.keyed);
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("list count beyond the data");
    s.operator_state.lists.resize(n);
    for (auto& l : s.operator_state.lists) {
      Serializer<std::string>::Read(in, l.name);
      uint8_t mode = in.ReadFixed<uint8_t>();
      if (mode > 2) throw DeserializationError("bad distribution mode");
      l.mode = static_cast<OperatorStateMode>(mode);
      Serializer<std::vector<Bytes>>::Read(in, l.elements);
    }
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
  } catch (const DeserializationError& e) {
    return Status::Corruption("state file '" + what + "' is corrupt: " + e.what());
  }
  return s;
}

Bytes EncodeMetadata(const CheckpointMetadata& m) {
  Bytes buf;
  DataOutput out(&buf);
  out.WriteBytes(m.job_id.bytes().data(), 16);
  out.WriteFixed<int64_t>(m.checkpoint_id);
  out.WriteFixed<int64_t>(m.timestamp);
  out.WriteFixed<uint8_t>(static_cast<uint8_t>(m.kind));
  out.WriteFixed<uint8_t>(static_cast<uint8_t>(m.format));
  out.WriteVarint(m.operators.size());
  for (const auto& op : m.operators) {
    Serializer<std::string>::Write(out, op.uid);
    Serializer<std::string>::Write(out, op.name);
    out.WriteFixed<int32_t>(op.parallelism);
    out.WriteFixed<int32_t>(op.max_parallelism);
    out.WriteVarint(op.subtasks.size());
    for (const auto& h : op.subtasks) {
      out.WriteFixed<int32_t>(h.subtask);
      Serializer<std::string>::Write(out, h.file);
      out.WriteFixed<uint64_t>(h.size);
      out.WriteFixed<uint32_t>(h.crc);
      out.WriteFixed<uint8_t>(h.finished ? 1 : 0);
    }
  }
  return buf;
}

Result<CheckpointMetadata> DecodeMetadata(const Bytes& payload, const std::string& what, uint32_t version) {
  CheckpointMetadata m;
  try {
    DataInput in(payload);
    std::array<uint8_t, 16> id{};
    in.ReadBytes(id.data(), 16);
    std::string hex;
    static const char* kDigits = "0123456789abcdef";
    for (auto b : id) {
      hex.push_back(kDigits[b >> 4]);
      hex.push_back(kDigits[b & 15]);
    }
    m.job_id = *Id16::Parse(hex);
    m.checkpoint_id = in.ReadFixed<int64_t>();
    m.timestamp = in.ReadFixed<int64_t>();
    uint8_t kind = in.ReadFixed<uint8_t>();
    uint8_t format = in.ReadFixed<uint8_t>();
    if (kind > 1 || format > 1) throw DeserializationError("bad kind or format");
    m.kind = static_cast<SnapshotKind>(kind);
    m.format = static_cast<SnapshotFormat>(format);
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("operator count beyond the data");
    m.operators.resize(n);
    for (auto& op : m.operators) {
      Serializer<std::string>::Read(in, op.uid);
      Serializer<std::string>::Read(in, op.name);
      op.parallelism = in.ReadFixed<int32_t>();
      op.max_parallelism = in.ReadFixed<int32_t>();
      uint64_t k = in.ReadVarint();
      if (k > in.remaining()) throw DeserializationError("subtask count beyond the data");
      op.subtasks.resize(k);
      for (auto& h : op.subtasks) {
        h.subtask = in.ReadFixed<int32_t>();
        Serializer<std::string>::Read(in, h.file);
        h.size = in.ReadFixed<uint64_t>();
        h.crc = in.ReadFixed<uint32_t>();
        if (version >= 2) {
          uint8_t finished = in.ReadFixed<uint8_t>();
          if (finished > 1) throw DeserializationError("bad finished flag");
          h.finished = finished == 1;
          if (h.finished && !h.file.empty()) throw DeserializationError("a finished subtask with a state file");
        }
      }
      if (op.parallelism < 1 || op.max_parallelism < op.parallelism) {
        throw DeserializationError("operator '" + op.uid + "' has an impossible parallelism");
      }
    }
    if (!in.AtEnd()) throw DeserializationError("trailing bytes");
  } catch (const DeserializationError& e) {
    return Status::Corruption("metadata file '" + what + "' is corrupt: " + e.what());
  }
  return m;
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
  if (version_out) *version_out = version;
  Bytes payload(file.begin() + kHeader, file.begin() + kHeader + static_cast<long>(length));
  uint32_t crc;
  std::memcpy(&crc, file.data() + kHeader + length, 4);
  if (crc != Crc32c(payload.data(), payload.size())) {
    return Status::Corruption("'" + what + "' failed its checksum");
  }
  return payload;
}

}  // namespace weir

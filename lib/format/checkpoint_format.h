#pragma once
// The on-disk format of checkpoints and savepoints (see checkpoint_format.md).
//
// A snapshot directory holds one state file per operator subtask and a `_metadata`
// file, written last and atomically, that lists them. Both are framed:
//
//   state file : "WEIRSTAT" | u32 version | u64 payload length | payload | u32 crc32c(payload)
//   _metadata  : "WEIRMETA" | u32 version | u64 payload length | payload | u32 crc32c(payload)
//
// Payloads use weir's canonical serialization (lib/api/serialization.h), so the
// format does not depend on the state backend. File references in `_metadata` are
// relative to its directory, which makes a snapshot relocatable.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/api/state_snapshot.h"
#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"

namespace weir {

// Version 2 adds a "finished" flag per subtask (FLIP-147); version 1 is still read.
inline constexpr uint32_t kMetadataVersion = 2;
inline constexpr uint32_t kStateFileVersion = 1;
inline constexpr char kMetadataFileName[] = "_metadata";

enum class SnapshotKind : uint8_t { kCheckpoint = 0, kSavepoint = 1 };
enum class SnapshotFormat : uint8_t { kCanonical = 0, kNative = 1 };

// Where one subtask's state is: a file relative to the snapshot directory, or (for
// in-memory checkpoint storage) nothing on disk.
struct SubtaskStateHandle {
  int subtask = 0;
  std::string file;        // relative to the snapshot directory; empty: no state
  uint64_t size = 0;       // bytes of the file
  uint32_t crc = 0;        // crc32c of the payload
  bool finished = false;   // the subtask had finished (no file): OperatorSubtaskSnapshot::finished
};

struct OperatorStateMeta {
  std::string uid;
  std::string name;
  int parallelism = 1;
  int max_parallelism = 128;
  std::vector<SubtaskStateHandle> subtasks;
};

struct CheckpointMetadata {
  JobId job_id;
  int64_t checkpoint_id = 0;
  int64_t timestamp = 0;
  SnapshotKind kind = SnapshotKind::kCheckpoint;
  SnapshotFormat format = SnapshotFormat::kCanonical;
  std::vector<OperatorStateMeta> operators;
};

// Serialized payloads.
Bytes EncodeSubtaskSnapshot(const OperatorSubtaskSnapshot& snapshot);
Result<OperatorSubtaskSnapshot> DecodeSubtaskSnapshot(const Bytes& payload, const std::string& what);
Bytes EncodeMetadata(const CheckpointMetadata& metadata);
// `version` is the framed file's version (1 or 2).
Result<CheckpointMetadata> DecodeMetadata(const Bytes& payload, const std::string& what,
                                          uint32_t version = kMetadataVersion);

// Framing: magic, version, length, payload, checksum.
Bytes FrameFile(const char magic[8], uint32_t version, const Bytes& payload);
// Checks the frame; Corruption naming `what` (the file) on a bad magic, version,
// length or checksum. `version` (optional) receives the file's version.
Result<Bytes> UnframeFile(const Bytes& file, const char magic[8], uint32_t max_version, const std::string& what,
                          uint32_t* version = nullptr);

inline constexpr char kStateMagic[8] = {'W', 'E', 'I', 'R', 'S', 'T', 'A', 'T'};
inline constexpr char kMetaMagic[8] = {'W', 'E', 'I', 'R', 'M', 'E', 'T', 'A'};

}  // namespace weir

namespace weir {
inline uint32_t Crc32cOf(const Bytes& b) { return Crc32c(b.data(), b.size()); }
}  // namespace weir

#pragma once
// The on-disk format of checkpoints and savepoints.
//
// A snapshot directory holds the files the tasks wrote (state streams; with native
// savepoints a backend's own files) and a `_metadata` file, written last and
// atomically, that lists the handles of every operator subtask's state. A checkpoint
// may also reference shared files of the job's shared/ directory (incremental
// checkpoints). `_metadata` is framed:
//
//   "WEIRMETA" | u32 version | u64 payload length | payload | u32 crc32c(payload)
//
// Payloads use weir's canonical serialization (lib/api/serialization.h). Files inside
// the snapshot directory are referenced relative to it, which makes a savepoint
// relocatable; shared files by their absolute path or URI.
//
// Versions: 4 (with the channel state of unaligned checkpoints); 3 (handles written by
// the tasks); 1 and 2 (one framed "WEIRSTAT" state
// file per operator subtask, 2 with a finished flag) are still read.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/api/state_snapshot.h"
#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"

namespace weir {

inline constexpr uint32_t kMetadataVersion = 4;
inline constexpr uint32_t kLegacyStateFileVersion = 1;
inline constexpr char kMetadataFileName[] = "_metadata";

enum class SnapshotKind : uint8_t { kCheckpoint = 0, kSavepoint = 1 };
enum class SnapshotFormat : uint8_t { kCanonical = 0, kNative = 1 };

// A completed checkpoint or savepoint: handles, no state bytes (except inline state).
struct CompletedSnapshot {
  struct Operator {
    std::string uid;
    std::string name;
    int parallelism = 1;
    int max_parallelism = 128;
    std::vector<OperatorSubtaskState> subtasks;  // index = subtask
  };
  JobId job_id;
  int64_t id = 0;
  int64_t timestamp = 0;
  SnapshotKind kind = SnapshotKind::kCheckpoint;
  SnapshotFormat format = SnapshotFormat::kCanonical;
  std::string backend = "hashmap";  // the keyed state backend of the job that took it
  std::string external_path;        // the snapshot directory; empty when kept in memory only
  uint32_t version = kMetadataVersion;  // of the metadata it was read from
  std::map<std::string, Operator> operators;  // by uid

  // Bytes of state the snapshot stands for, and bytes its checkpoint wrote.
  uint64_t StateSize() const;
  uint64_t CheckpointedSize() const;
  // Whether it holds keyed state in a backend's native form (restorable only by it).
  bool HasNativeKeyedState() const;
  // Every file it references (exclusive and shared), with its handle.
  std::vector<const StreamHandle*> Files() const;
};

// Metadata payloads. Paths of files inside `dir` are stored relative to it and resolved
// against it when read.
Bytes EncodeMetadata(const CompletedSnapshot& snapshot, const std::string& dir);
// `version` is the framed file's; versions 1 and 2 give the state file names in the
// handles' paths (LoadSnapshot reads and converts them). Corruption naming `what`.
Result<CompletedSnapshot> DecodeMetadata(const Bytes& payload, const std::string& what, uint32_t version,
                                         const std::string& dir);

// Operator state lists, as a stream (OperatorSubtaskState::operator_state).
Bytes EncodeOperatorState(const OperatorStateSnapshot& state);
Result<OperatorStateSnapshot> DecodeOperatorState(const Bytes& payload, const std::string& what);

// In-flight data (OperatorSubtaskState::channel_state), as a stream.
Bytes EncodeChannelState(const ChannelStateSnapshot& state);
Result<ChannelStateSnapshot> DecodeChannelState(const Bytes& payload, const std::string& what);

// The payload of a version 1 or 2 state file: keyed state in the hashmap backend's old
// layout and operator state, converted to a subtask state with inline handles.
Result<OperatorSubtaskState> DecodeLegacySubtaskState(const Bytes& payload, const std::string& what);

// Framing: magic, version, length, payload, checksum.
Bytes FrameFile(const char magic[8], uint32_t version, const Bytes& payload);
// Checks the frame; Corruption naming `what` (the file) on a bad magic, version,
// length or checksum. `version` (optional) receives the file's version.
Result<Bytes> UnframeFile(const Bytes& file, const char magic[8], uint32_t max_version, const std::string& what,
                          uint32_t* version = nullptr);

inline constexpr char kStateMagic[8] = {'W', 'E', 'I', 'R', 'S', 'T', 'A', 'T'};
inline constexpr char kMetaMagic[8] = {'W', 'E', 'I', 'R', 'M', 'E', 'T', 'A'};

inline uint32_t Crc32cOf(const Bytes& b) { return Crc32c(b.data(), b.size()); }

}  // namespace weir

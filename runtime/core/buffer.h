#pragma once
// What travels through a channel: data buffers (many serialized records) and
// events between them. Events keep their place among the data: a barrier never
// overtakes the records before it in the queue. An unaligned barrier overtakes them
// logically instead: the consuming gate tells its task of it at once, and the task
// persists the data queued before it (see InputGate::StartCapture).

#include <cstdint>
#include <vector>

namespace weir::runtime {

enum class CheckpointKind : uint8_t {
  kCheckpoint,     // periodic or triggered checkpoint
  kSavepoint,      // a user's savepoint; the job continues
  kSyncSavepoint,  // stop-with-savepoint: the job ends after it
};

struct CheckpointBarrier {
  int64_t id = 0;
  int64_t timestamp = 0;
  CheckpointKind kind = CheckpointKind::kCheckpoint;
  // Unaligned: its task persists the in-flight data it overtakes (exactly-once
  // checkpoints only, never savepoints).
  bool unaligned = false;
  // Savepoints: in the state backend's native format (else the canonical one).
  bool native_format = false;
  // A manually triggered FULL checkpoint (Flink's FULL_CHECKPOINT): a backend that
  // checkpoints incrementally writes all of its state again, referencing no file of an
  // earlier checkpoint (later incremental checkpoints may reference the new files).
  bool full = false;
};

struct Buffer {
  enum class Kind : uint8_t {
    kData,            // `data` holds whole serialized records
    kBarrier,         // checkpoint barrier `barrier`
    kCancelBarrier,   // checkpoint `barrier.id` was aborted upstream
    kEndOfData,       // the producer's operators have finished: no more records follow
                      // (barriers may, for the final checkpoint)
    kEndOfPartition,  // the producing subtask has finished; nothing follows
    kWatermark,       // event time: no record with a timestamp <= `watermark` follows
    kIdleness,        // the producer's output became idle (`idle`) or active again
    kHandledBarrier,  // a barrier its task has handled already (unaligned): dropped
  };
  Kind kind = Kind::kData;
  std::vector<uint8_t> data;
  CheckpointBarrier barrier;
  int64_t watermark = 0;
  bool idle = false;

  static Buffer Data(std::vector<uint8_t> bytes) {
    Buffer b;
    b.data = std::move(bytes);
    return b;
  }
  static Buffer Event(Kind kind, CheckpointBarrier barrier = {}) {
    Buffer b;
    b.kind = kind;
    b.barrier = barrier;
    return b;
  }
  static Buffer Watermark(int64_t watermark) {
    Buffer b;
    b.kind = Kind::kWatermark;
    b.watermark = watermark;
    return b;
  }
  static Buffer Idleness(bool idle) {
    Buffer b;
    b.kind = Kind::kIdleness;
    b.idle = idle;
    return b;
  }
  // The event without data (a copy for each channel).
  Buffer EventCopy() const {
    Buffer b = Event(kind, barrier);
    b.watermark = watermark;
    b.idle = idle;
    return b;
  }
  bool is_data() const { return kind == Kind::kData; }
};

}  // namespace weir::runtime

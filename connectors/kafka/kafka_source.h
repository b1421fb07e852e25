#pragma once
// KafkaSource: reads Kafka topics (Flink's KafkaSource). Replayable, so exactly-once
// with checkpoints:
//
// - Splits are partitions. Partition p of topic t belongs to subtask
//   (start(t) + p) mod parallelism, start(t) = ((hash(t) * 31) & 0x7fffffff) mod
//   parallelism with Java's String.hashCode (Flink's KafkaSourceEnumerator), so the
//   assignment is the same in every run and needs no coordination.
// - Every split's next offset (and, bounded, its stopping offset) is operator state
//   (union list state): a restore, at any parallelism, gives each subtask the splits
//   it owns where the checkpoint left them. A partition not in the restored state is
//   new and starts at its earliest offset.
// - Starting offsets (fresh start only): earliest (default), latest, the group's
//   committed offsets (with earliest or latest where none is committed), or the
//   first offset at or after a timestamp. They are resolved to numbers when a
//   partition is first assigned, so a restore never re-resolves them.
// - isolation.level=read_committed by default: records of open or aborted
//   transactions are never read.
// - Offsets are committed to the group (`group_id`) when a checkpoint completes, for
//   monitoring only: the source restores from its own state.
// - Partition discovery: the topics (or the pattern) are listed again every
//   `partition_discovery_interval_ms`; new partitions are read from their start.
// - Bounded mode: each partition stops at the offset that was latest when it was
//   first assigned (kept in the state, so a restore stops at the same place); when
//   all of a subtask's partitions reached theirs, the subtask ends, and the job ends
//   with a final checkpoint. No discovery then.
// - Idleness: a subtask whose partitions have no data (or that owns none) does not
//   block: it returns to its task loop at once (checkpoints go on), waking often
//   while data flows and less often when idle. Bounded, an empty partition is done at
//   once, and a subtask without partitions or with only empty ones ends (its ended
//   channels hold no watermark back downstream). The source emits no watermarks
//   itself: AssignTimestampsAndWatermarks after it makes them per subtask, and its
//   WithIdleness keeps an unbounded subtask without data from holding back event time.
// - Brokers that stay unreachable for `broker_timeout_ms` fail the task (the job
//   restarts per its restart strategy); an unknown topic fails it at once.
//
// One instance per subtask (copied from the job's), used from the task thread only.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/functions.h"
#include "lib/common/status.h"

namespace weir::kafka {

struct KafkaRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp = 0;  // ms since the epoch, -1 when the message has none
  std::string key;
  std::string value;
  WEIR_FIELDS(topic, partition, offset, timestamp, key, value)
};

enum class StartingOffsets { kEarliest, kLatest, kCommitted, kTimestamp };

// "earliest", "latest", "committed" (or "committed-or-latest"), "timestamp:<ms>";
// InvalidArgument naming the value otherwise.
Status ParseStartingOffsets(const std::string& text, StartingOffsets* offsets, StartingOffsets* fallback,
                            int64_t* timestamp_ms);

struct KafkaSourceOptions {
  // "host:port[,host:port...]". Required.
  std::string bootstrap_servers;
  // The topics to read; or `topic_pattern`, a regular expression (ECMAScript) that
  // whole topic names match. One of the two is required.
  std::vector<std::string> topics;
  std::string topic_pattern;
  // The consumer group, for committed starting offsets and for committing offsets
  // back. Default: none (then nothing is committed).
  std::string group_id;
  // Default: kEarliest.
  StartingOffsets starting_offsets = StartingOffsets::kEarliest;
  // With kCommitted: where a partition without a committed offset starts
  // (kEarliest or kLatest). Default: kEarliest.
  StartingOffsets committed_fallback = StartingOffsets::kEarliest;
  // With kTimestamp: ms since the epoch.
  int64_t starting_timestamp_ms = 0;
  // Stop at the offsets that were latest at the start. Default: false.
  bool bounded = false;
  // "read_committed" (default) or "read_uncommitted".
  std::string isolation_level = "read_committed";
  // Commit offsets to the group when a checkpoint completes. Default: true.
  bool commit_offsets_on_checkpoint = true;
  // How often to look for new partitions; 0 disables. Default: 30 s.
  int64_t partition_discovery_interval_ms = 30'000;
  // Records per second of each subtask; 0: no limit (default).
  double max_records_per_second = 0;
  // How long the brokers may stay unreachable before the task fails. Default: 60 s.
  int64_t broker_timeout_ms = 60'000;
  // Further librdkafka consumer properties.
  std::map<std::string, std::string> properties;
};

// Flink's split owner: the subtask (of `parallelism`) that reads `partition` of `topic`.
int KafkaPartitionOwner(const std::string& topic, int32_t partition, int parallelism);

class KafkaSource final : public Source<KafkaRecord>, public CheckpointedFunction, public CheckpointListener {
 public:
  explicit KafkaSource(KafkaSourceOptions options);
  KafkaSource(const KafkaSource& other);  // copies the options only
  ~KafkaSource() override;

  void InitializeState(RuntimeContext& ctx) override;
  void SnapshotState(int64_t checkpoint_id) override;
  void NotifyCheckpointComplete(int64_t checkpoint_id) override;
  void Open(RuntimeContext& ctx) override;
  SourceStatus EmitNext(Collector<KafkaRecord>& out, int max_records, int64_t* wake_at_nanos) override;
  void Close() override;

 private:
  struct Impl;
  // Lists the topics' partitions and adds the ones this subtask owns and lacks.
  void Discover();
  KafkaSourceOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir::kafka

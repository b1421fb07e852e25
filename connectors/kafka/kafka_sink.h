#pragma once
// KafkaSink: writes records to a Kafka topic (Flink's KafkaSink), with a delivery
// guarantee:
//
//   kNone          records are handed to the producer and sent in the background;
//                  nothing waits for them at a checkpoint: a failure can lose what
//                  was buffered and replay can duplicate. Flushed at end of input.
//   kAtLeastOnce   every checkpoint barrier waits until all records sent so far are
//                  acknowledged (flush): nothing is lost; replay after a failure can
//                  duplicate what came after the restored checkpoint.
//   kExactlyOnce   Kafka transactions, two-phase commit with the checkpoints:
//                  records go into a transaction of this subtask whose
//                  transactional.id is "<prefix>-<subtask>-<checkpoint id>" (the id of
//                  the checkpoint after which it was opened, plus one). At the barrier
//                  of checkpoint n the transaction is flushed and recorded in the
//                  checkpoint with its producer id and epoch (pre-commit), and a new
//                  one begins; when checkpoint n completes, every pre-committed
//                  transaction up to n is committed. A restore commits the
//                  transactions its checkpoint recorded (committing one twice is fine)
//                  and aborts every other open transaction of the prefix that this
//                  subtask owns (a transaction of old subtask j belongs to subtask
//                  j mod parallelism, so a rescale leaves none behind). Readers see
//                  the records once the checkpoint completes, with
//                  isolation.level=read_committed. Needs checkpointing, a
//                  transactional id prefix unique to the job on that Kafka cluster,
//                  and a transaction timeout (`transaction_timeout_ms`, at most the
//                  broker's transaction.max.timeout.ms) longer than the checkpoint
//                  interval plus the time a restart takes.
//
// Errors (an unreachable broker, a refused record, a failed commit) throw and fail
// the task, so the job restarts from its latest checkpoint per its restart strategy.
//
// One KafkaSinkWriter per subtask, used from the task thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "lib/api/functions.h"
#include "lib/common/status.h"

namespace weir::kafka {

enum class DeliveryGuarantee { kNone, kAtLeastOnce, kExactlyOnce };

// "none", "at-least-once", "exactly-once" (Flink's NONE, AT_LEAST_ONCE and
// EXACTLY_ONCE too, in any case); InvalidArgument naming the value otherwise.
Result<DeliveryGuarantee> ParseDeliveryGuarantee(const std::string& text);
const char* DeliveryGuaranteeName(DeliveryGuarantee g);

struct KafkaSinkOptions {
  // "host:port[,host:port...]". Required.
  std::string bootstrap_servers;
  // The topic every record goes to. Required.
  std::string topic;
  // Default: kNone (as Flink's).
  DeliveryGuarantee delivery_guarantee = DeliveryGuarantee::kNone;
  // Required with kExactlyOnce: unique per job on the Kafka cluster (a job aborts the
  // open transactions of its prefix when it starts).
  std::string transactional_id_prefix;
  // transaction.timeout.ms of the producers (kExactlyOnce); must exceed the
  // checkpoint interval. Default: 15 min, the broker's default maximum.
  int64_t transaction_timeout_ms = 15 * 60 * 1000;
  // How long to wait for the brokers (connect, flush, commit) before failing the
  // task. Default: 60 s.
  int64_t broker_timeout_ms = 60 * 1000;
  // Further librdkafka producer properties (e.g. "compression.type": "lz4").
  std::map<std::string, std::string> properties;
};

class KafkaSinkWriter {
 public:
  explicit KafkaSinkWriter(KafkaSinkOptions options);
  KafkaSinkWriter(const KafkaSinkWriter& other);  // copies the options only
  ~KafkaSinkWriter();

  void InitializeState(RuntimeContext& ctx);
  void Open(RuntimeContext& ctx);
  // Sends one message; an empty key is a null key.
  void Write(std::string_view key, std::string_view value);
  void PrepareCommit(int64_t checkpoint_id);
  void SnapshotState(int64_t checkpoint_id);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void Finish();
  void Close();

 private:
  struct Impl;
  void BeginTransaction(int64_t checkpoint_id);
  KafkaSinkOptions options_;
  std::unique_ptr<Impl> impl_;
};

// A Sink<T> that writes `value_fn(record)` as the message value (and
// `key_fn(record)` as its key when given).
template <class T>
class KafkaSink final : public Sink<T>, public CheckpointedFunction, public CheckpointListener {
 public:
  using ToString = std::function<std::string(const T&)>;
  KafkaSink(KafkaSinkOptions options, ToString value_fn, ToString key_fn = nullptr)
      : writer_(std::move(options)), value_fn_(std::move(value_fn)), key_fn_(std::move(key_fn)) {}
  void InitializeState(RuntimeContext& ctx) override { writer_.InitializeState(ctx); }
  void Open(RuntimeContext& ctx) override { writer_.Open(ctx); }
  void Invoke(const T& record) override {
    value_ = value_fn_(record);
    if (key_fn_) key_ = key_fn_(record);
    writer_.Write(key_, value_);
  }
  void PrepareCommit(int64_t id) override { writer_.PrepareCommit(id); }
  void SnapshotState(int64_t id) override { writer_.SnapshotState(id); }
  void NotifyCheckpointComplete(int64_t id) override { writer_.NotifyCheckpointComplete(id); }
  void Finish() override { writer_.Finish(); }
  void Close() override { writer_.Close(); }

 private:
  KafkaSinkWriter writer_;
  ToString value_fn_;
  ToString key_fn_;
  std::string key_, value_;
};

}  // namespace weir::kafka

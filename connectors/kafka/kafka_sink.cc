#include "connectors/kafka/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cctype>
#include <future>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

#include "connectors/kafka/kafka_client.h"
#include "connectors/kafka/kafka_transactions.h"
#include "lib/common/logging.h"

namespace weir::kafka {

Result<DeliveryGuarantee> ParseDeliveryGuarantee(const std::string& text) {
  std::string t;
  for (char c : text) t += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "none") return DeliveryGuarantee::kNone;
  if (t == "at-least-once") return DeliveryGuarantee::kAtLeastOnce;
  if (t == "exactly-once") return DeliveryGuarantee::kExactlyOnce;
  return Status::InvalidArgument("delivery guarantee '" + text + "' is not one of exactly-once, at-least-once, none");
}

const char* DeliveryGuaranteeName(DeliveryGuarantee g) {
  switch (g) {
    case DeliveryGuarantee::kNone: return "none";
    case DeliveryGuarantee::kAtLeastOnce: return "at-least-once";
    case DeliveryGuarantee::kExactlyOnce: return "exactly-once";
  }
  return "?";
}

namespace {

// A pre-committed transaction as the checkpoint records it.
struct Committable {
  int32_t subtask = 0;          // the subtask that wrote it
  int64_t checkpoint_id = 0;    // committed when this checkpoint completes
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t epoch = -1;
  WEIR_FIELDS(subtask, checkpoint_id, transactional_id, producer_id, epoch)
};

// One librdkafka producer with its topic handle and delivery bookkeeping.
// Delivery reports run on the thread that polls (the task thread).
struct Producer {
  rd_kafka_t* rk = nullptr;
  rd_kafka_topic_t* rkt = nullptr;
  std::string transactional_id;  // empty: not transactional
  int64_t records = 0;           // sent through this producer (in its open transaction)
  int64_t failed = 0;
  std::string first_error;

  ~Producer() {
    if (rkt) rd_kafka_topic_destroy(rkt);
    if (rk) rd_kafka_destroy(rk);
  }
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  auto* p = static_cast<Producer*>(opaque);
  if (p->failed++ == 0) p->first_error = rd_kafka_err2str(m->err);
}

}  // namespace

struct KafkaSinkWriter::Impl {
  int subtask = 0;
  int parallelism = 1;
  bool checkpointing = false;
  bool finished = false;
  std::unique_ptr<Producer> current;
  // Pre-committed transactions waiting for their checkpoint, oldest first; the
  // producer is kept to commit with (null after a restore).
  struct Pending {
    Committable c;
    std::unique_ptr<Producer> producer;
  };
  std::vector<Pending> pending;
  std::unique_ptr<KafkaTransactionAdmin> admin;
  // The producer for the next transaction, being initialized in the background, and
  // the checkpoint id it is named for.
  std::future<std::unique_ptr<Producer>> warm;
  int64_t warm_id = -1;
  ListState<Committable>* committable_state = nullptr;
  ListState<std::pair<int32_t, int64_t>>* checkpoint_state = nullptr;  // (subtask, last checkpoint)
  int64_t restored_checkpoint = 0;
  std::vector<Committable> restored;  // all subtasks' committables of the restored checkpoint
};

KafkaSinkWriter::KafkaSinkWriter(KafkaSinkOptions options) : options_(std::move(options)) {}
KafkaSinkWriter::KafkaSinkWriter(const KafkaSinkWriter& other) : options_(other.options_) {}
KafkaSinkWriter::~KafkaSinkWriter() { Close(); }

namespace {

[[noreturn]] void Fail(const std::string& what) { throw std::runtime_error("kafka sink: " + what); }

std::unique_ptr<Producer> NewProducer(const KafkaSinkOptions& o, const std::string& transactional_id) {
  auto p = std::make_unique<Producer>();
  p->transactional_id = transactional_id;
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", o.bootstrap_servers},
      {"message.timeout.ms", std::to_string(o.broker_timeout_ms)},
      {"socket.timeout.ms", std::to_string(std::min<int64_t>(o.broker_timeout_ms, 60000))},
  };
  if (!transactional_id.empty()) {
    props["transactional.id"] = transactional_id;
    props["transaction.timeout.ms"] = std::to_string(o.transaction_timeout_ms);
    props["message.timeout.ms"] = std::to_string(std::min(o.broker_timeout_ms, o.transaction_timeout_ms));
  } else if (o.delivery_guarantee == DeliveryGuarantee::kAtLeastOnce) {
    props["enable.idempotence"] = "true";
  }
  for (const auto& [k, v] : o.properties) props[k] = v;
  rd_kafka_conf_t* conf = NewKafkaConf(props, "kafka sink");
  rd_kafka_conf_set_opaque(conf, p.get());
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  char err[512];
  p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!p->rk) {
    rd_kafka_conf_destroy(conf);
    Fail(std::string("cannot create a producer: ") + err);
  }
  p->rkt = rd_kafka_topic_new(p->rk, o.topic.c_str(), nullptr);
  if (!p->rkt) Fail("cannot use topic '" + o.topic + "': " + rd_kafka_err2str(rd_kafka_last_error()));
  return p;
}

// Throws with `what` and the librdkafka error (freed here).
[[noreturn]] void FailWith(const std::string& what, rd_kafka_error_t* error) {
  std::string msg = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  Fail(what + ": " + msg);
}

// Waits until every record sent through `p` is acknowledged; throws when one failed
// or the brokers did not answer in time.
void FlushOrFail(Producer& p, const KafkaSinkOptions& o) {
  rd_kafka_resp_err_t err = rd_kafka_flush(p.rk, static_cast<int>(o.broker_timeout_ms));
  if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) {
    Fail(std::to_string(rd_kafka_outq_len(p.rk)) + " records to topic '" + o.topic + "' were not acknowledged within " +
         std::to_string(o.broker_timeout_ms) + " ms by the Kafka brokers '" + o.bootstrap_servers +
         "' (unreachable or down?)");
  }
  if (p.failed > 0) {
    Fail(std::to_string(p.failed) + " records to topic '" + o.topic + "' on '" + o.bootstrap_servers +
         "' were refused: " + p.first_error);
  }
}

}  // namespace

void KafkaSinkWriter::InitializeState(RuntimeContext& ctx) {
  impl_ = std::make_unique<Impl>();
  auto& impl = *impl_;
  impl.subtask = ctx.IndexOfThisSubtask();
  impl.parallelism = ctx.NumberOfParallelSubtasks();
  auto& store = ctx.GetOperatorStateStore();
  impl.committable_state = &store.GetUnionListState<Committable>("kafka-sink-committables");
  impl.checkpoint_state = &store.GetUnionListState<std::pair<int32_t, int64_t>>("kafka-sink-checkpoints");
  if (ctx.IsRestored()) {
    impl.restored = impl.committable_state->Get();
    for (const auto& [s, cp] : impl.checkpoint_state->Get()) impl.restored_checkpoint = std::max(impl.restored_checkpoint, cp);
    impl.committable_state->Clear();
  }
}

void KafkaSinkWriter::Open(RuntimeContext& ctx) {
  auto& impl = *impl_;
  const auto& o = options_;
  impl.checkpointing = ctx.CheckpointingEnabled();
  if (o.topic.empty()) Fail("no topic given");
  if (auto servers = ParseBootstrapServers(o.bootstrap_servers); !servers.ok()) Fail(servers.status().message());
  if (o.delivery_guarantee != DeliveryGuarantee::kExactlyOnce) {
    impl.current = NewProducer(o, "");
    CheckTopic(impl.current->rk, o.topic, o.bootstrap_servers, o.broker_timeout_ms, "kafka sink", true);
    return;
  }
  if (o.transactional_id_prefix.empty()) {
    Fail("exactly-once needs a transactional id prefix (unique to this job on the Kafka cluster)");
  }
  if (!impl.checkpointing) {
    Fail("exactly-once needs checkpointing: transactions are committed when checkpoints complete; set "
         "execution.checkpointing.interval (e.g. -D execution.checkpointing.interval=1s) or choose "
         "at-least-once");
  }
  int64_t interval = ctx.CheckpointIntervalMillis();
  if (interval > 0 && o.transaction_timeout_ms <= interval) {
    Fail("transaction.timeout.ms (" + std::to_string(o.transaction_timeout_ms) +
         " ms) must be longer than the checkpoint interval (" + std::to_string(interval) +
         " ms), or the broker aborts transactions before their checkpoint commits them; raise the transaction "
         "timeout or shorten execution.checkpointing.interval");
  }
  impl.admin = std::make_unique<KafkaTransactionAdmin>(o.bootstrap_servers, static_cast<int>(o.broker_timeout_ms));

  // 1. Commit what the restored checkpoint pre-committed (the checkpoint completed,
  //    so its transactions must be visible). Transactions of old subtask j are
  //    committed by subtask j mod parallelism.
  std::set<std::string> restored_ids;
  for (const auto& c : impl.restored) {
    restored_ids.insert(c.transactional_id);
    if (c.subtask % impl.parallelism != impl.subtask) continue;
    std::string detail;
    auto outcome = impl.admin->Commit(c.transactional_id, c.producer_id, c.epoch, &detail);
    if (!outcome.ok()) Fail("cannot commit restored transaction '" + c.transactional_id + "': " + outcome.status().message());
    if (*outcome == CommitOutcome::kNotCommittable) {
      LogWarn("kafka sink: restored transaction '{}' (checkpoint {}) could not be committed ({}): it was aborted "
              "or fenced, e.g. because transaction.timeout.ms passed; its records are lost",
              c.transactional_id, c.checkpoint_id, detail);
    } else {
      LogInfo("kafka sink: committed restored transaction '{}' of checkpoint {}", c.transactional_id, c.checkpoint_id);
    }
  }
  // 2. Abort the lingering transactions of this prefix that this subtask owns:
  //    transactions of a run that failed after its latest checkpoint, left open.
  auto open = impl.admin->ListOpen();
  if (!open.ok()) Fail("cannot list open transactions on '" + o.bootstrap_servers + "': " + open.status().message());
  const std::regex own("^" + RegexEscape(o.transactional_id_prefix) + "-([0-9]+)-([0-9]+)$");
  for (const auto& t : *open) {
    std::smatch m;
    if (!std::regex_match(t.transactional_id, m, own)) continue;
    int64_t old_subtask = std::stoll(m[1]);
    if (old_subtask % impl.parallelism != impl.subtask || restored_ids.count(t.transactional_id)) continue;
    Status s = impl.admin->Fence(t.transactional_id, static_cast<int32_t>(o.transaction_timeout_ms));
    if (!s.ok()) Fail("cannot abort lingering transaction '" + t.transactional_id + "': " + s.message());
    LogInfo("kafka sink: aborted lingering transaction '{}' ({})", t.transactional_id, t.state);
  }
  impl.restored.clear();
  BeginTransaction(impl.restored_checkpoint + 1);
  CheckTopic(impl.current->rk, o.topic, o.bootstrap_servers, o.broker_timeout_ms, "kafka sink", true);
}

namespace {

std::string TransactionalId(const KafkaSinkOptions& o, int subtask, int64_t checkpoint_id) {
  return o.transactional_id_prefix + "-" + std::to_string(subtask) + "-" + std::to_string(checkpoint_id);
}

// A transactional producer for `id`, initialized (which fences any earlier producer
// of that id and aborts its open transaction).
std::unique_ptr<Producer> InitProducer(const KafkaSinkOptions& o, const std::string& id, int64_t timeout_ms) {
  auto p = NewProducer(o, id);
  if (rd_kafka_error_t* e = rd_kafka_init_transactions(p->rk, static_cast<int>(timeout_ms))) {
    std::string msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    Fail("cannot initialize transactional id '" + id + "' on '" + o.bootstrap_servers + "': " + msg +
         (msg.find("timeout") != std::string::npos || msg.find("Timed out") != std::string::npos
              ? ""
              : " (transaction.timeout.ms " + std::to_string(o.transaction_timeout_ms) +
                    " ms must not exceed the broker's transaction.max.timeout.ms)"));
  }
  return p;
}

}  // namespace

void KafkaSinkWriter::BeginTransaction(int64_t checkpoint_id) {
  auto& impl = *impl_;
  const auto& o = options_;
  std::unique_ptr<Producer> p;
  if (impl.warm.valid()) {
    // Made ahead for the id this transaction was expected to get; unused otherwise
    // (it has no transaction open, so dropping it leaves nothing behind).
    auto warm = std::move(impl.warm);
    try {
      auto made = warm.get();
      if (impl.warm_id == checkpoint_id) p = std::move(made);
    } catch (const std::exception&) {
      // Made again below, with the full timeout and its error.
    }
  }
  if (!p) p = InitProducer(o, TransactionalId(o, impl.subtask, checkpoint_id), o.broker_timeout_ms);
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(p->rk)) FailWith("cannot begin a transaction", e);
  impl.current = std::move(p);
  if (impl.finished) return;
  // Creating and initializing a producer takes a few round trips to the broker:
  // make the next one while this transaction fills, for the id it will most likely
  // get (the next barrier is usually checkpoint `checkpoint_id`).
  impl.warm_id = checkpoint_id + 1;
  impl.warm = std::async(std::launch::async,
                         [o, id = TransactionalId(o, impl.subtask, impl.warm_id)] {
                           return InitProducer(o, id, std::min<int64_t>(o.broker_timeout_ms, 10'000));
                         });
}

void KafkaSinkWriter::Write(std::string_view key, std::string_view value) {
  Producer& p = *impl_->current;
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        p.rk, RD_KAFKA_V_RKT(p.rkt), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : const_cast<char*>(key.data()), key.size()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      Fail(std::string("cannot send to topic '") + options_.topic + "': " + rd_kafka_err2str(err));
    }
    rd_kafka_poll(p.rk, 10);  // the local queue is full: wait for deliveries
    if (p.failed > 0) break;
  }
  if ((++p.records & 1023) == 0) rd_kafka_poll(p.rk, 0);
  if (p.failed > 0) {
    Fail(std::to_string(p.failed) + " records to topic '" + options_.topic + "' were refused: " + p.first_error);
  }
}

void KafkaSinkWriter::PrepareCommit(int64_t checkpoint_id) {
  auto& impl = *impl_;
  if (!impl.current) return;
  switch (options_.delivery_guarantee) {
    case DeliveryGuarantee::kNone:
      rd_kafka_poll(impl.current->rk, 0);
      return;
    case DeliveryGuarantee::kAtLeastOnce:
      FlushOrFail(*impl.current, options_);
      return;
    case DeliveryGuarantee::kExactlyOnce:
      break;
  }
  // An empty transaction is not recorded: it goes on into the next checkpoint.
  if (impl.current->records == 0) return;
  FlushOrFail(*impl.current, options_);
  auto d = impl.admin->Describe(impl.current->transactional_id);
  if (!d.ok()) Fail("cannot pre-commit transaction '" + impl.current->transactional_id + "': " + d.status().message());
  if (d->state != "Ongoing") {
    Fail("transaction '" + impl.current->transactional_id + "' is " + d->state +
         " at the broker, not Ongoing: it was aborted (timed out or fenced by another producer with this id)");
  }
  Impl::Pending pending;
  pending.c.subtask = impl.subtask;
  pending.c.checkpoint_id = checkpoint_id;
  pending.c.transactional_id = impl.current->transactional_id;
  pending.c.producer_id = d->producer_id;
  pending.c.epoch = d->producer_epoch;
  pending.producer = std::move(impl.current);
  impl.pending.push_back(std::move(pending));
  if (!impl.finished) BeginTransaction(checkpoint_id + 1);
}

void KafkaSinkWriter::SnapshotState(int64_t checkpoint_id) {
  auto& impl = *impl_;
  if (options_.delivery_guarantee != DeliveryGuarantee::kExactlyOnce) return;
  std::vector<Committable> list;
  for (const auto& p : impl.pending) list.push_back(p.c);
  impl.committable_state->Update(list);
  impl.checkpoint_state->Update({{impl.subtask, checkpoint_id}});
}

void KafkaSinkWriter::NotifyCheckpointComplete(int64_t checkpoint_id) {
  auto& impl = *impl_;
  // Subsuming: completing n commits every transaction pre-committed up to n.
  size_t done = 0;
  for (; done < impl.pending.size() && impl.pending[done].c.checkpoint_id <= checkpoint_id; ++done) {
    auto& p = impl.pending[done];
    if (p.producer) {
      rd_kafka_error_t* e = rd_kafka_commit_transaction(p.producer->rk, static_cast<int>(options_.broker_timeout_ms));
      if (e) FailWith("cannot commit transaction '" + p.c.transactional_id + "'", e);
    } else {
      std::string detail;
      auto outcome = impl.admin->Commit(p.c.transactional_id, p.c.producer_id, p.c.epoch, &detail);
      if (!outcome.ok()) Fail("cannot commit transaction '" + p.c.transactional_id + "': " + outcome.status().message());
    }
  }
  impl.pending.erase(impl.pending.begin(), impl.pending.begin() + static_cast<long>(done));
}

void KafkaSinkWriter::Finish() {
  auto& impl = *impl_;
  impl.finished = true;
  if (!impl.current) return;
  // Exactly-once: the final checkpoint pre-commits and commits the last transaction.
  if (options_.delivery_guarantee != DeliveryGuarantee::kExactlyOnce) FlushOrFail(*impl.current, options_);
}

void KafkaSinkWriter::Close() {
  if (!impl_) return;
  auto& impl = *impl_;
  if (impl.current && !impl.current->transactional_id.empty() && impl.current->records > 0) {
    // Not pre-committed: nothing can ever commit it. Abort it now so that
    // read_committed readers are not held up; a failure here is harmless (the
    // next start aborts it).
    if (rd_kafka_error_t* e = rd_kafka_abort_transaction(impl.current->rk, 5000)) rd_kafka_error_destroy(e);
  }
  // Pre-committed transactions stay open at the broker: the checkpoint that recorded
  // them may complete or be restored, and then they are committed.
  impl.current.reset();
  impl.pending.clear();
  impl.admin.reset();
  if (impl.warm.valid()) {
    try {
      impl.warm.get();
    } catch (const std::exception&) {
    }
  }
}

}  // namespace weir::kafka

#include "connectors/kafka/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <unordered_map>

#include "connectors/kafka/kafka_client.h"
#include "connectors/kafka/kafka_transactions.h"
#include "lib/common/logging.h"
#include "lib/common/time_util.h"

namespace weir::kafka {

Status ParseStartingOffsets(const std::string& text, StartingOffsets* offsets, StartingOffsets* fallback,
                            int64_t* timestamp_ms) {
  *fallback = StartingOffsets::kEarliest;
  if (text == "earliest") {
    *offsets = StartingOffsets::kEarliest;
  } else if (text == "latest") {
    *offsets = StartingOffsets::kLatest;
  } else if (text == "committed" || text == "committed-or-earliest") {
    *offsets = StartingOffsets::kCommitted;
  } else if (text == "committed-or-latest") {
    *offsets = StartingOffsets::kCommitted;
    *fallback = StartingOffsets::kLatest;
  } else if (text.starts_with("timestamp:")) {
    *offsets = StartingOffsets::kTimestamp;
    try {
      size_t used = 0;
      std::string ms = text.substr(10);
      *timestamp_ms = std::stoll(ms, &used);
      if (used != ms.size() || *timestamp_ms < 0) throw std::invalid_argument(ms);
    } catch (const std::exception&) {
      return Status::InvalidArgument("starting offsets '" + text + "': the timestamp must be milliseconds since the epoch");
    }
  } else {
    return Status::InvalidArgument("starting offsets '" + text +
                                   "' is not one of earliest, latest, committed, committed-or-latest, timestamp:<ms>");
  }
  return Status::OK();
}

int KafkaPartitionOwner(const std::string& topic, int32_t partition, int parallelism) {
  int32_t h = 0;  // Java's String.hashCode (over UTF-16 units; topic names are ASCII)
  for (unsigned char c : topic) h = static_cast<int32_t>(static_cast<uint32_t>(h) * 31u + c);
  int start = static_cast<int>((static_cast<uint32_t>(h) * 31u & 0x7fffffffu) % static_cast<uint32_t>(parallelism));
  return (start + partition) % parallelism;
}

namespace {

[[noreturn]] void Fail(const std::string& what) { throw std::runtime_error("kafka source: " + what); }

// A partition's position as the checkpoint records it.
struct SplitState {
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = 0;    // the next record to read
  int64_t stop_offset = -1;   // bounded: stop before this offset; -1 unbounded
  WEIR_FIELDS(topic, partition, next_offset, stop_offset)
};

struct Split {
  SplitState s;
  bool done = false;
};

// Starts fetching `splits` (those not done) from their next offsets.
void Assign(rd_kafka_t* rk, const std::vector<Split*>& splits) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(splits.size()));
  for (const Split* sp : splits) {
    if (sp->done) continue;
    rd_kafka_topic_partition_list_add(list, sp->s.topic.c_str(), sp->s.partition)->offset = sp->s.next_offset;
  }
  rd_kafka_error_t* e = list->cnt > 0 ? rd_kafka_incremental_assign(rk, list) : nullptr;
  rd_kafka_topic_partition_list_destroy(list);
  if (e) {
    std::string msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    Fail("cannot assign partitions: " + msg);
  }
}

// A bounded split that reached its stopping offset: fetch no more of it.
void Pause(rd_kafka_t* rk, Split& sp) {
  sp.done = true;
  rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, sp.s.topic.c_str(), sp.s.partition);
  rd_kafka_pause_partitions(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
}

}  // namespace

struct KafkaSource::Impl {
  int subtask = 0;
  int parallelism = 1;
  bool restored = false;
  rd_kafka_t* rk = nullptr;
  std::vector<Split> splits;
  std::map<std::pair<std::string, int32_t>, size_t> index;  // (topic, partition) -> splits index
  std::unordered_map<const void*, std::string> topic_names;
  ListState<SplitState>* state = nullptr;
  std::vector<SplitState> restored_splits;  // all subtasks' (union state)
  std::map<int64_t, std::vector<SplitState>> to_commit;  // checkpoint id -> positions
  int64_t next_discovery_nanos = 0;
  int64_t brokers_down_since = -1;
  int64_t start_nanos = 0;
  int64_t emitted = 0;
  int64_t idle_polls = 0;
  std::unique_ptr<std::regex> pattern;
  std::string last_broker_error;
};

KafkaSource::KafkaSource(KafkaSourceOptions options) : options_(std::move(options)) {}
KafkaSource::KafkaSource(const KafkaSource& other) : options_(other.options_) {}
KafkaSource::~KafkaSource() { Close(); }

void KafkaSource::InitializeState(RuntimeContext& ctx) {
  impl_ = std::make_unique<Impl>();
  auto& impl = *impl_;
  impl.subtask = ctx.IndexOfThisSubtask();
  impl.parallelism = ctx.NumberOfParallelSubtasks();
  impl.state = &ctx.GetOperatorStateStore().GetUnionListState<SplitState>("kafka-source-splits");
  if (ctx.IsRestored()) {
    impl.restored = true;
    impl.restored_splits = impl.state->Get();
  }
}

void KafkaSource::SnapshotState(int64_t checkpoint_id) {
  auto& impl = *impl_;
  std::vector<SplitState> list;
  for (const auto& s : impl.splits) list.push_back(s.s);
  impl.state->Update(list);
  if (!options_.group_id.empty() && options_.commit_offsets_on_checkpoint) impl.to_commit[checkpoint_id] = list;
}

void KafkaSource::NotifyCheckpointComplete(int64_t checkpoint_id) {
  auto& impl = *impl_;
  auto it = impl.to_commit.find(checkpoint_id);
  if (it == impl.to_commit.end() || !impl.rk) {
    impl.to_commit.erase(impl.to_commit.begin(), impl.to_commit.upper_bound(checkpoint_id));
    return;
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(it->second.size()));
  for (const auto& s : it->second) {
    rd_kafka_topic_partition_list_add(list, s.topic.c_str(), s.partition)->offset = s.next_offset;
  }
  // For monitoring only (the source restores from its state): asynchronous, and a
  // failure is only logged.
  if (list->cnt > 0) {
    rd_kafka_resp_err_t err = rd_kafka_commit(impl.rk, list, 1);
    if (err) LogDebug("kafka source: committing offsets of checkpoint {} failed: {}", checkpoint_id, rd_kafka_err2str(err));
  }
  rd_kafka_topic_partition_list_destroy(list);
  impl.to_commit.erase(impl.to_commit.begin(), impl.to_commit.upper_bound(checkpoint_id));
}

namespace {

// Resolves the starting (and, bounded, stopping) offsets of new partitions.
void ResolveOffsets(rd_kafka_t* rk, const KafkaSourceOptions& o, bool use_configured, std::vector<Split*>& fresh) {
  const int timeout = static_cast<int>(o.broker_timeout_ms);
  for (Split* sp : fresh) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, sp->s.topic.c_str(), sp->s.partition, &low, &high, timeout);
    if (err) {
      Fail("cannot read the offsets of '" + sp->s.topic + "' partition " + std::to_string(sp->s.partition) + " on '" +
           o.bootstrap_servers + "': " + rd_kafka_err2str(err));
    }
    if (o.bounded) sp->s.stop_offset = high;
    StartingOffsets how = use_configured ? o.starting_offsets : StartingOffsets::kEarliest;
    switch (how) {
      case StartingOffsets::kEarliest: sp->s.next_offset = low; break;
      case StartingOffsets::kLatest: sp->s.next_offset = high; break;
      case StartingOffsets::kCommitted: {
        rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, sp->s.topic.c_str(), sp->s.partition);
        err = rd_kafka_committed(rk, l, timeout);
        int64_t committed = err ? RD_KAFKA_OFFSET_INVALID : l->elems[0].offset;
        rd_kafka_topic_partition_list_destroy(l);
        if (err) Fail("cannot read the committed offsets of group '" + o.group_id + "': " + rd_kafka_err2str(err));
        if (committed >= 0) {
          sp->s.next_offset = committed;
        } else {
          sp->s.next_offset = o.committed_fallback == StartingOffsets::kLatest ? high : low;
        }
        break;
      }
      case StartingOffsets::kTimestamp: {
        rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, sp->s.topic.c_str(), sp->s.partition)->offset = o.starting_timestamp_ms;
        err = rd_kafka_offsets_for_times(rk, l, timeout);
        int64_t at = err ? -1 : l->elems[0].offset;
        rd_kafka_topic_partition_list_destroy(l);
        if (err) Fail("cannot look up offsets for a timestamp: " + std::string(rd_kafka_err2str(err)));
        sp->s.next_offset = at >= 0 ? at : high;  // none at or after it: from the end
        break;
      }
    }
    if (sp->s.next_offset < low) sp->s.next_offset = low;
    if (o.bounded && sp->s.next_offset >= sp->s.stop_offset) sp->done = true;
  }
}

}  // namespace

void KafkaSource::Open(RuntimeContext&) {
  auto& impl = *impl_;
  const auto& o = options_;
  if (o.topics.empty() && o.topic_pattern.empty()) Fail("no topics or topic pattern given");
  if (auto servers = ParseBootstrapServers(o.bootstrap_servers); !servers.ok()) Fail(servers.status().message());
  if (!o.topic_pattern.empty()) {
    try {
      impl.pattern = std::make_unique<std::regex>(o.topic_pattern);
    } catch (const std::regex_error& e) {
      Fail("topic pattern '" + o.topic_pattern + "' is not a valid regular expression: " + e.what());
    }
  }
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", o.bootstrap_servers},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"enable.partition.eof", "true"},
      {"auto.offset.reset", "earliest"},
      {"isolation.level", o.isolation_level},
      {"allow.auto.create.topics", "false"},
      {"fetch.wait.max.ms", "50"},
  };
  // librdkafka wants a group for assign(); without one of the user's, a name that
  // commits nothing (offsets are committed only to the user's group).
  props["group.id"] = o.group_id.empty() ? "weir-kafka-source" : o.group_id;
  for (const auto& [k, v] : o.properties) props[k] = v;
  rd_kafka_conf_t* conf = NewKafkaConf(props, "kafka source");
  char err[512];
  impl.rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!impl.rk) {
    rd_kafka_conf_destroy(conf);
    Fail(std::string("cannot create a consumer: ") + err);
  }
  // Restored splits this subtask owns keep their positions.
  for (const auto& s : impl.restored_splits) {
    if (KafkaPartitionOwner(s.topic, s.partition, impl.parallelism) != impl.subtask) continue;
    if (impl.index.count({s.topic, s.partition})) continue;
    Split sp;
    sp.s = s;
    sp.done = s.stop_offset >= 0 && s.next_offset >= s.stop_offset;
    impl.index[{s.topic, s.partition}] = impl.splits.size();
    impl.splits.push_back(sp);
  }
  std::vector<SplitState>().swap(impl.restored_splits);
  if (o.bounded) {
    // Restored from an unbounded run: stop at what is latest now.
    for (auto& sp : impl.splits) {
      if (sp.s.stop_offset >= 0) continue;
      int64_t low = 0, high = 0;
      rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(impl.rk, sp.s.topic.c_str(), sp.s.partition, &low,
                                                                 &high, static_cast<int>(o.broker_timeout_ms));
      if (err) Fail("cannot read the offsets of '" + sp.s.topic + "' on '" + o.bootstrap_servers + "': " + rd_kafka_err2str(err));
      sp.s.stop_offset = high;
      sp.done = sp.s.next_offset >= high;
    }
  }
  // A bounded job that restored its splits reads exactly those: no discovery.
  if (!(o.bounded && impl.restored)) Discover();
  std::vector<Split*> all;
  for (auto& sp : impl.splits) all.push_back(&sp);
  Assign(impl.rk, all);
  impl.start_nanos = MonotonicNanos();
  if (o.partition_discovery_interval_ms > 0 && !o.bounded) {
    impl.next_discovery_nanos = impl.start_nanos + o.partition_discovery_interval_ms * 1'000'000;
  }
}

void KafkaSource::Discover() {
  auto& impl = *impl_;
  const auto& o = options_;
  std::vector<std::pair<std::string, std::vector<int32_t>>> topics;
  if (impl.pattern) {
    for (auto& t : ListTopics(impl.rk, o.bootstrap_servers, o.broker_timeout_ms, "kafka source")) {
      if (std::regex_match(t.first, *impl.pattern)) topics.push_back(std::move(t));
    }
  } else {
    for (const auto& t : o.topics) {
      topics.emplace_back(t, CheckTopic(impl.rk, t, o.bootstrap_servers, o.broker_timeout_ms, "kafka source", false));
    }
  }
  // The first discovery of a fresh job uses the configured starting offsets; later
  // ones (and partitions a restored checkpoint did not know) start at the earliest.
  const bool use_configured = !impl.restored && impl.next_discovery_nanos == 0;
  std::vector<Split*> fresh;
  size_t before = impl.splits.size();
  for (const auto& [topic, partitions] : topics) {
    for (int32_t p : partitions) {
      if (KafkaPartitionOwner(topic, p, impl.parallelism) != impl.subtask) continue;
      if (impl.index.count({topic, p})) continue;
      Split sp;
      sp.s.topic = topic;
      sp.s.partition = p;
      impl.index[{topic, p}] = impl.splits.size();
      impl.splits.push_back(sp);
    }
  }
  for (size_t i = before; i < impl.splits.size(); ++i) fresh.push_back(&impl.splits[i]);
  ResolveOffsets(impl.rk, o, use_configured, fresh);
  if (before > 0 && !fresh.empty()) {
    // Found after the start: assign now (at Open, the caller assigns everything).
    for (Split* sp : fresh) {
      LogInfo("kafka source: subtask {} discovered partition {} of topic '{}'", impl.subtask, sp->s.partition, sp->s.topic);
    }
    Assign(impl.rk, fresh);
  }
}

SourceStatus KafkaSource::EmitNext(Collector<KafkaRecord>& out, int max_records, int64_t* wake_at_nanos) {
  auto& impl = *impl_;
  const auto& o = options_;
  int64_t now = MonotonicNanos();
  if (impl.next_discovery_nanos > 0 && now >= impl.next_discovery_nanos) {
    size_t before = impl.splits.size();
    impl.next_discovery_nanos = now + o.partition_discovery_interval_ms * 1'000'000;
    Discover();
    if (before == 0 && !impl.splits.empty()) {
      // Open assigned nothing: assign what was found now.
      std::vector<Split*> all;
      for (auto& sp : impl.splits) all.push_back(&sp);
      Assign(impl.rk, all);
    }
  }
  if (o.bounded && std::all_of(impl.splits.begin(), impl.splits.end(), [](const Split& s) { return s.done; })) {
    return SourceStatus::kEndOfInput;
  }
  int budget = max_records;
  if (o.max_records_per_second > 0) {
    int64_t allowed = static_cast<int64_t>((now - impl.start_nanos) * 1e-9 * o.max_records_per_second) + 1;
    if (impl.emitted >= allowed) {
      *wake_at_nanos = impl.start_nanos + static_cast<int64_t>(impl.emitted / o.max_records_per_second * 1e9);
      return SourceStatus::kNothingAvailable;
    }
    budget = static_cast<int>(std::min<int64_t>(budget, allowed - impl.emitted));
  }
  int n = 0;
  while (n < budget) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(impl.rk, 0);
    if (!m) break;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      impl.brokers_down_since = -1;
      auto it = impl.index.find({rd_kafka_topic_name(m->rkt), m->partition});
      if (it != impl.index.end()) {
        Split& sp = impl.splits[it->second];
        // Everything before the end was delivered: skip transaction markers and
        // aborted records in the position too.
        if (m->offset > sp.s.next_offset) sp.s.next_offset = m->offset;
        if (sp.s.stop_offset >= 0 && sp.s.next_offset >= sp.s.stop_offset && !sp.done) Pause(impl.rk, sp);
      }
      rd_kafka_message_destroy(m);
      continue;
    }
    if (m->err) {
      std::string what = rd_kafka_message_errstr(m);
      rd_kafka_resp_err_t err = m->err;
      rd_kafka_message_destroy(m);
      if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
          err == RD_KAFKA_RESP_ERR__RESOLVE) {
        if (impl.brokers_down_since < 0) impl.brokers_down_since = now;
        impl.last_broker_error = what;
        continue;
      }
      if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
          err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
        Fail("a topic or partition went away on '" + o.bootstrap_servers + "': " + what);
      }
      LogWarn("kafka source: {}", what);
      continue;
    }
    impl.brokers_down_since = -1;
    const char* topic = rd_kafka_topic_name(m->rkt);
    auto it = impl.index.find({topic, m->partition});
    if (it == impl.index.end()) {
      rd_kafka_message_destroy(m);
      continue;
    }
    Split& sp = impl.splits[it->second];
    if (sp.done || m->offset < sp.s.next_offset) {  // paused or replayed by a fetch
      rd_kafka_message_destroy(m);
      continue;
    }
    if (sp.s.stop_offset >= 0 && m->offset >= sp.s.stop_offset) {
      Pause(impl.rk, sp);
      rd_kafka_message_destroy(m);
      continue;
    }
    KafkaRecord r;
    r.topic = sp.s.topic;
    r.partition = m->partition;
    r.offset = m->offset;
    rd_kafka_timestamp_type_t tstype;
    r.timestamp = rd_kafka_message_timestamp(m, &tstype);
    if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
    if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
    sp.s.next_offset = m->offset + 1;
    rd_kafka_message_destroy(m);
    out.Collect(r);
    ++n;
    if (sp.s.stop_offset >= 0 && sp.s.next_offset >= sp.s.stop_offset) Pause(impl.rk, sp);
  }
  impl.emitted += n;
  if (impl.brokers_down_since >= 0 && now - impl.brokers_down_since > o.broker_timeout_ms * 1'000'000) {
    Fail("Kafka brokers '" + o.bootstrap_servers + "' unreachable for " + std::to_string(o.broker_timeout_ms) +
         " ms: " + impl.last_broker_error);
  }
  if (n > 0) {
    impl.idle_polls = 0;
    return SourceStatus::kMoreAvailable;
  }
  if (o.bounded && std::all_of(impl.splits.begin(), impl.splits.end(), [](const Split& s) { return s.done; })) {
    return SourceStatus::kEndOfInput;
  }
  // Nothing now: back to the task loop (barriers go on); wake soon while data was
  // flowing lately, less often when idle.
  ++impl.idle_polls;
  *wake_at_nanos = now + (impl.idle_polls < 1000 ? 1'000'000 : 20'000'000);
  return SourceStatus::kNothingAvailable;
}

void KafkaSource::Close() {
  if (!impl_ || !impl_->rk) return;
  rd_kafka_consumer_close(impl_->rk);
  rd_kafka_destroy(impl_->rk);
  impl_->rk = nullptr;
}

}  // namespace weir::kafka

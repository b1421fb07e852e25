// kafka_number_sum: Kafka -> weir -> Kafka, end-to-end exactly-once. Reads numbers (one
// decimal number per record value) from --input-topic (or from every topic whose whole
// name matches --topic-pattern), keys them by parity, keeps the running sum per parity,
// and writes "<n>,<odd|even>,<running sum>" records (keyed by the parity) to
// --output-topic.
//
//   weir run -D execution.checkpointing.interval=1s build/examples/kafka_number_sum.so
//       --bootstrap-servers 127.0.0.1:9092 (--input-topic numbers | --topic-pattern REGEX)
//       --output-topic sums --transactional-id-prefix number-sum [--group-id G]
//       [--delivery-guarantee exactly-once|at-least-once|none] [--bounded] [--rate R]
//       [--starting-offsets earliest|latest|committed|timestamp:<ms>]
//       [--transaction-timeout-ms T] [--broker-timeout-ms T] [--partition-discovery-ms T]
//       [--fail-at n1,n2,...]
//
// --topic-pattern is an ECMAScript regular expression that whole topic names match
// (Flink's setTopicPattern), e.g. 'numbers-[0-9]+'; it must not match --output-topic.
// Unbounded, topics that come to match later are found by partition discovery.
// --bounded reads what the input holds at the start and then finishes; --rate limits
// each source subtask to R records per second (0: no limit). Read the output with
// isolation.level=read_committed to see it exactly once. --fail-at makes the summing
// operator throw the first time, in this process, that it sees each listed number.

#include <regex>
#include <stdexcept>
#include <string>

#include "connectors/kafka/kafka_sink.h"
#include "connectors/kafka/kafka_source.h"
#include "connectors/kafka/kafka_transactions.h"
#include "examples/parity_sum.h"
#include "lib/api/weir.h"

namespace {

using weir::kafka::KafkaRecord;

int64_t ParseNumber(const KafkaRecord& r) {
  try {
    size_t used = 0;
    int64_t n = std::stoll(r.value, &used);
    if (used == r.value.size()) return n;
  } catch (const std::exception&) {
  }
  throw std::runtime_error("record " + r.topic + "/" + std::to_string(r.partition) + "@" + std::to_string(r.offset) +
                           " is not a decimal number: '" + r.value.substr(0, 40) + "'");
}

int64_t PositiveArg(const weir::JobArgs& args, const std::string& name, int64_t fallback) {
  int64_t v = args.GetInt(name, fallback);
  if (v <= 0) throw weir::JobArgumentError("--" + name + " must be a positive number of milliseconds");
  return v;
}

void KafkaNumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"bootstrap-servers", "input-topic", "topic-pattern", "output-topic", "group-id",
                   "transactional-id-prefix", "delivery-guarantee", "bounded", "rate", "starting-offsets",
                   "transaction-timeout-ms", "broker-timeout-ms", "partition-discovery-ms", "fail-at"});
  const std::string topic = args.Get("input-topic");
  const std::string pattern = args.Get("topic-pattern");
  if (!topic.empty() && !pattern.empty()) {
    throw weir::JobArgumentError("--input-topic and --topic-pattern exclude each other: give one of them");
  }
  if (topic.empty() && pattern.empty()) {
    throw weir::JobArgumentError("--input-topic is required (or --topic-pattern REGEX for every topic it matches)");
  }
  for (const char* required : {"bootstrap-servers", "output-topic"}) {
    if (args.Get(required).empty()) throw weir::JobArgumentError(std::string("--") + required + " is required");
  }
  if (!pattern.empty()) {
    std::regex re;
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      throw weir::JobArgumentError("--topic-pattern '" + pattern + "' is not a valid regular expression (" +
                                   e.what() + "); give an ECMAScript regex that whole topic names match, " +
                                   "e.g. 'numbers-[0-9]+'");
    }
    // The job would read its own output (and fail on its first "n,parity,sum" record).
    if (std::regex_match(args.Get("output-topic"), re)) {
      throw weir::JobArgumentError("--topic-pattern '" + pattern + "' matches the output topic '" +
                                   args.Get("output-topic") + "': narrow the pattern or rename --output-topic");
    }
  }
  if (auto servers = weir::kafka::ParseBootstrapServers(args.Get("bootstrap-servers")); !servers.ok()) {
    throw weir::JobArgumentError("--bootstrap-servers: " + servers.status().message());
  }
  auto guarantee = weir::kafka::ParseDeliveryGuarantee(args.Get("delivery-guarantee", "exactly-once"));
  if (!guarantee.ok()) throw weir::JobArgumentError("--delivery-guarantee: " + guarantee.status().message());
  if (*guarantee == weir::kafka::DeliveryGuarantee::kExactlyOnce && args.Get("transactional-id-prefix").empty()) {
    throw weir::JobArgumentError(
        "--delivery-guarantee exactly-once needs --transactional-id-prefix (unique to this job on the Kafka cluster)");
  }
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  Failures().Parse(args.Get("fail-at"));
  bool may_fail = !Failures().empty();

  weir::kafka::KafkaSourceOptions in;
  in.bootstrap_servers = args.Get("bootstrap-servers");
  if (pattern.empty()) {
    in.topics = {topic};
  } else {
    in.topic_pattern = pattern;
  }
  in.group_id = args.Get("group-id");
  in.bounded = args.Has("bounded");
  in.max_records_per_second = rate;
  in.broker_timeout_ms = PositiveArg(args, "broker-timeout-ms", in.broker_timeout_ms);
  in.partition_discovery_interval_ms = PositiveArg(args, "partition-discovery-ms", in.partition_discovery_interval_ms);
  auto st = weir::kafka::ParseStartingOffsets(args.Get("starting-offsets", "earliest"), &in.starting_offsets,
                                              &in.committed_fallback, &in.starting_timestamp_ms);
  if (!st.ok()) throw weir::JobArgumentError("--starting-offsets: " + st.message());
  if (in.starting_offsets == weir::kafka::StartingOffsets::kCommitted && in.group_id.empty()) {
    throw weir::JobArgumentError("--starting-offsets committed needs --group-id");
  }

  weir::kafka::KafkaSinkOptions out;
  out.bootstrap_servers = in.bootstrap_servers;
  out.topic = args.Get("output-topic");
  out.delivery_guarantee = *guarantee;
  out.transactional_id_prefix = args.Get("transactional-id-prefix");
  out.transaction_timeout_ms = PositiveArg(args, "transaction-timeout-ms", out.transaction_timeout_ms);
  out.broker_timeout_ms = in.broker_timeout_ms;

  env.SetJobName("Kafka Number Sum");
  env.AddSource<KafkaRecord>(weir::kafka::KafkaSource(in), "Kafka Source")
      .Uid("kafka-source")
      .Map(ParseNumber)
      .Name("Parse")
      .Uid("parse")
      .KeyBy([](int64_t n) { return n % 2; })
      .Process(ParitySum(may_fail, 2))
      .Name("Parity Sum")
      .Uid("parity-sum")
      .Map(FormatSumLine)
      .Name("Format")
      .Uid("format")
      .AddSink(weir::kafka::KafkaSink<std::string>(
                   out, [](const std::string& line) { return line; },
                   [](const std::string& line) { return line.find(",odd,") != std::string::npos ? "odd" : "even"; }),
               "Kafka Sink")
      .Uid("kafka-sink");
}

}  // namespace

WEIR_JOB("KafkaNumberSum", KafkaNumberSum,
         "Sums numbers read from Kafka per parity and writes the running sums to Kafka, exactly once");

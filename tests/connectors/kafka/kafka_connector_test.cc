// The Kafka connector's parts that need no broker: option parsing and the split
// assignment. Against a real broker: tests/e2e/kafka_exactly_once.sh.

#include <catch2/catch.hpp>

#include <regex>

#include "connectors/kafka/kafka_client.h"
#include "connectors/kafka/kafka_sink.h"
#include "connectors/kafka/kafka_source.h"
#include "connectors/kafka/kafka_transactions.h"

using namespace weir::kafka;

TEST_CASE("kafka source: partition owners match Flink's KafkaSourceEnumerator", "[kafka]") {
  // Expected values computed with Java: ((topic.hashCode() * 31) & 0x7FFFFFFF) % p,
  // then (start + partition) % p, for partitions 0..4.
  struct Case {
    const char* topic;
    int parallelism;
    int owners[5];
  } cases[] = {
      {"numbers", 3, {0, 1, 2, 0, 1}},
      {"numbers", 7, {2, 3, 4, 5, 6}},
      {"sums", 7, {3, 4, 5, 6, 0}},
      {"in3", 2, {0, 1, 0, 1, 0}},
      {"in3", 3, {2, 0, 1, 2, 0}},
      {"a-much-longer-topic-name.with.dots_and_underscores", 2, {1, 0, 1, 0, 1}},
      {"a-much-longer-topic-name.with.dots_and_underscores", 3, {2, 0, 1, 2, 0}},
      {"a-much-longer-topic-name.with.dots_and_underscores", 7, {2, 3, 4, 5, 6}},
  };
  for (const auto& c : cases) {
    for (int p = 0; p < 5; ++p) {
      INFO(c.topic << " p=" << c.parallelism << " partition " << p);
      CHECK(KafkaPartitionOwner(c.topic, p, c.parallelism) == c.owners[p]);
    }
  }
}

TEST_CASE("kafka source: every partition has exactly one owner at any parallelism", "[kafka]") {
  for (int parallelism : {1, 2, 3, 5, 128}) {
    for (int p = 0; p < 50; ++p) {
      int owner = KafkaPartitionOwner("topic", p, parallelism);
      CHECK(owner >= 0);
      CHECK(owner < parallelism);
    }
  }
}

TEST_CASE("kafka source: starting offsets are parsed or refused by name", "[kafka]") {
  StartingOffsets o{}, fallback{};
  int64_t ts = 0;
  REQUIRE(ParseStartingOffsets("earliest", &o, &fallback, &ts).ok());
  CHECK(o == StartingOffsets::kEarliest);
  REQUIRE(ParseStartingOffsets("latest", &o, &fallback, &ts).ok());
  CHECK(o == StartingOffsets::kLatest);
  REQUIRE(ParseStartingOffsets("committed", &o, &fallback, &ts).ok());
  CHECK(o == StartingOffsets::kCommitted);
  CHECK(fallback == StartingOffsets::kEarliest);
  REQUIRE(ParseStartingOffsets("committed-or-latest", &o, &fallback, &ts).ok());
  CHECK(fallback == StartingOffsets::kLatest);
  REQUIRE(ParseStartingOffsets("timestamp:1700000000000", &o, &fallback, &ts).ok());
  CHECK(o == StartingOffsets::kTimestamp);
  CHECK(ts == 1700000000000);
  auto bad = ParseStartingOffsets("newest", &o, &fallback, &ts);
  CHECK(bad.IsInvalidArgument());
  CHECK_THAT(bad.message(), Catch::Contains("'newest'"));
  CHECK(ParseStartingOffsets("timestamp:yesterday", &o, &fallback, &ts).IsInvalidArgument());
  CHECK(ParseStartingOffsets("timestamp:-5", &o, &fallback, &ts).IsInvalidArgument());
}

TEST_CASE("kafka sink: delivery guarantees in weir's and Flink's spelling", "[kafka]") {
  struct Case {
    const char* text;
    DeliveryGuarantee expected;
  } cases[] = {
      {"none", DeliveryGuarantee::kNone},
      {"NONE", DeliveryGuarantee::kNone},
      {"at-least-once", DeliveryGuarantee::kAtLeastOnce},
      {"AT_LEAST_ONCE", DeliveryGuarantee::kAtLeastOnce},
      {"exactly-once", DeliveryGuarantee::kExactlyOnce},
      {"EXACTLY_ONCE", DeliveryGuarantee::kExactlyOnce},
  };
  for (const auto& c : cases) {
    auto g = ParseDeliveryGuarantee(c.text);
    REQUIRE(g.ok());
    CHECK(*g == c.expected);
    CHECK(ParseDeliveryGuarantee(DeliveryGuaranteeName(*g)).value() == c.expected);
  }
  auto bad = ParseDeliveryGuarantee("twice");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'twice'"));
}

TEST_CASE("kafka: bootstrap servers are host:port lists", "[kafka]") {
  auto ok = ParseBootstrapServers("127.0.0.1:9092, broker2:19092,[::1]:9093");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 3);
  CHECK((*ok)[0] == std::make_pair(std::string("127.0.0.1"), 9092));
  CHECK((*ok)[1] == std::make_pair(std::string("broker2"), 19092));
  CHECK((*ok)[2] == std::make_pair(std::string("::1"), 9093));
  for (const char* bad : {"", "localhost", "localhost:", "localhost:port", ":9092", "host:70000", "host:9092x"}) {
    INFO(bad);
    CHECK(ParseBootstrapServers(bad).status().IsInvalidArgument());
  }
}

TEST_CASE("kafka: regex escaping keeps a transactional id prefix literal", "[kafka]") {
  std::regex own("^" + RegexEscape("job.v1+(a)") + "-([0-9]+)-([0-9]+)$");
  CHECK(std::regex_match("job.v1+(a)-2-17", own));
  CHECK_FALSE(std::regex_match("jobXv1+(a)-2-17", own));
  CHECK_FALSE(std::regex_match("job.v1+(a)-x-2-17", own));
}

TEST_CASE("kafka: the transaction admin reports an unreachable broker as unavailable", "[kafka]") {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  KafkaTransactionAdmin admin("127.0.0.1:1", 2000);
  auto d = admin.Describe("any");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().IsUnavailable());
  CHECK_THAT(d.status().message(), Catch::Contains("127.0.0.1:1"));
}

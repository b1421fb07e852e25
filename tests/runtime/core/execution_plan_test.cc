#include <catch2/catch.hpp>

#include "lib/api/weir.h"
#include "runtime/core/execution_plan.h"

using weir::runtime::BuildExecutionPlan;

namespace {
weir::StreamGraph NumberSumLikeGraph(int sink_parallelism = 0) {
  weir::StreamExecutionEnvironment env(1);
  auto sink = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Seq")
                  .SetParallelism(1)
                  .KeyBy([](int64_t n) { return n % 2; })
                  .Reduce([](int64_t a, int64_t b) { return a + b; })
                  .Map([](int64_t v) { return std::to_string(v); })
                  .AddSink(weir::DiscardingSink<std::string>(), "Sink");
  if (sink_parallelism) sink.SetParallelism(sink_parallelism);
  return std::move(env.graph());
}
}  // namespace

TEST_CASE("execution plan: forward edges of equal parallelism chain; key_by splits", "[runtime]") {
  auto graph = NumberSumLikeGraph();
  auto plan = BuildExecutionPlan(graph, 3);
  REQUIRE(plan.ok());
  REQUIRE(plan->vertices.size() == 2);
  CHECK(plan->vertices[0].name == "Source: Seq");
  CHECK(plan->vertices[0].parallelism == 1);
  CHECK(plan->vertices[1].name == "Keyed Reduce -> Map -> Sink");
  CHECK(plan->vertices[1].parallelism == 3);
  REQUIRE(plan->edges.size() == 1);
  CHECK(plan->edges[0].strategy == weir::ShipStrategy::kHash);
  CHECK(plan->max_parallelism == 128);
}

TEST_CASE("execution plan: forward between different parallelism becomes rebalance", "[runtime]") {
  auto graph = NumberSumLikeGraph(2);
  auto plan = BuildExecutionPlan(graph, 3);
  REQUIRE(plan.ok());
  REQUIRE(plan->vertices.size() == 3);
  CHECK(plan->edges.back().strategy == weir::ShipStrategy::kRebalance);
}

TEST_CASE("execution plan: bad graphs are rejected naming the operator", "[runtime]") {
  SECTION("parallelism above max parallelism") {
    weir::StreamExecutionEnvironment env(1);
    env.SetMaxParallelism(4);
    env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Seq").Print();
    auto plan = BuildExecutionPlan(env.graph(), 8);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().message().find("larger than its max parallelism 4") != std::string::npos);
  }
  SECTION("duplicate uids") {
    weir::StreamExecutionEnvironment env(1);
    env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Seq").Uid("x").Print().Uid("x");
    auto plan = BuildExecutionPlan(env.graph(), 1);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().message().find("'x' is used twice") != std::string::npos);
  }
  SECTION("zero parallelism") {
    weir::StreamExecutionEnvironment env(1);
    env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Seq").Print();
    weir::StreamGraph g = env.graph();
    g.default_parallelism = 0;
    CHECK_FALSE(BuildExecutionPlan(g, 0).ok());
  }
  SECTION("empty graph") {
    weir::StreamGraph g;
    CHECK_FALSE(BuildExecutionPlan(g, 1).ok());
  }
}

namespace {
class CountRules final : public weir::KeyedBroadcastProcessFunction<int64_t, int64_t, int64_t, int64_t> {
 public:
  void ProcessElement(const int64_t& n, const int64_t&, const weir::ReadOnlyBroadcastContext&,
                      weir::Collector<int64_t>& out) override {
    out.Collect(n);
  }
  void ProcessBroadcastElement(const int64_t&, const weir::BroadcastContext&, weir::Collector<int64_t>&) override {}
};
}  // namespace

TEST_CASE("execution plan: a two-input operator heads a vertex with one input edge per stream", "[runtime]") {
  weir::StreamExecutionEnvironment env(1);
  weir::MapStateDescriptor<int64_t, bool> rules_state("rules");
  auto rules = env.AddSource<int64_t>(weir::SequenceSource(1, 3), "Rules").SetParallelism(1).Broadcast(rules_state);
  env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Numbers")
      .SetParallelism(2)
      .KeyBy([](int64_t n) { return n % 2; })
      .Connect(rules)
      .Process(CountRules())
      .Map([](int64_t v) { return v; })
      .AddSink(weir::DiscardingSink<int64_t>(), "Sink");
  auto plan = BuildExecutionPlan(env.graph(), 3);
  REQUIRE(plan.ok());
  REQUIRE(plan->vertices.size() == 3);
  const auto& vertex = plan->vertices[2];
  // The node that keeps the process function's main records (side_outputs.h) is chained.
  CHECK(vertex.name == "Keyed Broadcast Process -> Keyed Broadcast Process (results) -> Map -> Sink");
  REQUIRE(vertex.inputs.size() == 2);
  CHECK(plan->edges[vertex.inputs[0]].strategy == weir::ShipStrategy::kHash);
  CHECK(plan->edges[vertex.inputs[1]].strategy == weir::ShipStrategy::kBroadcast);
  // Channels: 2 of the numbers' subtasks, then 1 of the rules'.
  CHECK(weir::runtime::InputChannelOffsets(*plan, vertex) == std::vector<int>{0, 2, 3});
}

namespace {
class Pair final : public weir::KeyedCoProcessFunction<int64_t, int64_t, std::string, int64_t> {
 public:
  void ProcessElement1(const int64_t& v, const int64_t&, weir::Collector<int64_t>& out) override { out.Collect(v); }
  void ProcessElement2(const std::string&, const int64_t& key, weir::Collector<int64_t>& out) override {
    out.Collect(key);
  }
};
}  // namespace

TEST_CASE("execution plan: ConnectedStreams::KeyBy hashes both inputs, each with its own record type", "[runtime]") {
  weir::StreamExecutionEnvironment env(1);
  auto words = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Words").Map([](int64_t n) {
    return std::to_string(n);
  });
  env.AddSource<int64_t>(weir::SequenceSource(1, 10), "Numbers")
      .Connect(words)
      .KeyBy([](int64_t n) { return n % 3; }, [](const std::string& w) { return static_cast<int64_t>(w.size()); })
      .Process(Pair())
      .AddSink(weir::DiscardingSink<int64_t>(), "Sink");
  auto plan = BuildExecutionPlan(env.graph(), 2);
  REQUIRE(plan.ok());
  const auto& vertex = plan->vertices.back();
  CHECK(vertex.name == "KeyedCoProcess -> KeyedCoProcess (results) -> Sink");
  REQUIRE(vertex.inputs.size() == 2);
  CHECK(plan->edges[vertex.inputs[0]].strategy == weir::ShipStrategy::kHash);
  CHECK(plan->edges[vertex.inputs[1]].strategy == weir::ShipStrategy::kHash);
  CHECK(weir::runtime::InputChannelOffsets(*plan, vertex) == std::vector<int>{0, 2, 4});
  const weir::StreamNode& node = env.graph().nodes[vertex.chain[0]];
  CHECK(node.is_keyed);
  CHECK(node.in_type != nullptr);
  CHECK(node.in_type2 != nullptr);
  CHECK(node.in_type != node.in_type2);
}

TEST_CASE("execution plan: in-flight data restored at another parallelism goes input by input",
          "[runtime][unaligned]") {
  using weir::ShipStrategy;
  using weir::runtime::InFlightShare;
  using weir::runtime::InFlightShareOf;
  // The same parallelism: each subtask its own, whatever the edge.
  for (ShipStrategy s :
       {ShipStrategy::kForward, ShipStrategy::kHash, ShipStrategy::kRebalance, ShipStrategy::kBroadcast}) {
    CHECK(InFlightShareOf(s, 1, 3, 1, 3) == InFlightShare::kAll);
    CHECK(InFlightShareOf(s, 0, 3, 1, 3) == InFlightShare::kNone);
  }
  // Hash: every old subtask's records of the new subtask's key groups.
  CHECK(InFlightShareOf(ShipStrategy::kHash, 0, 2, 2, 3) == InFlightShare::kOwnKeyGroups);
  CHECK(InFlightShareOf(ShipStrategy::kHash, 2, 3, 0, 1) == InFlightShare::kOwnKeyGroups);
  // Broadcast, 2 -> 3: new subtask j takes old subtask j mod 2 whole (as its broadcast state).
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 0, 2, 2, 3) == InFlightShare::kAll);
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 1, 2, 2, 3) == InFlightShare::kNone);
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 1, 2, 1, 3) == InFlightShare::kAll);
  // Broadcast, 3 -> 2: old subtask 2's copy is dropped with its broadcast state.
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 0, 3, 0, 2) == InFlightShare::kAll);
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 2, 3, 0, 2) == InFlightShare::kNone);
  CHECK(InFlightShareOf(ShipStrategy::kBroadcast, 2, 3, 1, 2) == InFlightShare::kNone);
  // Other edges, 3 -> 2: old subtask i to new subtask i mod 2.
  CHECK(InFlightShareOf(ShipStrategy::kRebalance, 2, 3, 0, 2) == InFlightShare::kAll);
  CHECK(InFlightShareOf(ShipStrategy::kRebalance, 1, 3, 0, 2) == InFlightShare::kNone);
  CHECK(InFlightShareOf(ShipStrategy::kForward, 1, 3, 1, 2) == InFlightShare::kAll);
}

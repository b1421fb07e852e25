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

#pragma once
// ExecutionPlan: the stream graph turned into job vertices (chains of operators
// that run in one task), each with a parallelism, and the edges between them.
// A pure function of the graph, so it is unit-testable without threads.
//
// Chaining: node B joins node A's chain when B's only input is a forward edge from
// A, A feeds nothing else, both have the same parallelism, and B is not a source.
// A forward edge between nodes of different parallelism becomes a rebalance
// (Flink's default partitioner does the same).

#include <string>
#include <vector>

#include "lib/api/graph.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"

namespace weir::runtime {

struct PlanEdge {
  int source_vertex = -1;
  int source_node = -1;   // the node (in the source vertex's chain) that produces
  int target_vertex = -1;
  ShipStrategy strategy = ShipStrategy::kForward;
  std::shared_ptr<const void> key_selector;
};

struct PlanVertex {
  VertexId id;
  std::string name;              // node names joined by " -> "
  std::vector<int> chain;        // node ids, head first
  int parallelism = 1;
  int max_parallelism = 128;
  std::vector<int> inputs;       // indexes into ExecutionPlan::edges
  std::vector<int> outputs;      // indexes into ExecutionPlan::edges
  bool is_source() const { return inputs.empty(); }
};

struct ExecutionPlan {
  std::vector<PlanVertex> vertices;  // in topological order
  std::vector<PlanEdge> edges;
  std::vector<std::string> node_uids;  // per node id, after defaults
  int max_parallelism = 128;
};

// Builds the plan. `default_parallelism` replaces unset node parallelism. Errors
// (InvalidArgument, naming the operator): parallelism < 1, parallelism above
// max parallelism, duplicate uids, a cycle, a graph without sources.
Result<ExecutionPlan> BuildExecutionPlan(const StreamGraph& graph, int default_parallelism);

// The input channels of a task of `vertex`: one per (input edge, upstream subtask), a
// forward edge having one. Element k is the first channel of input edge k (the edges in
// PlanVertex::inputs order); the last element is the number of channels.
std::vector<int> InputChannelOffsets(const ExecutionPlan& plan, const PlanVertex& vertex);

// Which records subtask `subtask` of `parallelism` replays of the in-flight data that old
// subtask `old_subtask` of `old_parallelism` captured on an input edge of `strategy` (the
// channel state of an unaligned checkpoint). At the same parallelism: its own, whole.
// Rescaled: on a hash edge every old subtask's records of its key groups; on a broadcast
// edge the whole of old subtask `subtask mod old_parallelism`, whose broadcast state it
// takes too (AssignState), so that the broadcast records in that state and those still in
// flight are the same as old subtask's, none twice and none missing; on other edges the
// whole of the old subtasks i with i mod parallelism = subtask.
enum class InFlightShare { kNone, kAll, kOwnKeyGroups };
InFlightShare InFlightShareOf(ShipStrategy strategy, int old_subtask, int old_parallelism, int subtask,
                              int parallelism);

}  // namespace weir::runtime

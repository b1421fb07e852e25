#include "runtime/core/execution_plan.h"

#include <map>
#include <set>

namespace weir::runtime {

Result<ExecutionPlan> BuildExecutionPlan(const StreamGraph& graph, int default_parallelism) {
  const auto& nodes = graph.nodes;
  const int n = static_cast<int>(nodes.size());
  if (n == 0) {
    return Status::InvalidArgument("the job defines no operators: add a source and a sink");
  }
  int job_parallelism = default_parallelism > 0 ? default_parallelism : graph.default_parallelism;
  if (job_parallelism < 1) {
    return Status::InvalidArgument("the parallelism must be a positive number: " +
                                   std::to_string(job_parallelism));
  }
  ExecutionPlan plan;
  std::vector<int> parallelism(n);
  int max_needed = 1;
  for (const auto& node : nodes) {
    int p = node.parallelism_fixed && node.parallelism > 0 ? node.parallelism : job_parallelism;
    if (!node.parallelism_fixed && node.parallelism > 0) p = node.parallelism;
    if (p < 1) {
      return Status::InvalidArgument("operator '" + node.name + "': the parallelism must be a positive number: " +
                                     std::to_string(p));
    }
    parallelism[node.id] = p;
    max_needed = std::max(max_needed, p);
  }
  plan.max_parallelism = graph.max_parallelism > 0 ? graph.max_parallelism
                                                   : ComputeDefaultMaxParallelism(max_needed);
  if (plan.max_parallelism > kUpperBoundMaxParallelism) {
    return Status::InvalidArgument("max parallelism " + std::to_string(plan.max_parallelism) +
                                   " is above the limit of " + std::to_string(kUpperBoundMaxParallelism));
  }
  for (const auto& node : nodes) {
    int max_p = node.max_parallelism > 0 ? node.max_parallelism : plan.max_parallelism;
    if (parallelism[node.id] > max_p) {
      return Status::InvalidArgument(
          "operator '" + node.name + "': parallelism " + std::to_string(parallelism[node.id]) +
          " is larger than its max parallelism " + std::to_string(max_p))
          .WithHint("lower -p, or raise pipeline.max-parallelism (it cannot change for a job restored from a savepoint)");
    }
  }

  // Uids: explicit ones must be unique; the rest are derived from the position in
  // the graph (stable as long as the graph's shape does not change).
  plan.node_uids.resize(n);
  std::set<std::string> seen;
  for (const auto& node : nodes) {
    std::string uid = node.uid.empty() ? "auto-" + std::to_string(node.id) + "-" + node.name : node.uid;
    if (!seen.insert(uid).second) {
      return Status::InvalidArgument("operator uid '" + uid + "' is used twice: uids must be unique");
    }
    plan.node_uids[node.id] = uid;
  }

  // Consumers of each node.
  std::vector<std::vector<int>> consumers(n);
  for (const auto& node : nodes) {
    for (const auto& in : node.inputs) {
      if (in.source_node < 0 || in.source_node >= node.id) {
        return Status::InvalidArgument("operator '" + node.name + "' has an input that is not defined before it");
      }
      consumers[in.source_node].push_back(node.id);
    }
    if (node.inputs.empty() && !node.is_source) {
      return Status::InvalidArgument("operator '" + node.name + "' has no input");
    }
  }

  // Chains: nodes are in topological order (inputs always precede a node).
  std::vector<int> vertex_of(n, -1);
  for (const auto& node : nodes) {
    bool chain_to_input = false;
    if (node.inputs.size() == 1 && !node.is_source) {
      const auto& in = node.inputs[0];
      chain_to_input = in.strategy == ShipStrategy::kForward && consumers[in.source_node].size() == 1 &&
                       parallelism[in.source_node] == parallelism[node.id] && !nodes[in.source_node].is_sink;
    }
    if (chain_to_input) {
      int v = vertex_of[node.inputs[0].source_node];
      plan.vertices[v].chain.push_back(node.id);
      plan.vertices[v].name += " -> " + node.name;
      vertex_of[node.id] = v;
      continue;
    }
    PlanVertex vertex;
    vertex.chain.push_back(node.id);
    vertex.name = node.is_source ? "Source: " + node.name : node.name;
    vertex.parallelism = parallelism[node.id];
    vertex.max_parallelism = node.max_parallelism > 0 ? node.max_parallelism : plan.max_parallelism;
    vertex.id = VertexId::FromHash(plan.node_uids[node.id]);
    vertex_of[node.id] = static_cast<int>(plan.vertices.size());
    plan.vertices.push_back(std::move(vertex));
    for (const auto& in : node.inputs) {
      PlanEdge e;
      e.source_vertex = vertex_of[in.source_node];
      e.source_node = in.source_node;
      e.target_vertex = vertex_of[node.id];
      e.strategy = in.strategy;
      if (e.strategy == ShipStrategy::kForward && parallelism[in.source_node] != parallelism[node.id]) {
        e.strategy = ShipStrategy::kRebalance;
      }
      e.key_selector = in.key_selector;
      int idx = static_cast<int>(plan.edges.size());
      plan.edges.push_back(e);
      plan.vertices[e.source_vertex].outputs.push_back(idx);
      plan.vertices[e.target_vertex].inputs.push_back(idx);
    }
  }
  return plan;
}

std::vector<int> InputChannelOffsets(const ExecutionPlan& plan, const PlanVertex& vertex) {
  std::vector<int> offsets{0};
  for (int e : vertex.inputs) {
    const PlanEdge& edge = plan.edges[e];
    offsets.push_back(offsets.back() +
                      (edge.strategy == ShipStrategy::kForward ? 1 : plan.vertices[edge.source_vertex].parallelism));
  }
  return offsets;
}

InFlightShare InFlightShareOf(ShipStrategy strategy, int old_subtask, int old_parallelism, int subtask,
                              int parallelism) {
  if (parallelism == old_parallelism) return old_subtask == subtask ? InFlightShare::kAll : InFlightShare::kNone;
  switch (strategy) {
    case ShipStrategy::kHash:
      return InFlightShare::kOwnKeyGroups;
    case ShipStrategy::kBroadcast:
      return old_subtask == subtask % old_parallelism ? InFlightShare::kAll : InFlightShare::kNone;
    case ShipStrategy::kForward:
    case ShipStrategy::kRebalance:
      break;
  }
  return old_subtask % parallelism == subtask ? InFlightShare::kAll : InFlightShare::kNone;
}

}  // namespace weir::runtime

// The eviction rule keeps fusion simple and safe: a tensor inside a task is
// never stored, so anything else that reads it would read garbage. Giving
// back the last node (rather than searching for the best cut) also keeps a
// graph order: a task's inputs come from tasks that end earlier.
#include "fusion.h"

#include <algorithm>
#include <map>

#include "op_table.h"

namespace tunefarm::frontend {
namespace {

OpKind KindOf(const GraphNode& n) {
  OpKind kind = OpKind::kElementwise;
  FindOpKind(n.op_type, &kind);  // OnnxGraph::Load admitted only supported operators
  return kind;
}

// The groups' first shape: what every tensor inside the group has.
const std::vector<int64_t>& GroupShape(const OnnxGraph& g, const NodeGroup& group) {
  return g.value(g.nodes()[size_t(group.nodes.front())].outputs[0]).shape;
}

// True if a tensor written by `node` is read outside group `gi` or is a graph output.
bool LeavesGroup(const OnnxGraph& g, const std::vector<int>& group_of_node, int node, int gi) {
  const GraphValue& out = g.value(g.nodes()[size_t(node)].outputs[0]);
  if (out.is_output) return true;
  for (int c : out.consumers) {
    if (group_of_node[size_t(c)] != gi) return true;
  }
  return false;
}

}  // namespace

std::vector<NodeGroup> PartitionGraph(const OnnxGraph& g) {
  const std::vector<GraphNode>& nodes = g.nodes();
  std::vector<NodeGroup> groups;
  std::vector<int> group_of_node(nodes.size(), -1);
  std::map<std::string, int> group_of_tensor;
  for (int i = 0; i < int(nodes.size()); ++i) {
    const GraphNode& n = nodes[size_t(i)];
    OpKind kind = KindOf(n);
    if (kind == OpKind::kConstant || kind == OpKind::kView) continue;
    int join = -1;
    if (kind == OpKind::kElementwise) {
      for (const std::string& in : n.inputs) {
        auto it = in.empty() ? group_of_tensor.end() : group_of_tensor.find(in);
        if (it == group_of_tensor.end() || g.value(in).constant()) continue;
        if (GroupShape(g, groups[size_t(it->second)]) != g.value(n.outputs[0]).shape) continue;
        join = std::max(join, it->second);
      }
    }
    if (join < 0) {
      groups.push_back(NodeGroup{kind == OpKind::kAnchor ? i : -1, {}});
      join = int(groups.size()) - 1;
    }
    groups[size_t(join)].nodes.push_back(i);
    group_of_node[size_t(i)] = join;
    group_of_tensor[n.outputs[0]] = join;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int gi = 0; gi < int(groups.size()); ++gi) {
      NodeGroup& group = groups[size_t(gi)];
      if (group.nodes.size() < 2) continue;
      bool ok = true;
      for (size_t k = 0; k + 1 < group.nodes.size(); ++k) ok = ok && !LeavesGroup(g, group_of_node, group.nodes[k], gi);
      if (ok) continue;
      int last = group.nodes.back();
      group.nodes.pop_back();
      groups.push_back(NodeGroup{-1, {last}});
      group_of_node[size_t(last)] = int(groups.size()) - 1;
      changed = true;
    }
  }
  std::stable_sort(groups.begin(), groups.end(), [](const NodeGroup& a, const NodeGroup& b) { return a.last() < b.last(); });
  return groups;
}

}  // namespace tunefarm::frontend

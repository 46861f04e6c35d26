// The eviction rule keeps fusion simple and safe: a tensor inside a task is
// never stored, so anything else that reads it would read garbage. Giving
// back the last node (rather than searching for the best cut) also keeps a
// graph order: a task's inputs come from tasks that end earlier.
#include "fusion.h"

#include <algorithm>
#include <map>

#include "op_table.h"
#include "pad_fold.h"

namespace tunefarm::frontend {
namespace {

OpKind KindOf(const GraphNode& n) {
  if (n.folded) return OpKind::kConstant;
  OpKind kind = OpKind::kElementwise;
  FindOpKind(n.op_type, &kind);  // OnnxGraph::Load admitted only supported operators
  return kind;
}

// The tensor node `k` of `group` writes for the group.
const std::string& GroupTensor(const OnnxGraph& g, const NodeGroup& group, size_t k) {
  return g.nodes()[size_t(group.nodes[k])].outputs[k == 0 ? size_t(group.part) : 0];
}

// The groups' first shape: what every tensor inside the group has.
const std::vector<int64_t>& GroupShape(const OnnxGraph& g, const NodeGroup& group) {
  return g.value(GroupTensor(g, group, 0)).shape;
}

// True if `tensor`, written inside group `gi`, is read outside it or is a graph output.
bool LeavesGroup(const OnnxGraph& g, const std::vector<int>& group_of_node, const std::string& tensor, int gi) {
  const GraphValue& out = g.value(tensor);
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
    if (kind == OpKind::kConstant || kind == OpKind::kView || ConvFoldablePad(g, n)) continue;
    if (n.op_type == "Split") {  // one task per output that is read
      for (size_t part = 0; part < n.outputs.size(); ++part) {
        if (n.outputs[part].empty()) continue;
        const GraphValue& out = g.value(n.outputs[part]);
        if (out.consumers.empty() && !out.is_output) continue;
        groups.push_back(NodeGroup{i, {i}, int(part)});
        group_of_node[size_t(i)] = int(groups.size()) - 1;
        group_of_tensor[n.outputs[part]] = int(groups.size()) - 1;
      }
      continue;
    }
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
      for (size_t k = 0; k + 1 < group.nodes.size(); ++k) {
        ok = ok && !LeavesGroup(g, group_of_node, GroupTensor(g, group, k), gi);
      }
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

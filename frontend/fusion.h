// Fusion: which ONNX nodes run as one task.
//
// Every anchor starts a task; an element-wise node joins the latest task that
// produces one of its inputs when its output has that task's shape; other
// element-wise nodes start a task of their own. A task may then hand only its
// last node's output to the rest of the graph: a task with another tensor
// read outside it (or a graph output inside it) gives back its last node, to
// run alone, until none does. Views, constants (folded ones included) and a
// Pad folded into the convolutions it feeds (pad_fold.h) belong to no task.
// Split starts one task per output it hands on (NodeGroup::part).
#pragma once

#include <vector>

#include "onnx_graph.h"

namespace tunefarm::frontend {

struct NodeGroup {
  int anchor = -1;         // node index of the anchor; -1 for an element-wise chain
  std::vector<int> nodes;  // every node of the task in graph order, the anchor first
  int part = 0;            // which output of the anchor the task computes (Split's outputs; else 0)
  int last() const { return nodes.back(); }
};

// The tasks of the graph, each after the tasks whose outputs it reads.
std::vector<NodeGroup> PartitionGraph(const OnnxGraph& graph);

}  // namespace tunefarm::frontend

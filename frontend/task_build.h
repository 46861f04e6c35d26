// One fused node group -> the workload of its task and the call that runs it.
#pragma once

#include <string>

#include "fusion.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {

// A ModelTask with one call; `model_name` prefixes the workload's name.
Result<ModelTask> BuildTask(const OnnxGraph& graph, const NodeGroup& group, const std::string& model_name);

}  // namespace tunefarm::frontend

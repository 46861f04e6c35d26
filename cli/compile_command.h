// `tunefarm compile`'s options and what its two halves share: one workload
// (compile_command.cpp) and a whole ONNX model (compile_model.cpp), which
// report the schedules they choose, check and write their outputs and open
// the tuning logs the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::cli {

struct CompileOptions {
  std::string workload_path;  // a workload (.tf) or an ONNX model (.onnx)
  std::string target = "llvm";
  std::vector<std::string> overrides;  // --set: a workload's parameters, a model's symbolic dimensions
  std::string output;
  std::string header;
  std::string db;
  std::string system_db;
  bool require_tuned = false;
  bool shared = false;
  bool embed_weights = false;  // a model: every weight in the object, not only the folded constants
};

// --require-tuned and a kernel without a tuning record.
constexpr int kExitNotTuned = 3;

// The chosen schedule of one kernel, on stderr, before code generation.
void ReportSchedule(const CompileOptions& o, const Target& target, const tuner::BuiltKernel& k);

// Why `path` (the file of `flag`) cannot be written, checked before the
// compile so that a mistyped folder costs nothing; OK when it can be.
Status CheckOutputPath(const std::string& flag, const std::string& path);

// Writes `bytes` to `path`; the error says which file and the system's reason.
Status WriteOutputFile(const std::string& flag, const std::string& path, const std::string& bytes);

// --db over --system-db (default: the installed one), read-only; null without --db.
Result<std::unique_ptr<database::LayeredDatabase>> OpenCompileLog(const CompileOptions& o);

// `tunefarm compile MODEL.onnx`: every task's kernel in one object.
int CompileModel(const CompileOptions& o);

}  // namespace tunefarm::cli

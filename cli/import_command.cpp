// `tunefarm import`: an ONNX model's tuning tasks, listed, and written as
// workload files a person can read, tune one by one or commit.
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::cli {
namespace {

struct ImportOptionsCli {
  std::string model;
  std::string out_dir;
  std::vector<std::string> dims;
};

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

void PrintTasks(const frontend::Model& m) {
  double total = 0;
  for (const frontend::ModelTask& t : m.tasks) total += t.workload.Flops() * double(t.calls.size());
  fmt::print("{}: opset {}, {} nodes -> {} calls of {} distinct tasks, {:.2f} GFLOP per inference\n", m.path, m.opset,
             m.node_count, m.CallCount(), m.tasks.size(), total * 1e-9);
  fmt::print("{:>3}  {:<58} {:<17} {:>5} {:>8}  {}\n", "#", "task", "op", "calls", "MFLOP", "what");
  for (size_t i = 0; i < m.tasks.size(); ++i) {
    const frontend::ModelTask& t = m.tasks[i];
    fmt::print("{:>3}  {:<58} {:<17} {:>5} {:>8.1f}  {}\n", i + 1, t.workload.name, t.op_class, t.calls.size(),
               t.workload.Flops() * 1e-6, t.summary);
  }
}

// One .tf file per task, with the nodes it stands for, and a manifest.
Status WriteTasks(const frontend::Model& m, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(fmt::format("cannot create {}: {}", dir, ec.message()));
  std::ofstream manifest(std::filesystem::path(dir) / "tasks.tsv");
  manifest << "name\top\tcalls\thash\tnodes\n";
  for (const frontend::ModelTask& t : m.tasks) {
    std::filesystem::path file = std::filesystem::path(dir) / (t.workload.name + ".tf");
    std::ofstream out(file);
    out << fmt::format("# {} ({}): {} call{}\n", m.name, std::filesystem::path(m.path).filename().string(),
                       t.calls.size(), t.calls.size() == 1 ? "" : "s");
    for (const frontend::TaskCall& c : t.calls) out << "#   " << Join(c.nodes, " + ") << "\n";
    out << "# " << t.summary << "\n# Written by `tunefarm import`.\n" << PrintWorkload(t.workload);
    if (!out) return Status::IOError(fmt::format("cannot write {}", file.string()));
    std::vector<std::string> nodes;
    for (const frontend::TaskCall& c : t.calls) nodes.push_back(Join(c.nodes, "+"));
    manifest << fmt::format("{}\t{}\t{}\t{}\t{}\n", t.workload.name, t.op_class, t.calls.size(),
                            StructuralHashHex(t.workload), Join(nodes, ","));
  }
  if (!manifest) return Status::IOError(fmt::format("cannot write {}/tasks.tsv", dir));
  return Status::OK();
}

int Import(const ImportOptionsCli& o) {
  auto dims = ParseOverrides(o.dims);
  if (!dims.ok()) {
    fmt::print(stderr, "error: {}\n", dims.status().message());
    return kExitUserError;
  }
  auto model = frontend::ImportOnnx(o.model, {*dims});
  if (!model.ok()) {
    fmt::print(stderr, "error: {}\n", model.status().message());
    return model.status().code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
  }
  PrintTasks(*model);
  if (!o.out_dir.empty()) {
    Status s = WriteTasks(*model, o.out_dir);
    if (!s.ok()) {
      fmt::print(stderr, "error: {}\n", s.message());
      return kExitUserError;
    }
    fmt::print("wrote {} workload files and tasks.tsv to {}\n", model->tasks.size(), o.out_dir);
  }
  return kExitOk;
}

}  // namespace

void AddImportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ImportOptionsCli>();
  CLI::App* cmd = app.add_subcommand(
      "import", "List an ONNX model's tuning tasks: each distinct layer after fusion, with how often the model runs it");
  cmd->footer(
      "\nA task is a convolution, matmul, pooling, softmax or layer norm with the element-wise\n"
      "operators after it fused in (bias, ReLU, GELU, residual add), or an element-wise chain alone.\n"
      "Layers of the same shape are one task; its calls are the model's layers it stands for.\n\n"
      "Examples:\n"
      "  tunefarm import resnet50.onnx                  the task list\n"
      "  tunefarm import resnet50.onnx -o tasks/        also one workload file per task\n"
      "  tunefarm import bert.onnx --set batch=1        give a symbolic dimension its value\n"
      "  tunefarm tune resnet50.onnx --trials 2000      tune every task, weighted by its calls");
  cmd->add_option("model", o->model, "ONNX model file (.onnx)")->required();
  cmd->add_option("-o,--out", o->out_dir, "Write each task as <name>.tf, and tasks.tsv, into this folder");
  cmd->add_option("--set", o->dims, "Value of a symbolic input dimension, e.g. --set batch=1");
  cmd->callback([o, exit_code] { *exit_code = Import(*o); });
}

}  // namespace tunefarm::cli

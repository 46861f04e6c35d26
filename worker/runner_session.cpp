// One batch in the runner: build every candidate (in parallel), then check
// and time them one at a time. Builds finish before timing starts so that no
// compile competes with a timed kernel for cores or caches.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "runner.h"
#include "runner_cuda.h"
#include "tunefarm/measure/timing.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/codegen/object_kernel.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/runtime.h"
#include "tunefarm/measure/candidate_program.h"

namespace tunefarm::runner {

using nlohmann::json;
using worker_protocol::TestFault;
using Clock = std::chrono::steady_clock;

namespace {

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }


MeasureResult Failure(const MeasureInput& in, MeasureErrorKind kind, std::string message) {
  MeasureResult r;
  r.candidate_id = in.candidate_id;
  r.error = kind;
  r.error_message = std::move(message);
  return r;
}

[[noreturn]] void HangForever() {
  while (true) ::pause();
}

json Event(const char* type, int index) { return {{"type", type}, {"index", index}}; }

}  // namespace

void Session::Build(const MeasureInput& in, CandidatePrograms& programs, Built& out) {
  auto start = Clock::now();
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    out.ok = false;
    out.failure = Failure(in, kind, std::move(message));
    out.failure.build_seconds = SecondsSince(start);
  };
  if (test_faults_) {
    auto fault = worker_protocol::FindTestFault(in.trace_text);
    if (!fault.ok()) return fail(MeasureErrorKind::kInvalidCandidate, fault.status().message());
    out.fault = *fault;
  }
  CandidateProgram program = programs.Prepare(in);
  if (!program.ok()) return fail(program.error, std::move(program.error_message));
  const Target& target = program.target;
  out.func = std::move(program.func);
  // TEST DEVICE: misbehave while building, on request (runner started with
  // TUNEFARM_RUNNER_TEST_FAULTS=1 only).
  if (out.fault == TestFault::kHangBuild) HangForever();
  if (out.fault == TestFault::kCrashBuild) ::raise(SIGSEGV);
  if (out.fault == TestFault::kCudaIllegalAddress && target.kind != "cuda") {
    return fail(MeasureErrorKind::kInvalidCandidate, "test fault cuda-illegal-address needs a cuda target");
  }
  if (target.kind == "cuda") {
    // CandidatePrograms let it through: this runner's GPU runs it.
    if (!in.object.empty()) {
      return fail(MeasureErrorKind::kInvalidCandidate, "a prebuilt object cannot be loaded on a CUDA device");
    }
    // No instructions: the default program, which for a GPU binds every
    // root nest to blocks and threads (DefaultGpuSchedule).
    bool default_program = in.trace ? in.trace->size() == 0 : !TraceTextHasContent(in.trace_text);
    if (!in.trace && !default_program) {
      auto parsed = Trace::Parse(in.trace_text);  // parsed by Prepare already: it parses
      default_program = parsed.ok() && parsed->size() == 0;
    }
    if (auto failure = BuildCuda(target, default_program, out)) {
      return fail(failure->first, std::move(failure->second));
    }
    out.workload = std::move(program.workload);
    out.build_seconds = SecondsSince(start);
    out.ok = true;
    return;
  }
  // Built elsewhere (the tuner, for a board that should not compile): load
  // the object with the runtime's loader, whose checks name what this
  // machine is (CandidatePrograms already refused targets that are not this
  // host's). The workload and trace were still needed for the parameters'
  // shapes and the reference. A bad object is this candidate's compile error.
  // Measurement calls the prepack split's entries only (prepared_call.h).
  CodegenOptions codegen;
  codegen.whole_entry = false;
  auto kernel = in.object.empty() ? CompileCandidate(out.func, target, codegen)
                                  : LoadKernelObject(in.object, out.func);
  if (!kernel.ok()) {
    std::string what = in.object.empty() ? "" : "loading the prebuilt object: ";
    return fail(MeasureErrorKind::kCompileError, what + kernel.status().ToString());
  }
  out.kernel = std::move(*kernel);
  out.target_threads = target.num_threads;
  out.workload = std::move(program.workload);
  out.build_seconds = SecondsSince(start);
  out.ok = true;
}

Session::Session(Channel& channel, bool test_faults, std::string device)
    : channel_(channel), test_faults_(test_faults), device_(std::move(device)) {}

MeasureResult Session::Run(Built& b, const MeasureOptions& options, int index) {
  if (b.cuda) return RunCuda(b, options, index);
  MeasureResult r;
  r.build_seconds = b.build_seconds;
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    r.error = kind;
    r.error_message = std::move(message);
    r.repeat_seconds.clear();
    r.speed_probe_seconds = 0;
    return r;
  };
  std::string key = ReferenceKey(*b.workload, options.input_seed);
  bool announce = !references_.Contains(key);
  if (announce) channel_.Send(Event("reference_start", index));
  auto ref_or = references_.Get(*b.workload, options.input_seed);
  if (announce) channel_.Send(Event("reference_done", index));
  if (!ref_or.ok()) return fail(MeasureErrorKind::kRuntimeError, "computing the reference failed: " + ref_or.status().message());
  Reference& ref = **ref_or;

  // The scheduled function must take the same buffers as the default one.
  const auto& params = b.func.params;
  if (b.func.num_inputs != ref.inputs.size() || params.size() != ref.inputs.size() + ref.outputs.size()) {
    return fail(MeasureErrorKind::kInvalidCandidate, "the scheduled function's parameters differ from the workload's");
  }
  std::vector<HostBuffer> outputs;
  std::vector<void*> args;
  for (size_t i = 0; i < params.size(); ++i) {
    const HostBuffer& expect = i < ref.inputs.size() ? ref.inputs[i] : ref.outputs[i - ref.inputs.size()];
    if (params[i]->dtype != expect.dtype() || params[i]->shape != expect.shape()) {
      return fail(MeasureErrorKind::kInvalidCandidate, "parameter '" + params[i]->name + "' has another type or shape than the workload's");
    }
    if (i < ref.inputs.size()) args.push_back(ref.inputs[i].data());
  }
  for (size_t k = 0; k < ref.outputs.size(); ++k) {
    outputs.push_back(HostBuffer::Like(params[ref.inputs.size() + k]));
    // All-ones bytes are NaN for floats: a kernel that skips elements fails the check.
    std::memset(outputs.back().data(), 0xff, size_t(outputs.back().size_bytes()));
    args.push_back(outputs.back().data());
  }

  // The options decide; else the target's -num-threads; else the runtime default.
  tunefarm_set_num_threads(options.num_threads > 0 ? options.num_threads : b.target_threads);
  channel_.Send(Event("run_start", index));
  // TEST DEVICE: crash or hang in place of the kernel, on request.
  if (b.fault == TestFault::kSegfault) ::raise(SIGSEGV);
  if (b.fault == TestFault::kAbort) {
    std::fprintf(stderr, "tunefarm-runner: test fault: aborting\n");
    std::abort();
  }
  if (b.fault == TestFault::kHang) HangForever();

  // Constant inputs (weights) are packed once, outside the timed calls, as
  // a user's inference loop would (split_prepack.h); the check below covers
  // the packing too. The first run is the warm-up and the check at once.
  auto prepared = PreparedCall::Prepare(*b.kernel, b.func, args);
  if (!prepared.ok()) return fail(MeasureErrorKind::kRuntimeError, prepared.status().ToString());
  const PreparedCall& call = **prepared;
  auto start = Clock::now();
  Status s = call.Run();
  double first_seconds = SecondsSince(start);
  if (s.ok() && b.fault == TestFault::kWrong) {
    outputs[0].SetFromDouble(0, outputs[0].GetAsDouble(0) + 1000);
  }
  if (!s.ok()) {
    fail(MeasureErrorKind::kRuntimeError, s.ToString());
  } else if (options.check_correctness) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      CompareResult c = CompareBuffers(outputs[k], ref.outputs[k], ref.rtol, ref.atol);
      if (!c.equal) {
        fail(MeasureErrorKind::kWrongResult, "output '" + params[ref.inputs.size() + k]->name + "' differs from the " +
                                                 ref.method + " reference: " + c.message);
        break;
      }
    }
  }
  if (r.error == MeasureErrorKind::kNone) {
    auto times = TimeKernel(call, options, first_seconds);
    if (times.ok()) {
      r.repeat_seconds = std::move(*times);
      // Right after the kernel, on its threads: how fast the machine was
      // while it was timed (TimeSpeedProbe).
      r.speed_probe_seconds = TimeSpeedProbe();
    } else {
      fail(MeasureErrorKind::kRuntimeError, times.status().ToString());
    }
  }
  // A kernel that writes its inputs would poison every later check: drop the
  // cached inputs and fail the candidate.
  if (Checksum(ref.inputs) != ref.inputs_checksum) {
    references_.Drop(key);
    if (r.error == MeasureErrorKind::kNone || r.error == MeasureErrorKind::kWrongResult) {
      fail(MeasureErrorKind::kWrongResult, "the kernel wrote to its input buffers");
    }
  }
  return r;
}

void Session::HandleBatch(const json& request) {
  MeasureOptions options;
  std::vector<std::pair<int, MeasureInput>> candidates;
  int build_threads = 1;
  try {
    options = worker_protocol::OptionsFromJson(request.at("options"));
    build_threads = request.value("build_threads", 1);
    for (const json& c : request.at("candidates")) {
      auto input = worker_protocol::InputFromJson(c);
      if (!input.ok()) {
        channel_.Send({{"type", "error"}, {"message", "malformed batch request: " + input.status().message()}});
        channel_.Send({{"type", "batch_done"}});
        return;
      }
      candidates.emplace_back(c.at("index").get<int>(), std::move(*input));
    }
  } catch (const json::exception& e) {
    channel_.Send({{"type", "error"}, {"message", std::string("malformed batch request: ") + e.what()}});
    channel_.Send({{"type", "batch_done"}});
    return;
  }

  // Build phase: independent candidates, independent LLVM contexts. A
  // batch's candidates share a workload: it is parsed and lowered once.
  // Builds check candidates against the GPU's limits: it is opened first.
  OpenGpu();
  CandidatePrograms programs([this](const Target& target) { return CannotRun(target); });
  std::vector<Built> built(candidates.size());
  std::atomic<size_t> next{0};
  auto build_worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < candidates.size();) {
      const auto& [index, input] = candidates[k];
      channel_.Send(Event("build_start", index));
      Build(input, programs, built[k]);
      if (built[k].ok) {
        channel_.Send({{"type", "build_done"}, {"index", index}, {"build_seconds", built[k].build_seconds}});
      } else {
        json j = worker_protocol::ToJson(built[k].failure);
        j["type"] = "result";
        j["index"] = index;
        channel_.Send(j);
      }
    }
  };
  size_t threads = std::min(candidates.size(), size_t(std::max(build_threads, 1)));
  if (threads <= 1) {
    build_worker();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(build_worker);
    for (auto& t : pool) t.join();
  }

  // Measure phase: one candidate at a time, nothing else running.
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (!built[k].ok) continue;
    const auto& [index, input] = candidates[k];
    MeasureResult r = Run(built[k], options, index);
    r.candidate_id = input.candidate_id;
    json j = worker_protocol::ToJson(r);
    j["type"] = "result";
    j["index"] = index;
    channel_.Send(j);
    // Free the JIT'd code now, not at batch end; after answering, since
    // tearing down a JIT takes milliseconds the parent need not wait for.
    built[k].kernel.reset();
    built[k].cuda.reset();
    if (GpuBroken()) {
      // The context is unusable after this error (runner_cuda.h): the
      // candidate is answered; a fresh runner measures the rest.
      std::fprintf(stderr, "tunefarm-runner: the GPU's CUDA context is unusable after %s; exiting\n",
                   GpuBrokenReason().c_str());
      std::fflush(stderr);
      std::_Exit(kExitGpuBroken);
    }
  }
  channel_.Send({{"type", "batch_done"}});
}

}  // namespace tunefarm::runner

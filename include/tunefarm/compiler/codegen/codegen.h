// Code generation per target kind: the plug point where a target's code
// generator registers, and what every caller that turns a scheduled PrimFunc
// into machine code asks for.
//
// A CodeGenerator compiles PrimFuncs for the targets of one kind
// (Target::kind): a relocatable object exporting the C entry points the
// kernel header declares (tuner/kernel_build.h), and, where the kind runs in
// this process, a JIT-compiled kernel. The registry maps each kind to its
// generator; LLVM's serves `llvm` (compiler/codegen/llvm/). A new kind (CUDA,
// say) is a new CodeGenerator registered under its name, not a new branch in
// its callers.
//
// Lifetime: registered generators live until the process ends; the pointers
// the registry hands out stay valid. Thread safety: the registry may be used
// from any thread; a generator's methods may run concurrently (each
// compilation has its own state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

// A PrimFunc compiled in process. Thread-compatible: Run may be called from
// several threads at once on different buffers.
// What a generated entry returns when an allocation inside it failed (0 is
// success).
inline constexpr int32_t kKernelErrorOutOfMemory = 1;

class JitKernel {
 public:
  virtual ~JitKernel() = default;
  // args: one data pointer per PrimFunc param, in order.
  // Fails when the kernel was compiled without its whole entry
  // (CodegenOptions::whole_entry).
  virtual Status Run(const std::vector<void*>& args) const = 0;
  virtual const std::string& name() const = 0;
  // The prepack split's entries (split_prepack.h), present together or not
  // at all. args: one pointer per param of the split's prepack / prepacked
  // PrimFunc. Call them through PreparedCall (prepared_call.h).
  virtual bool has_prepack() const = 0;
  virtual Status RunPrepack(const std::vector<void*>& args) const = 0;
  virtual Status RunPrepacked(const std::vector<void*>& args) const = 0;
};

struct CodegenOptions {
  int opt_level = 3;
  // With a prepack split, also emit the whole function (packing inside every
  // call). Measurement only calls the split entries and skips it: it would
  // double the compile of every such candidate.
  bool whole_entry = true;
  // Float math functions (exp, log, pow, sigmoid, tanh, erf on f16 and f32)
  // as inline polynomial code that vectorizes with its loop, within a few
  // ULP of libm (codegen_llvm_math.h states the bounds). False: calls to the
  // C library, one per lane in a vectorized loop -- libm's results, at a
  // multiple of the cost. f64 always calls the C library.
  bool inline_math = true;
};

// An entry of an object that calls other entries of the same object in order:
//   int32_t <name>(void* const* slots)
// Call i passes slots[args[0]], slots[args[1]], ... to `callee`, an entry the
// object defines (a PrimFunc's, or one of its prepack split's); the first
// non-zero code a callee returns is returned at once, else 0. The callees
// keep their own contract: each param a distinct, dense buffer. This is how
// one object runs a model's kernels in graph order.
struct SequenceEntry {
  struct Call {
    std::string callee;
    std::vector<size_t> args;  // indices into the slots, one per param of callee
  };
  std::string name;
  std::vector<Call> calls;
};

class CodeGenerator {
 public:
  virtual ~CodeGenerator() = default;

  // The target kind this generator compiles for ("llvm").
  virtual std::string_view kind() const = 0;

  // Lowers `f` for code generation (LowerForCodegen) and emits a relocatable
  // object for `t` exporting `int32_t <f.name>(...)` -- one pointer per param
  // -- and, with a prepack split, its prepack and prepacked entries: what the
  // kernel header declares. InvalidArgument when `t` cannot be built.
  virtual Result<std::string> EmitObject(const ir::PrimFunc& f, const Target& t,
                                         const CodegenOptions& options) const = 0;

  // One relocatable object for `t` holding, for each of `funcs`, every entry
  // EmitObject emits for it, and the `sequences`. InvalidArgument when two
  // entries would share a name, a call names no entry of the object or passes
  // it the wrong number of slots, or `t` cannot be built. The default answers
  // Unimplemented: a kind whose generator puts one kernel in an object.
  virtual Result<std::string> EmitCombinedObject(const std::vector<ir::PrimFunc>& funcs,
                                                 const std::vector<SequenceEntry>& sequences, const Target& t,
                                                 const CodegenOptions& options) const;

  // Whether JitCompile works for this kind (in this process).
  virtual bool can_jit() const = 0;
  // Compiles `f` into this process for `t` (this host). Unimplemented when
  // !can_jit().
  virtual Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t,
                                                        const CodegenOptions& options) const = 0;
};

// The generator for `t.kind`. InvalidArgument naming the kind, the target and
// the registered kinds when none is registered for it.
Result<const CodeGenerator*> CodeGeneratorFor(const Target& t);

// Adds `generator` under its kind. AlreadyExists when the kind has one.
Status RegisterCodeGenerator(std::unique_ptr<CodeGenerator> generator);

// The kinds with a generator, sorted ("llvm", ...).
std::vector<std::string> RegisteredCodeGeneratorKinds();

}  // namespace tunefarm

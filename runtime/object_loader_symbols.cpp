// ResolveRuntimeSymbol: what a loaded kernel object's undefined symbols
// resolve to by default (object_loader.h).
//
// The table names every function the code generator calls -- the runtime,
// memset/memcpy/memmove, and the libm functions math lowers to when it does
// not inline them -- the way the JIT's symbol map does
// (compiler/codegen/llvm/codegen_llvm_jit.cpp), so that a process need not be
// linked with -rdynamic, and a statically linked worker (where dlsym sees
// nothing) still finds them. dlsym(RTLD_DEFAULT) is the fallback for helper
// routines LLVM may call that no table lists.
#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <string_view>

#include "tunefarm/runtime/object_loader.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm {
namespace {

struct KnownSymbol {
  std::string_view name;
  void* address;
};

template <typename Fn>
void* Address(Fn* fn) {
  return reinterpret_cast<void*>(fn);
}

using F = float(float);
using D = double(double);
using F2 = float(float, float);
using D2 = double(double, double);
using F3 = float(float, float, float);
using D3 = double(double, double, double);

const KnownSymbol kKnownSymbols[] = {
    {"tunefarm_parallel_for", Address(&tunefarm_parallel_for)},
    {"tunefarm_alloc", Address(&tunefarm_alloc)},
    {"tunefarm_free", Address(&tunefarm_free)},
    {"tunefarm_get_num_threads", Address(&tunefarm_get_num_threads)},
    {"memset", Address<void*(void*, int, size_t)>(&::memset)},
    {"memcpy", Address<void*(void*, const void*, size_t)>(&::memcpy)},
    {"memmove", Address<void*(void*, const void*, size_t)>(&::memmove)},
    {"expf", Address<F>(&::expf)},
    {"exp", Address<D>(&::exp)},
    {"exp2f", Address<F>(&::exp2f)},
    {"exp2", Address<D>(&::exp2)},
    {"logf", Address<F>(&::logf)},
    {"log", Address<D>(&::log)},
    {"log2f", Address<F>(&::log2f)},
    {"log2", Address<D>(&::log2)},
    {"log10f", Address<F>(&::log10f)},
    {"log10", Address<D>(&::log10)},
    {"sqrtf", Address<F>(&::sqrtf)},
    {"sqrt", Address<D>(&::sqrt)},
    {"tanhf", Address<F>(&::tanhf)},
    {"tanh", Address<D>(&::tanh)},
    {"erff", Address<F>(&::erff)},
    {"erf", Address<D>(&::erf)},
    {"sinf", Address<F>(&::sinf)},
    {"sin", Address<D>(&::sin)},
    {"cosf", Address<F>(&::cosf)},
    {"cos", Address<D>(&::cos)},
    {"floorf", Address<F>(&::floorf)},
    {"floor", Address<D>(&::floor)},
    {"ceilf", Address<F>(&::ceilf)},
    {"ceil", Address<D>(&::ceil)},
    {"roundf", Address<F>(&::roundf)},
    {"round", Address<D>(&::round)},
    {"truncf", Address<F>(&::truncf)},
    {"trunc", Address<D>(&::trunc)},
    {"rintf", Address<F>(&::rintf)},
    {"rint", Address<D>(&::rint)},
    {"nearbyintf", Address<F>(&::nearbyintf)},
    {"nearbyint", Address<D>(&::nearbyint)},
    {"fabsf", Address<F>(&::fabsf)},
    {"fabs", Address<D>(&::fabs)},
    {"powf", Address<F2>(&::powf)},
    {"pow", Address<D2>(&::pow)},
    {"fmodf", Address<F2>(&::fmodf)},
    {"fmod", Address<D2>(&::fmod)},
    {"fminf", Address<F2>(&::fminf)},
    {"fmin", Address<D2>(&::fmin)},
    {"fmaxf", Address<F2>(&::fmaxf)},
    {"fmax", Address<D2>(&::fmax)},
    {"fmaf", Address<F3>(&::fmaf)},
    {"fma", Address<D3>(&::fma)},
};

}  // namespace

void* ResolveRuntimeSymbol(const std::string& name) {
  for (const KnownSymbol& known : kKnownSymbols) {
    if (known.name == name) return known.address;
  }
  return dlsym(RTLD_DEFAULT, name.c_str());
}

}  // namespace tunefarm

// LoadObject: loads a relocatable ELF object (what EmitObject and
// EmitCombinedObject write) into this process and hands out its entries,
// without LLVM -- for a measurement worker on a board that links only the
// runtime, fed object bytes built for it elsewhere.
//
// Supported: little-endian ELF64 relocatable objects (ET_REL) for the machine
// this process runs on, x86-64 or AArch64, with RELA relocations. Allocated
// sections are copied into fresh pages: code becomes read+execute, constants
// read-only, data read+write (never writable and executable at once).
// Undefined symbols are resolved through a SymbolResolver; a call to one that
// lands out of the instruction's range goes through a stub (x86-64) or veneer
// (AArch64) in the image, and references through the GOT get slots in it.
// Unwind tables (.eh_frame) are not loaded and not registered: the kernels
// never throw. Constructors (.init_array) are not run: an object that has
// them is refused.
//
// Inputs come from the network: every header, offset, index and relocation
// is bounds-checked. Bytes that are not such an object, a relocation type the
// loader does not know (named, with its section and offset), an undefined
// symbol nothing resolves (named), or a file whose sections, symbols or
// relocations point outside it are InvalidArgument; nothing crashes.
//
// Ownership: a LoadedObject owns the pages; destroying it unmaps them, after
// which no pointer Symbol handed out may be called. Thread safety: LoadObject
// may run on several threads at once; a LoadedObject is immutable.
//
// This is part of the runtime library: it uses only libc, libstdc++ and libdl,
// so that it cross-compiles for a board with its C++ compiler alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tunefarm/common/status.h"

namespace tunefarm {

// The address of the function or data an object's undefined symbol `name`
// names, or nullptr when the resolver knows none.
using SymbolResolver = std::function<void*(const std::string& name)>;

// The runtime's own functions (runtime.h), the C library functions generated
// code calls (memset, memcpy, memmove, libm: expf, tanhf, erff, ...), then
// whatever dlsym(RTLD_DEFAULT, name) finds; nullptr when none of them has it.
void* ResolveRuntimeSymbol(const std::string& name);

// What LoadObject did, for diagnostics and tests.
struct LoadedObjectStats {
  size_t image_bytes = 0;   // the pages mapped
  size_t sections = 0;      // sections copied (or zero-filled, for .bss)
  size_t relocations = 0;   // relocations applied
  size_t stubs = 0;         // call stubs / veneers made for targets out of range
  size_t got_slots = 0;     // GOT slots made
};

class LoadedObject {
 public:
  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;

  // The address of the global (or weak) symbol `name` the object defines;
  // NotFound naming it when the object defines none.
  Result<void*> Symbol(std::string_view name) const;
  const LoadedObjectStats& stats() const { return stats_; }

 private:
  friend class ObjectImageBuilder;
  LoadedObject() = default;

  void* mapping_ = nullptr;  // from mmap; unmapped by the destructor
  size_t mapping_bytes_ = 0;
  std::unordered_map<std::string, uintptr_t> symbols_;
  LoadedObjectStats stats_;
};

// Loads `elf_bytes` (copied: the caller may free them on return) and
// resolves its undefined symbols through `resolve`. Errors as the header
// comment says.
Result<std::unique_ptr<LoadedObject>> LoadObject(std::string_view elf_bytes,
                                                 const SymbolResolver& resolve = ResolveRuntimeSymbol);

}  // namespace tunefarm

// One architecture's relocations for the object loader (object_loader.h):
// how wide each relocation type's patch is, whether it may need a call stub
// or a GOT slot, and how to apply it. elf_relocate_x86_64.cpp and
// elf_relocate_aarch64.cpp each define one Architecture; both are compiled on
// every host (they only do arithmetic on bytes), and the loader picks the one
// of the machine it runs on.
//
// Ownership: a Trampolines writes into stub and GOT areas the loader reserved
// in the image (capacity counted from the relocations before mapping); it
// owns nothing.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <map>

#include "tunefarm/common/status.h"

namespace tunefarm::elf {

// One relocation, resolved: what the architecture needs to patch `place`.
struct Fixup {
  uint32_t type = 0;
  uint8_t* place = nullptr;  // the bytes to patch, writable now
  uint64_t address = 0;      // P: where `place` is at run time (the same address: patched in place)
  uint64_t symbol = 0;       // S
  int64_t addend = 0;        // A
  bool external = false;     // S came from the resolver (may be far from the image)
};

// What a relocation type asks of the layout before the image exists.
struct RelocationNeeds {
  bool known = false;   // the architecture supports this type
  size_t width = 0;     // bytes patched at r_offset
  bool stub = false;    // may need a call stub / veneer
  bool got = false;     // needs a GOT slot
};

// The image's call stubs and GOT slots, made on demand and shared by every
// relocation with the same target (same value).
class Trampolines {
 public:
  using StubWriter = void (*)(uint8_t* at, uint64_t target);
  Trampolines(uint8_t* stubs, size_t stub_capacity, size_t stub_bytes, StubWriter write_stub, uint8_t* got,
              size_t got_capacity)
      : stubs_(stubs), stub_capacity_(stub_capacity), stub_bytes_(stub_bytes), write_stub_(write_stub), got_(got),
        got_capacity_(got_capacity) {}

  // The address of a stub that jumps to `target`.
  Result<uint64_t> StubTo(uint64_t target);
  // The address of an 8-byte slot holding `value`.
  Result<uint64_t> GotSlotFor(uint64_t value);
  size_t stubs_used() const { return stub_at_.size(); }
  size_t got_used() const { return got_at_.size(); }

 private:
  uint8_t* stubs_;
  size_t stub_capacity_, stub_bytes_;
  StubWriter write_stub_;
  uint8_t* got_;
  size_t got_capacity_;
  std::map<uint64_t, uint64_t> stub_at_, got_at_;  // target / value -> address
};

struct Architecture {
  uint16_t machine;   // EM_X86_64, EM_AARCH64
  const char* name;   // "x86-64"
  size_t stub_bytes;  // one stub, a multiple of 8 (stubs are 8-byte aligned)
  Trampolines::StubWriter write_stub;
  RelocationNeeds (*needs)(uint32_t type);
  // "R_X86_64_PLT32"; nullptr for a type the architecture does not define.
  const char* (*type_name)(uint32_t type);
  // Patches one relocation. The caller checked that `width` bytes at
  // fixup.place lie inside the section. Errors say why (out of range, ...);
  // the caller adds where.
  Status (*apply)(const Fixup& fixup, Trampolines& trampolines);
};

const Architecture& X86_64Relocations();
const Architecture& AArch64Relocations();

// Little-endian accessors for unaligned places.
uint32_t Read32(const uint8_t* p);
void Write16(uint8_t* p, uint16_t v);
void Write32(uint8_t* p, uint32_t v);
void Write64(uint8_t* p, uint64_t v);

// True when v fits a signed field of `bits` bits.
inline bool FitsSigned(int64_t v, int bits) {
  return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
}

}  // namespace tunefarm::elf

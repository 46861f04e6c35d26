// x86-64 relocations for the object loader (elf_relocate.h), for the small
// code model LLVM uses for position-independent objects: calls through PLT32,
// constant pools through PC32, external data through GOTPCREL(X), and the
// absolute forms data sections may hold.
//
// A PC-relative field reaches ±2 GiB. The image keeps the object's own
// references in reach; a call or jump to a resolved function beyond it goes
// through a 16-byte stub in the image, `jmp *0(%rip)` followed by the target.
// GOT loads are not relaxed into LEAs: the slot is simply there.
#include "elf_relocate.h"

namespace tunefarm::elf {
namespace {

const char* TypeName(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return "R_X86_64_NONE";
    case R_X86_64_64: return "R_X86_64_64";
    case R_X86_64_PC32: return "R_X86_64_PC32";
    case R_X86_64_GOT32: return "R_X86_64_GOT32";
    case R_X86_64_PLT32: return "R_X86_64_PLT32";
    case R_X86_64_COPY: return "R_X86_64_COPY";
    case R_X86_64_GLOB_DAT: return "R_X86_64_GLOB_DAT";
    case R_X86_64_JUMP_SLOT: return "R_X86_64_JUMP_SLOT";
    case R_X86_64_RELATIVE: return "R_X86_64_RELATIVE";
    case R_X86_64_GOTPCREL: return "R_X86_64_GOTPCREL";
    case R_X86_64_32: return "R_X86_64_32";
    case R_X86_64_32S: return "R_X86_64_32S";
    case R_X86_64_16: return "R_X86_64_16";
    case R_X86_64_PC16: return "R_X86_64_PC16";
    case R_X86_64_8: return "R_X86_64_8";
    case R_X86_64_PC8: return "R_X86_64_PC8";
    case R_X86_64_DTPMOD64: return "R_X86_64_DTPMOD64";
    case R_X86_64_DTPOFF64: return "R_X86_64_DTPOFF64";
    case R_X86_64_TPOFF64: return "R_X86_64_TPOFF64";
    case R_X86_64_TLSGD: return "R_X86_64_TLSGD";
    case R_X86_64_TLSLD: return "R_X86_64_TLSLD";
    case R_X86_64_DTPOFF32: return "R_X86_64_DTPOFF32";
    case R_X86_64_GOTTPOFF: return "R_X86_64_GOTTPOFF";
    case R_X86_64_TPOFF32: return "R_X86_64_TPOFF32";
    case R_X86_64_PC64: return "R_X86_64_PC64";
    case R_X86_64_GOTOFF64: return "R_X86_64_GOTOFF64";
    case R_X86_64_GOTPC32: return "R_X86_64_GOTPC32";
    case R_X86_64_GOT64: return "R_X86_64_GOT64";
    case R_X86_64_GOTPCREL64: return "R_X86_64_GOTPCREL64";
    case R_X86_64_GOTPC64: return "R_X86_64_GOTPC64";
    case R_X86_64_GOTPLT64: return "R_X86_64_GOTPLT64";
    case R_X86_64_PLTOFF64: return "R_X86_64_PLTOFF64";
    case R_X86_64_SIZE32: return "R_X86_64_SIZE32";
    case R_X86_64_SIZE64: return "R_X86_64_SIZE64";
    case R_X86_64_GOTPC32_TLSDESC: return "R_X86_64_GOTPC32_TLSDESC";
    case R_X86_64_TLSDESC_CALL: return "R_X86_64_TLSDESC_CALL";
    case R_X86_64_TLSDESC: return "R_X86_64_TLSDESC";
    case R_X86_64_IRELATIVE: return "R_X86_64_IRELATIVE";
    case R_X86_64_RELATIVE64: return "R_X86_64_RELATIVE64";
    case R_X86_64_GOTPCRELX: return "R_X86_64_GOTPCRELX";
    case R_X86_64_REX_GOTPCRELX: return "R_X86_64_REX_GOTPCRELX";
  }
  return nullptr;
}

RelocationNeeds Needs(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return {true, 0, false, false};
    case R_X86_64_64:
    case R_X86_64_PC64: return {true, 8, false, false};
    case R_X86_64_32:
    case R_X86_64_32S: return {true, 4, false, false};
    case R_X86_64_PC32:
    case R_X86_64_PLT32: return {true, 4, true, false};
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX: return {true, 4, false, true};
  }
  return {};
}

// jmp *0(%rip); .quad target
void WriteStub(uint8_t* at, uint64_t target) {
  const uint8_t jump[8] = {0xff, 0x25, 0x00, 0x00, 0x00, 0x00, 0xcc, 0xcc};
  for (int i = 0; i < 6; ++i) at[i] = jump[i];
  Write64(at + 6, target);
  at[14] = 0xcc;  // int3 padding to the next stub
  at[15] = 0xcc;
}

Status OutOfRange(int64_t value, const char* what) {
  return Status::InvalidArgument(std::string("the ") + what + " " + std::to_string(value) + " does not fit its field");
}

// A 32-bit PC-relative field that ends the instruction (call, jmp, the
// displacement of a RIP-relative operand when it is last): an external
// target out of reach is jumped to through a stub instead. The instruction
// goes to P + 4 + field = S + A + 4 either way.
Status ApplyPc32(const Fixup& f, Trampolines& trampolines) {
  int64_t delta = int64_t(f.symbol + uint64_t(f.addend) - f.address);
  if (!FitsSigned(delta, 32) && f.external) {
    uint64_t target = f.symbol + uint64_t(f.addend) + 4;
    TF_ASSIGN_OR_RETURN(uint64_t stub, trampolines.StubTo(target));
    delta = int64_t(stub - (f.address + 4));
  }
  if (!FitsSigned(delta, 32)) return OutOfRange(delta, "PC-relative distance");
  Write32(f.place, uint32_t(int32_t(delta)));
  return Status::OK();
}

Status Apply(const Fixup& f, Trampolines& trampolines) {
  const uint64_t s_plus_a = f.symbol + uint64_t(f.addend);
  switch (f.type) {
    case R_X86_64_NONE: return Status::OK();
    case R_X86_64_64: Write64(f.place, s_plus_a); return Status::OK();
    case R_X86_64_PC64: Write64(f.place, s_plus_a - f.address); return Status::OK();
    case R_X86_64_32:
      if (s_plus_a > UINT32_MAX) return OutOfRange(int64_t(s_plus_a), "absolute address");
      Write32(f.place, uint32_t(s_plus_a));
      return Status::OK();
    case R_X86_64_32S:
      if (!FitsSigned(int64_t(s_plus_a), 32)) return OutOfRange(int64_t(s_plus_a), "absolute address");
      Write32(f.place, uint32_t(s_plus_a));
      return Status::OK();
    case R_X86_64_PC32:
    case R_X86_64_PLT32: return ApplyPc32(f, trampolines);
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX: {
      TF_ASSIGN_OR_RETURN(uint64_t slot, trampolines.GotSlotFor(f.symbol));
      int64_t delta = int64_t(slot + uint64_t(f.addend) - f.address);
      if (!FitsSigned(delta, 32)) return OutOfRange(delta, "distance to the GOT slot");
      Write32(f.place, uint32_t(int32_t(delta)));
      return Status::OK();
    }
  }
  return Status::InvalidArgument("this relocation type is not supported");
}

}  // namespace

const Architecture& X86_64Relocations() {
  static const Architecture arch{EM_X86_64, "x86-64", 16, &WriteStub, &Needs, &TypeName, &Apply};
  return arch;
}

}  // namespace tunefarm::elf

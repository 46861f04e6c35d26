// AArch64 relocations for the object loader (elf_relocate.h): what LLVM
// emits for position-independent objects in the small code model (BL/B to
// functions, ADRP + ADD/LDR to constant pools, ADRP + LDR through the GOT for
// external data, PREL32 in .eh_frame and jump tables, ABS64 in data), the
// branches within a section an assembler may leave, and the MOVZ/MOVK
// sequences of the large code model.
//
// Field layouts and overflow checks follow the ELF for the Arm 64-bit
// Architecture (AAELF64) relocation table. BL and B reach ±128 MiB: a call to
// a resolved function beyond that goes through a 16-byte veneer in the image,
// `ldr x16, #8; br x16; .quad target` (x16 is IP0, which the procedure call
// standard lets veneers clobber).
#include "elf_relocate.h"

namespace tunefarm::elf {
namespace {

// R_AARCH64_NONE's value in early ABI releases; readers still accept it.
constexpr uint32_t kWithdrawnNone = 256;

const char* TypeName(uint32_t type) {
  switch (type) {
    case R_AARCH64_NONE: return "R_AARCH64_NONE";
    case R_AARCH64_ABS64: return "R_AARCH64_ABS64";
    case R_AARCH64_ABS32: return "R_AARCH64_ABS32";
    case R_AARCH64_ABS16: return "R_AARCH64_ABS16";
    case R_AARCH64_PREL64: return "R_AARCH64_PREL64";
    case R_AARCH64_PREL32: return "R_AARCH64_PREL32";
    case R_AARCH64_PREL16: return "R_AARCH64_PREL16";
    case R_AARCH64_MOVW_UABS_G0: return "R_AARCH64_MOVW_UABS_G0";
    case R_AARCH64_MOVW_UABS_G0_NC: return "R_AARCH64_MOVW_UABS_G0_NC";
    case R_AARCH64_MOVW_UABS_G1: return "R_AARCH64_MOVW_UABS_G1";
    case R_AARCH64_MOVW_UABS_G1_NC: return "R_AARCH64_MOVW_UABS_G1_NC";
    case R_AARCH64_MOVW_UABS_G2: return "R_AARCH64_MOVW_UABS_G2";
    case R_AARCH64_MOVW_UABS_G2_NC: return "R_AARCH64_MOVW_UABS_G2_NC";
    case R_AARCH64_MOVW_UABS_G3: return "R_AARCH64_MOVW_UABS_G3";
    case R_AARCH64_LD_PREL_LO19: return "R_AARCH64_LD_PREL_LO19";
    case R_AARCH64_ADR_PREL_LO21: return "R_AARCH64_ADR_PREL_LO21";
    case R_AARCH64_ADR_PREL_PG_HI21: return "R_AARCH64_ADR_PREL_PG_HI21";
    case R_AARCH64_ADR_PREL_PG_HI21_NC: return "R_AARCH64_ADR_PREL_PG_HI21_NC";
    case R_AARCH64_ADD_ABS_LO12_NC: return "R_AARCH64_ADD_ABS_LO12_NC";
    case R_AARCH64_LDST8_ABS_LO12_NC: return "R_AARCH64_LDST8_ABS_LO12_NC";
    case R_AARCH64_TSTBR14: return "R_AARCH64_TSTBR14";
    case R_AARCH64_CONDBR19: return "R_AARCH64_CONDBR19";
    case R_AARCH64_JUMP26: return "R_AARCH64_JUMP26";
    case R_AARCH64_CALL26: return "R_AARCH64_CALL26";
    case R_AARCH64_LDST16_ABS_LO12_NC: return "R_AARCH64_LDST16_ABS_LO12_NC";
    case R_AARCH64_LDST32_ABS_LO12_NC: return "R_AARCH64_LDST32_ABS_LO12_NC";
    case R_AARCH64_LDST64_ABS_LO12_NC: return "R_AARCH64_LDST64_ABS_LO12_NC";
    case R_AARCH64_LDST128_ABS_LO12_NC: return "R_AARCH64_LDST128_ABS_LO12_NC";
    case R_AARCH64_MOVW_PREL_G0: return "R_AARCH64_MOVW_PREL_G0";
    case R_AARCH64_GOTREL64: return "R_AARCH64_GOTREL64";
    case R_AARCH64_GOTREL32: return "R_AARCH64_GOTREL32";
    case R_AARCH64_GOT_LD_PREL19: return "R_AARCH64_GOT_LD_PREL19";
    case R_AARCH64_ADR_GOT_PAGE: return "R_AARCH64_ADR_GOT_PAGE";
    case R_AARCH64_LD64_GOT_LO12_NC: return "R_AARCH64_LD64_GOT_LO12_NC";
    case R_AARCH64_TLSDESC_ADR_PAGE21: return "R_AARCH64_TLSDESC_ADR_PAGE21";
    case R_AARCH64_TLSDESC_LD64_LO12: return "R_AARCH64_TLSDESC_LD64_LO12";
    case R_AARCH64_TLSDESC_ADD_LO12: return "R_AARCH64_TLSDESC_ADD_LO12";
    case R_AARCH64_TLSDESC_CALL: return "R_AARCH64_TLSDESC_CALL";
    case R_AARCH64_COPY: return "R_AARCH64_COPY";
    case R_AARCH64_GLOB_DAT: return "R_AARCH64_GLOB_DAT";
    case R_AARCH64_JUMP_SLOT: return "R_AARCH64_JUMP_SLOT";
    case R_AARCH64_RELATIVE: return "R_AARCH64_RELATIVE";
  }
  return nullptr;
}

RelocationNeeds Needs(uint32_t type) {
  switch (type) {
    case R_AARCH64_NONE:
    case kWithdrawnNone: return {true, 0, false, false};
    case R_AARCH64_ABS64:
    case R_AARCH64_PREL64: return {true, 8, false, false};
    case R_AARCH64_ABS32:
    case R_AARCH64_PREL32: return {true, 4, false, false};
    case R_AARCH64_ABS16:
    case R_AARCH64_PREL16: return {true, 2, false, false};
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26: return {true, 4, true, false};
    case R_AARCH64_ADR_GOT_PAGE:
    case R_AARCH64_LD64_GOT_LO12_NC: return {true, 4, false, true};
    case R_AARCH64_MOVW_UABS_G0:
    case R_AARCH64_MOVW_UABS_G0_NC:
    case R_AARCH64_MOVW_UABS_G1:
    case R_AARCH64_MOVW_UABS_G1_NC:
    case R_AARCH64_MOVW_UABS_G2:
    case R_AARCH64_MOVW_UABS_G2_NC:
    case R_AARCH64_MOVW_UABS_G3:
    case R_AARCH64_LD_PREL_LO19:
    case R_AARCH64_ADR_PREL_LO21:
    case R_AARCH64_ADR_PREL_PG_HI21:
    case R_AARCH64_ADR_PREL_PG_HI21_NC:
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC:
    case R_AARCH64_LDST16_ABS_LO12_NC:
    case R_AARCH64_LDST32_ABS_LO12_NC:
    case R_AARCH64_LDST64_ABS_LO12_NC:
    case R_AARCH64_LDST128_ABS_LO12_NC:
    case R_AARCH64_TSTBR14:
    case R_AARCH64_CONDBR19: return {true, 4, false, false};
  }
  return {};
}

// ldr x16, #8; br x16; .quad target
void WriteVeneer(uint8_t* at, uint64_t target) {
  Write32(at, 0x58000050u);
  Write32(at + 4, 0xd61f0200u);
  Write64(at + 8, target);
}

uint64_t Page(uint64_t address) { return address & ~uint64_t(0xfff); }

Status OutOfRange(int64_t value, const char* what) {
  return Status::InvalidArgument(std::string("the ") + what + " " + std::to_string(value) + " does not fit its field");
}

Status Misaligned(uint64_t value, int alignment) {
  return Status::InvalidArgument("the target " + std::to_string(value) + " is not aligned to " +
                                 std::to_string(alignment) + " bytes, as the instruction's scaled offset needs");
}

// Replaces the bits of `mask` in the instruction at p with `bits` (already shifted).
void Patch(uint8_t* p, uint32_t mask, uint32_t bits) { Write32(p, (Read32(p) & ~mask) | (bits & mask)); }

// ADR / ADRP: a 21-bit immediate split into immlo (bits 30:29) and immhi (23:5).
void PatchAdr(uint8_t* p, int64_t imm) {
  uint32_t v = uint32_t(imm);
  Patch(p, (3u << 29) | (0x7ffffu << 5), ((v & 3u) << 29) | (((v >> 2) & 0x7ffffu) << 5));
}

// A PC-relative branch or literal load with a word offset of `bits` bits at bit 5 (B/BL: 26 bits at bit 0).
Status PatchBranch(uint8_t* p, int64_t delta, int bits, int shift, const char* what) {
  if ((delta & 3) != 0) return Misaligned(uint64_t(delta), 4);
  if (!FitsSigned(delta, bits + 2)) return OutOfRange(delta, what);
  const uint32_t field_mask = (1u << bits) - 1u;
  Patch(p, field_mask << shift, (uint32_t(delta >> 2) & field_mask) << shift);
  return Status::OK();
}

Status ApplyLo12(uint8_t* p, uint64_t value, int scale_log2) {
  uint64_t lo12 = value & 0xfff;
  if ((lo12 & ((uint64_t(1) << scale_log2) - 1)) != 0) return Misaligned(value, 1 << scale_log2);
  Patch(p, 0xfffu << 10, uint32_t(lo12 >> scale_log2) << 10);
  return Status::OK();
}

Status ApplyMovw(uint8_t* p, uint64_t value, int group, bool check) {
  if (check && group < 3 && (value >> (16 * (group + 1))) != 0) return OutOfRange(int64_t(value), "absolute address");
  Patch(p, 0xffffu << 5, uint32_t((value >> (16 * group)) & 0xffff) << 5);
  return Status::OK();
}

Status ApplyPage(uint8_t* p, uint64_t target, uint64_t address, bool check) {
  int64_t delta = int64_t(Page(target) - Page(address));
  if (check && !FitsSigned(delta, 33)) return OutOfRange(delta, "page distance");
  PatchAdr(p, delta >> 12);
  return Status::OK();
}

// A data field holding S + A (or S + A - P) of `bits` bits: signed or unsigned values fit.
Status ApplyData(uint8_t* p, int64_t value, int bits) {
  if (value < -(int64_t(1) << (bits - 1)) || value >= (int64_t(1) << bits)) return OutOfRange(value, "value");
  if (bits == 32) Write32(p, uint32_t(value));
  else Write16(p, uint16_t(value));
  return Status::OK();
}

Status Apply(const Fixup& f, Trampolines& trampolines) {
  const uint64_t s_plus_a = f.symbol + uint64_t(f.addend);
  const int64_t delta = int64_t(s_plus_a - f.address);
  switch (f.type) {
    case R_AARCH64_NONE:
    case kWithdrawnNone: return Status::OK();
    case R_AARCH64_ABS64: Write64(f.place, s_plus_a); return Status::OK();
    case R_AARCH64_PREL64: Write64(f.place, uint64_t(delta)); return Status::OK();
    case R_AARCH64_ABS32: return ApplyData(f.place, int64_t(s_plus_a), 32);
    case R_AARCH64_ABS16: return ApplyData(f.place, int64_t(s_plus_a), 16);
    case R_AARCH64_PREL32: return ApplyData(f.place, delta, 32);
    case R_AARCH64_PREL16: return ApplyData(f.place, delta, 16);
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26: {
      int64_t reach = delta;
      if (!FitsSigned(reach, 28) && f.external) {
        TF_ASSIGN_OR_RETURN(uint64_t veneer, trampolines.StubTo(s_plus_a));
        reach = int64_t(veneer - f.address);
      }
      return PatchBranch(f.place, reach, 26, 0, "branch distance");
    }
    case R_AARCH64_CONDBR19:
    case R_AARCH64_LD_PREL_LO19: return PatchBranch(f.place, delta, 19, 5, "PC-relative distance");
    case R_AARCH64_TSTBR14: return PatchBranch(f.place, delta, 14, 5, "branch distance");
    case R_AARCH64_ADR_PREL_LO21:
      if (!FitsSigned(delta, 21)) return OutOfRange(delta, "PC-relative distance");
      PatchAdr(f.place, delta);
      return Status::OK();
    case R_AARCH64_ADR_PREL_PG_HI21: return ApplyPage(f.place, s_plus_a, f.address, true);
    case R_AARCH64_ADR_PREL_PG_HI21_NC: return ApplyPage(f.place, s_plus_a, f.address, false);
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC: return ApplyLo12(f.place, s_plus_a, 0);
    case R_AARCH64_LDST16_ABS_LO12_NC: return ApplyLo12(f.place, s_plus_a, 1);
    case R_AARCH64_LDST32_ABS_LO12_NC: return ApplyLo12(f.place, s_plus_a, 2);
    case R_AARCH64_LDST64_ABS_LO12_NC: return ApplyLo12(f.place, s_plus_a, 3);
    case R_AARCH64_LDST128_ABS_LO12_NC: return ApplyLo12(f.place, s_plus_a, 4);
    case R_AARCH64_ADR_GOT_PAGE: {
      TF_ASSIGN_OR_RETURN(uint64_t slot, trampolines.GotSlotFor(s_plus_a));
      return ApplyPage(f.place, slot, f.address, true);
    }
    case R_AARCH64_LD64_GOT_LO12_NC: {
      TF_ASSIGN_OR_RETURN(uint64_t slot, trampolines.GotSlotFor(s_plus_a));
      return ApplyLo12(f.place, slot, 3);
    }
    case R_AARCH64_MOVW_UABS_G0: return ApplyMovw(f.place, s_plus_a, 0, true);
    case R_AARCH64_MOVW_UABS_G0_NC: return ApplyMovw(f.place, s_plus_a, 0, false);
    case R_AARCH64_MOVW_UABS_G1: return ApplyMovw(f.place, s_plus_a, 1, true);
    case R_AARCH64_MOVW_UABS_G1_NC: return ApplyMovw(f.place, s_plus_a, 1, false);
    case R_AARCH64_MOVW_UABS_G2: return ApplyMovw(f.place, s_plus_a, 2, true);
    case R_AARCH64_MOVW_UABS_G2_NC: return ApplyMovw(f.place, s_plus_a, 2, false);
    case R_AARCH64_MOVW_UABS_G3: return ApplyMovw(f.place, s_plus_a, 3, false);
  }
  return Status::InvalidArgument("this relocation type is not supported");
}

}  // namespace

const Architecture& AArch64Relocations() {
  static const Architecture arch{EM_AARCH64, "AArch64", 16, &WriteVeneer, &Needs, &TypeName, &Apply};
  return arch;
}

}  // namespace tunefarm::elf

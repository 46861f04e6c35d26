// The object loader's view of a relocatable ELF64 file (object_loader.h):
// its sections, symbols and relocation tables, parsed from untrusted bytes
// and checked so that every later step may index them without checking again.
//
// Invariants of a ParsedObject that ParseObject returned:
//   - every section with file contents lies inside the bytes;
//   - `symbols` and `symbol_names` have the same size; every name is a
//     NUL-terminated string inside the string table (the view excludes the NUL);
//     a symbol's section index is SHN_UNDEF, SHN_ABS, SHN_COMMON or < sections.size();
//   - every entry of `relocation_tables` applies to a loaded section, and each
//     relocation's symbol index is < symbols.size() (its offset is checked
//     when applied, against the width the architecture patches).
// The views point into the bytes given to ParseObject, which must outlive it.
#pragma once

#include <elf.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::elf {

// Where a loaded section goes: the image has one region per protection.
enum class Region { kText, kReadOnly, kData };

struct Section {
  std::string_view name;
  Elf64_Shdr header{};
  bool loaded = false;    // copied into the image (allocated, not unwind info or a note)
  Region region = Region::kReadOnly;
  uint64_t image_offset = 0;  // set by the layout, when loaded
};

struct RelocationTable {
  uint32_t section = 0;  // the RELA section
  uint32_t target = 0;   // the loaded section it patches
  std::vector<Elf64_Rela> entries;
};

struct ParsedObject {
  uint16_t machine = 0;
  std::vector<Section> sections;
  std::vector<Elf64_Sym> symbols;  // index 0 is the null symbol; empty without a symbol table
  std::vector<std::string_view> symbol_names;
  std::vector<RelocationTable> relocation_tables;
};

// Parses and checks `bytes` (see the invariants above). Does not check that
// the machine is this process's: the loader does.
Result<ParsedObject> ParseObject(std::string_view bytes);

// "section 3 (.text)": how errors name a section.
std::string SectionLabel(const ParsedObject& object, uint32_t index);

}  // namespace tunefarm::elf

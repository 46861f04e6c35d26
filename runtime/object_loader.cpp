// LoadObject: lay an ELF object's sections out in one mapping, relocate them
// there, then protect each region.
//
// The image is one anonymous mapping, so that every reference between the
// object's own sections stays within the reach of PC-relative code (±2 GiB on
// x86-64, ±4 GiB for AArch64 ADRP, ±128 MiB for AArch64 branches to the stubs):
//   [code sections | call stubs]  [read-only sections | GOT]  [data, .bss]
// each region starting on a page of its own. The whole mapping is writable
// (never executable) while sections are copied and patched; then the code
// region becomes read+execute and the read-only one read-only. Only targets
// outside the image (the resolver's) can be out of range; calls to them go
// through stubs, whose count is bounded by the branch relocations counted
// before mapping.
#include "tunefarm/runtime/object_loader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "elf_object.h"
#include "elf_relocate.h"

namespace tunefarm {
namespace {

using elf::Region;

// What a hostile file may make the loader map: the image, and the code
// region inside it (so that a branch anywhere in it reaches the stubs at its end).
constexpr uint64_t kMaxImageBytes = uint64_t(1) << 30;
constexpr uint64_t kMaxTextBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxAlignment = uint64_t(64) << 10;

Status Bad(const std::string& why) { return Status::InvalidArgument("cannot load object: " + why); }

std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

uint64_t AlignUp(uint64_t v, uint64_t alignment) { return (v + alignment - 1) & ~(alignment - 1); }

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_386: return "i386";
    case EM_ARM: return "32-bit ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
  }
  return "ELF machine " + std::to_string(machine);
}

const elf::Architecture* HostArchitecture() {
#if defined(__x86_64__)
  return &elf::X86_64Relocations();
#elif defined(__aarch64__)
  return &elf::AArch64Relocations();
#else
  return nullptr;
#endif
}

struct Layout {
  uint64_t region_start[3] = {0, 0, 0};
  uint64_t stubs = 0, got = 0;  // offsets in the image
  size_t stub_capacity = 0, got_capacity = 0;
  uint64_t text_end = 0, read_only_end = 0;  // ends of the protected regions (page-aligned)
  uint64_t image_bytes = 0, alignment = 1;
};

}  // namespace

// Builds one LoadedObject; a class so that it may fill LoadedObject's members.
class ObjectImageBuilder {
 public:
  ObjectImageBuilder(elf::ParsedObject& object, const elf::Architecture& arch, const SymbolResolver& resolve,
                     std::string_view bytes)
      : object_(object), arch_(arch), resolve_(resolve), bytes_(bytes), resolved_(object.symbols.size()) {}

  Result<std::unique_ptr<LoadedObject>> Build() {
    TF_RETURN_IF_ERROR(CountTrampolines());
    TF_RETURN_IF_ERROR(LayOut());
    loaded_.reset(new LoadedObject());
    TF_RETURN_IF_ERROR(Map());
    TF_RETURN_IF_ERROR(Relocate());
    TF_RETURN_IF_ERROR(CollectSymbols());
    TF_RETURN_IF_ERROR(Protect());
    return std::move(loaded_);
  }

 private:
  std::string Where(const elf::RelocationTable& table, const Elf64_Rela& r) const {
    uint32_t type = ELF64_R_TYPE(r.r_info), sym = ELF64_R_SYM(r.r_info);
    const char* name = arch_.type_name(type);
    std::string text = "relocation " + std::string(name ? name : "type") + " (" + std::to_string(type) + ") at " +
                       SectionLabel(object_, table.target) + "+" + Hex(r.r_offset);
    if (sym != 0 && !object_.symbol_names[sym].empty()) {
      text += " against '" + std::string(object_.symbol_names[sym]) + "'";
    }
    return text;
  }

  Status CountTrampolines() {
    for (const elf::RelocationTable& table : object_.relocation_tables) {
      for (const Elf64_Rela& r : table.entries) {
        elf::RelocationNeeds needs = arch_.needs(ELF64_R_TYPE(r.r_info));
        if (!needs.known) return Bad(Where(table, r) + ": this relocation type is not supported");
        layout_.stub_capacity += needs.stub ? 1 : 0;
        layout_.got_capacity += needs.got ? 1 : 0;
      }
    }
    return Status::OK();
  }

  Status LayOut() {
    uint64_t cursor[3] = {0, 0, 0};
    for (elf::Section& s : object_.sections) {
      if (!s.loaded) continue;
      uint64_t alignment = std::max<uint64_t>(s.header.sh_addralign, 1);
      if (alignment > kMaxAlignment || s.header.sh_size > kMaxImageBytes) {
        return Bad(std::string(s.name) + " asks for " + std::to_string(s.header.sh_size) + " bytes aligned to " +
                   std::to_string(alignment) + ", more than the loader maps");
      }
      uint64_t& at = cursor[int(s.region)];
      s.image_offset = AlignUp(at, alignment);
      at = s.image_offset + s.header.sh_size;
      if (at > kMaxImageBytes) return Bad("its sections need more than " + std::to_string(kMaxImageBytes) + " bytes");
      layout_.alignment = std::max(layout_.alignment, alignment);
    }
    // Regions start on a page (for mprotect) aligned for every section in them.
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    layout_.alignment = std::max(layout_.alignment, page);
    const uint64_t region_alignment = layout_.alignment;
    layout_.stubs = AlignUp(cursor[int(Region::kText)], 16);
    uint64_t text_bytes = layout_.stubs + layout_.stub_capacity * arch_.stub_bytes;
    if (text_bytes > kMaxTextBytes) return Bad("its code needs more than " + std::to_string(kMaxTextBytes) + " bytes");
    layout_.region_start[int(Region::kText)] = 0;
    layout_.text_end = AlignUp(text_bytes, region_alignment);
    layout_.region_start[int(Region::kReadOnly)] = layout_.text_end;
    layout_.got = layout_.text_end + AlignUp(cursor[int(Region::kReadOnly)], 8);
    layout_.read_only_end = AlignUp(layout_.got + layout_.got_capacity * 8, region_alignment);
    layout_.region_start[int(Region::kData)] = layout_.read_only_end;
    layout_.image_bytes = AlignUp(layout_.read_only_end + cursor[int(Region::kData)], page);
    if (layout_.image_bytes > kMaxImageBytes) {
      return Bad("its image needs more than " + std::to_string(kMaxImageBytes) + " bytes");
    }
    for (elf::Section& s : object_.sections) {
      if (s.loaded) s.image_offset += layout_.region_start[int(s.region)];
    }
    return Status::OK();
  }

  Status Map() {
    // Over-allocated by the largest alignment beyond a page, so the image
    // base can be aligned for every section.
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    size_t bytes = size_t(std::max<uint64_t>(layout_.image_bytes, page) + layout_.alignment - page);
    void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) {
      return Status::Internal("cannot load object: mmap of " + std::to_string(bytes) + " bytes failed");
    }
    loaded_->mapping_ = mapping;
    loaded_->mapping_bytes_ = bytes;
    base_ = reinterpret_cast<uint8_t*>(AlignUp(reinterpret_cast<uint64_t>(mapping), layout_.alignment));
    for (const elf::Section& s : object_.sections) {
      if (!s.loaded) continue;
      ++loaded_->stats_.sections;
      if (s.header.sh_type == SHT_NOBITS) continue;  // the mapping is zero-filled
      std::memcpy(base_ + s.image_offset, bytes_.data() + s.header.sh_offset, size_t(s.header.sh_size));
    }
    loaded_->stats_.image_bytes = size_t(layout_.image_bytes);
    return Status::OK();
  }

  // S for symbol `index`; `external` when the resolver gave it. `where`
  // names the reference in errors (built only for one).
  template <typename Where>
  Result<uint64_t> SymbolValue(uint32_t index, bool& external, const Where& where) {
    external = false;
    if (index == 0) return uint64_t(0);
    if (resolved_[index]) {
      external = object_.symbols[index].st_shndx == SHN_UNDEF || object_.symbols[index].st_shndx == SHN_ABS;
      return *resolved_[index];
    }
    const Elf64_Sym& sym = object_.symbols[index];
    const std::string name(object_.symbol_names[index]);
    int type = ELF64_ST_TYPE(sym.st_info);
    if (type == STT_TLS || type == STT_GNU_IFUNC) {
      return Bad(where() + ": symbol '" + name + "' is of a type the loader does not support");
    }
    uint64_t value = 0;
    if (sym.st_shndx == SHN_UNDEF) {
      if (name.empty()) return Bad(where() + ": an undefined symbol without a name");
      void* address = resolve_ ? resolve_(name) : nullptr;
      if (address == nullptr && ELF64_ST_BIND(sym.st_info) != STB_WEAK) {
        return Bad("undefined symbol '" + name + "': nothing resolves it (" + where() + ")");
      }
      value = reinterpret_cast<uint64_t>(address);
      external = true;
    } else if (sym.st_shndx == SHN_ABS) {
      value = sym.st_value;
      external = true;
    } else if (sym.st_shndx == SHN_COMMON) {
      return Bad(where() + ": common symbol '" + name + "' is not supported");
    } else {
      const elf::Section& s = object_.sections[sym.st_shndx];
      if (!s.loaded) {
        return Bad(where() + ": the target lies in " + SectionLabel(object_, sym.st_shndx) + ", which is not loaded");
      }
      if (sym.st_value > s.header.sh_size) {
        return Bad(where() + ": symbol '" + name + "' lies past the end of its section");
      }
      value = reinterpret_cast<uint64_t>(base_) + s.image_offset + sym.st_value;
    }
    resolved_[index] = value;
    return value;
  }

  Status Relocate() {
    elf::Trampolines trampolines(base_ + layout_.stubs, layout_.stub_capacity, arch_.stub_bytes, arch_.write_stub,
                                 base_ + layout_.got, layout_.got_capacity);
    for (const elf::RelocationTable& table : object_.relocation_tables) {
      const elf::Section& target = object_.sections[table.target];
      for (const Elf64_Rela& r : table.entries) {
        const uint32_t type = ELF64_R_TYPE(r.r_info);
        const size_t width = arch_.needs(type).width;
        if (r.r_offset > target.header.sh_size || width > target.header.sh_size - r.r_offset) {
          return Bad(Where(table, r) + ": it patches bytes outside its section (" +
                     std::to_string(target.header.sh_size) + " bytes)");
        }
        elf::Fixup fixup;
        fixup.type = type;
        fixup.place = base_ + target.image_offset + r.r_offset;
        fixup.address = reinterpret_cast<uint64_t>(fixup.place);
        fixup.addend = r.r_addend;
        auto where = [&] { return Where(table, r); };
        TF_ASSIGN_OR_RETURN(fixup.symbol, SymbolValue(ELF64_R_SYM(r.r_info), fixup.external, where));
        Status applied = arch_.apply(fixup, trampolines);
        if (!applied.ok()) return Bad(where() + ": " + applied.message());
        ++loaded_->stats_.relocations;
      }
    }
    loaded_->stats_.stubs = trampolines.stubs_used();
    loaded_->stats_.got_slots = trampolines.got_used();
    return Status::OK();
  }

  Status CollectSymbols() {
    for (size_t i = 1; i < object_.symbols.size(); ++i) {
      const Elf64_Sym& sym = object_.symbols[i];
      int bind = ELF64_ST_BIND(sym.st_info);
      if ((bind != STB_GLOBAL && bind != STB_WEAK) || object_.symbol_names[i].empty()) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_COMMON) continue;
      if (sym.st_shndx < object_.sections.size() && !object_.sections[sym.st_shndx].loaded) continue;
      bool external = false;
      auto where = [i] { return "symbol " + std::to_string(i); };
      TF_ASSIGN_OR_RETURN(uint64_t address, SymbolValue(uint32_t(i), external, where));
      if (!loaded_->symbols_.emplace(std::string(object_.symbol_names[i]), uintptr_t(address)).second) {
        return Bad("symbol '" + std::string(object_.symbol_names[i]) + "' is defined twice");
      }
    }
    return Status::OK();
  }

  Status Protect() {
    uint8_t* text_end = base_ + layout_.text_end;
    // AArch64 fetches instructions through a cache the data writes did not
    // update; on x86-64 this compiles to nothing.
    __builtin___clear_cache(reinterpret_cast<char*>(base_), reinterpret_cast<char*>(text_end));
    if (layout_.text_end > 0 && mprotect(base_, layout_.text_end, PROT_READ | PROT_EXEC) != 0) {
      return Status::Internal("cannot load object: mprotect of its code failed");
    }
    size_t read_only = size_t(layout_.read_only_end - layout_.text_end);
    if (read_only > 0 && mprotect(text_end, read_only, PROT_READ) != 0) {
      return Status::Internal("cannot load object: mprotect of its constants failed");
    }
    return Status::OK();
  }

  elf::ParsedObject& object_;
  const elf::Architecture& arch_;
  const SymbolResolver& resolve_;
  std::string_view bytes_;
  std::vector<std::optional<uint64_t>> resolved_;  // per symbol index
  Layout layout_;
  uint8_t* base_ = nullptr;
  std::unique_ptr<LoadedObject> loaded_;
};

LoadedObject::~LoadedObject() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

Result<void*> LoadedObject::Symbol(std::string_view name) const {
  auto it = symbols_.find(std::string(name));
  if (it == symbols_.end()) return Status::NotFound("the loaded object defines no symbol '" + std::string(name) + "'");
  return reinterpret_cast<void*>(it->second);
}

Result<std::unique_ptr<LoadedObject>> LoadObject(std::string_view elf_bytes, const SymbolResolver& resolve) {
  TF_ASSIGN_OR_RETURN(elf::ParsedObject object, elf::ParseObject(elf_bytes));
  const elf::Architecture* arch = HostArchitecture();
  if (arch == nullptr) return Status::Unimplemented("cannot load object: the loader does not support this machine");
  if (object.machine != arch->machine) {
    return Bad("it is for " + MachineName(object.machine) + ", and this process runs on " + MachineName(arch->machine));
  }
  ObjectImageBuilder builder(object, *arch, resolve, elf_bytes);
  return builder.Build();
}

}  // namespace tunefarm

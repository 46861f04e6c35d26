// ParseObject: reads an ELF64 relocatable object from untrusted bytes.
//
// Every structure is copied out with memcpy (the bytes may sit at any
// alignment) after checking that it lies inside the file; sums of offsets and
// sizes are compared by subtraction so that no value a file can hold
// overflows. The loader applies what this accepts without checking again.
#include "elf_object.h"

#include <cstdio>
#include <cstring>

namespace tunefarm::elf {
namespace {

Status Bad(const std::string& why) { return Status::InvalidArgument("cannot load object: " + why); }

std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// True when [offset, offset + size) lies inside a file of `file_size` bytes.
bool Inside(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

template <typename T>
T ReadAt(std::string_view bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The NUL-terminated string at `offset` of string table section `table`.
Result<std::string_view> StringAt(std::string_view bytes, const Elf64_Shdr& table, uint64_t offset,
                                  const std::string& what) {
  if (table.sh_type != SHT_STRTAB) return Bad(what + ": its string table is not a string table");
  if (offset >= table.sh_size) return Bad(what + ": its name lies outside the string table");
  const char* start = bytes.data() + table.sh_offset + offset;
  const void* end = std::memchr(start, '\0', table.sh_size - offset);
  if (end == nullptr) return Bad(what + ": its name runs past the end of the string table");
  return std::string_view(start, static_cast<const char*>(end) - start);
}

bool IsUnwindInfo(const Section& s) { return s.header.sh_type == SHT_X86_64_UNWIND || s.name == ".eh_frame"; }

// Decides whether a section is copied into the image and where.
Status Classify(Section& s, const std::string& label) {
  const Elf64_Shdr& h = s.header;
  if ((h.sh_flags & SHF_ALLOC) == 0 || h.sh_size == 0 || IsUnwindInfo(s) || h.sh_type == SHT_NOTE) return Status::OK();
  if (h.sh_flags & SHF_TLS) return Bad(label + " holds thread-local data, which the loader does not support");
  if (h.sh_type == SHT_INIT_ARRAY || h.sh_type == SHT_FINI_ARRAY || h.sh_type == SHT_PREINIT_ARRAY) {
    return Bad(label + " lists constructors or destructors, which the loader does not run");
  }
  if (h.sh_type != SHT_PROGBITS && h.sh_type != SHT_NOBITS) {
    return Bad(label + " is allocated but of type " + Hex(h.sh_type) + ", which the loader cannot place");
  }
  bool write = (h.sh_flags & SHF_WRITE) != 0, exec = (h.sh_flags & SHF_EXECINSTR) != 0;
  if (write && exec) return Bad(label + " is both writable and executable");
  s.loaded = true;
  s.region = exec ? Region::kText : write ? Region::kData : Region::kReadOnly;
  return Status::OK();
}

Status ReadSections(std::string_view bytes, const Elf64_Ehdr& eh, ParsedObject& object) {
  const uint64_t size = bytes.size();
  if (eh.e_shoff == 0) return Bad("it has no section headers");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return Bad("its section header size is " + std::to_string(eh.e_shentsize));
  if (!Inside(eh.e_shoff, sizeof(Elf64_Shdr), size)) return Bad("its section headers lie outside the file");
  // Extended numbering: the count and the string table index live in section 0.
  Elf64_Shdr first = ReadAt<Elf64_Shdr>(bytes, eh.e_shoff);
  uint64_t count = eh.e_shnum != 0 ? eh.e_shnum : first.sh_size;
  uint64_t names_index = eh.e_shstrndx != SHN_XINDEX ? eh.e_shstrndx : first.sh_link;
  if (count == 0 || count > (size - eh.e_shoff) / sizeof(Elf64_Shdr)) {
    return Bad("its " + std::to_string(count) + " section headers do not fit in the file");
  }
  object.sections.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Shdr& h = object.sections[i].header;
    h = ReadAt<Elf64_Shdr>(bytes, eh.e_shoff + i * sizeof(Elf64_Shdr));
    if (h.sh_type != SHT_NOBITS && h.sh_type != SHT_NULL && !Inside(h.sh_offset, h.sh_size, size)) {
      return Bad("section " + std::to_string(i) + " lies outside the file (offset " + Hex(h.sh_offset) + ", " +
                 std::to_string(h.sh_size) + " bytes, file " + std::to_string(size) + " bytes)");
    }
    if (h.sh_addralign > 1 && (h.sh_addralign & (h.sh_addralign - 1)) != 0) {
      return Bad("section " + std::to_string(i) + " has alignment " + std::to_string(h.sh_addralign) +
                 ", not a power of two");
    }
  }
  if (names_index != SHN_UNDEF) {
    if (names_index >= count) {
      return Bad("its section name table index " + std::to_string(names_index) + " is out of range");
    }
    const Elf64_Shdr& names = object.sections[names_index].header;
    for (uint64_t i = 1; i < count; ++i) {
      TF_ASSIGN_OR_RETURN(object.sections[i].name,
                          StringAt(bytes, names, object.sections[i].header.sh_name, "section " + std::to_string(i)));
    }
  }
  for (uint64_t i = 1; i < count; ++i) {
    TF_RETURN_IF_ERROR(Classify(object.sections[i], SectionLabel(object, uint32_t(i))));
  }
  return Status::OK();
}

Status ReadSymbols(std::string_view bytes, ParsedObject& object, uint32_t symtab) {
  const Elf64_Shdr& h = object.sections[symtab].header;
  const std::string label = SectionLabel(object, symtab);
  if (h.sh_entsize != sizeof(Elf64_Sym) || h.sh_size % sizeof(Elf64_Sym) != 0) {
    return Bad(label + ": symbol entries of " + std::to_string(h.sh_entsize) + " bytes");
  }
  if (h.sh_link == 0 || h.sh_link >= object.sections.size()) {
    return Bad(label + ": its string table index is out of range");
  }
  const Elf64_Shdr& names = object.sections[h.sh_link].header;
  const uint64_t count = h.sh_size / sizeof(Elf64_Sym);
  object.symbols.resize(count);
  object.symbol_names.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Sym& sym = object.symbols[i];
    sym = ReadAt<Elf64_Sym>(bytes, h.sh_offset + i * sizeof(Elf64_Sym));
    const std::string what = "symbol " + std::to_string(i);
    if (sym.st_name != 0) {
      TF_ASSIGN_OR_RETURN(object.symbol_names[i], StringAt(bytes, names, sym.st_name, what));
    }
    uint16_t shndx = sym.st_shndx;
    if (shndx != SHN_UNDEF && shndx != SHN_ABS && shndx != SHN_COMMON && shndx >= object.sections.size()) {
      const char* why = shndx == SHN_XINDEX ? " (extended section indices are not supported)" : "";
      return Bad(what + " (" + std::string(object.symbol_names[i]) + ") lies in section " + std::to_string(shndx) +
                 ", which does not exist" + why);
    }
  }
  return Status::OK();
}

Status ReadRelocations(std::string_view bytes, ParsedObject& object, uint32_t index, uint32_t symtab) {
  const Elf64_Shdr& h = object.sections[index].header;
  const std::string label = SectionLabel(object, index);
  if (h.sh_info == 0 || h.sh_info >= object.sections.size()) {
    return Bad(label + ": it applies to a section that does not exist");
  }
  if (!object.sections[h.sh_info].loaded) return Status::OK();  // unwind info, debug info: not loaded, not patched
  if (h.sh_type == SHT_REL) return Bad(label + ": REL relocations (without addends) are not supported");
  if (h.sh_entsize != sizeof(Elf64_Rela) || h.sh_size % sizeof(Elf64_Rela) != 0) {
    return Bad(label + ": relocation entries of " + std::to_string(h.sh_entsize) + " bytes");
  }
  if (h.sh_link != symtab) {
    return Bad(label + ": it refers to section " + std::to_string(h.sh_link) + ", not the symbol table");
  }
  RelocationTable table;
  table.section = index;
  table.target = h.sh_info;
  const uint64_t count = h.sh_size / sizeof(Elf64_Rela);
  table.entries.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Rela& r = table.entries[i];
    r = ReadAt<Elf64_Rela>(bytes, h.sh_offset + i * sizeof(Elf64_Rela));
    if (ELF64_R_SYM(r.r_info) >= object.symbols.size() && ELF64_R_SYM(r.r_info) != 0) {
      return Bad(label + ": relocation " + std::to_string(i) + " names symbol " +
                 std::to_string(ELF64_R_SYM(r.r_info)) + ", which does not exist");
    }
  }
  object.relocation_tables.push_back(std::move(table));
  return Status::OK();
}

}  // namespace

std::string SectionLabel(const ParsedObject& object, uint32_t index) {
  std::string label = "section " + std::to_string(index);
  if (index < object.sections.size() && !object.sections[index].name.empty()) {
    label += " (" + std::string(object.sections[index].name) + ")";
  }
  return label;
}

Result<ParsedObject> ParseObject(std::string_view bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    return Bad("it is " + std::to_string(bytes.size()) + " bytes, shorter than an ELF64 header");
  }
  Elf64_Ehdr eh = ReadAt<Elf64_Ehdr>(bytes, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return Bad("it is not an ELF file (bad magic)");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return Bad("it is not a 64-bit ELF file");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return Bad("it is not a little-endian ELF file");
  if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) return Bad("its ELF version is not 1");
  if (eh.e_type != ET_REL) return Bad("it is not a relocatable object (ELF type " + std::to_string(eh.e_type) + ")");
  ParsedObject object;
  object.machine = eh.e_machine;
  TF_RETURN_IF_ERROR(ReadSections(bytes, eh, object));
  uint32_t symtab = 0;
  for (uint32_t i = 1; i < object.sections.size(); ++i) {
    if (object.sections[i].header.sh_type != SHT_SYMTAB) continue;
    if (symtab != 0) return Bad("it has two symbol tables");
    symtab = i;
  }
  if (symtab != 0) TF_RETURN_IF_ERROR(ReadSymbols(bytes, object, symtab));
  for (uint32_t i = 1; i < object.sections.size(); ++i) {
    uint32_t type = object.sections[i].header.sh_type;
    if (type == SHT_RELA || type == SHT_REL) TF_RETURN_IF_ERROR(ReadRelocations(bytes, object, i, symtab));
  }
  return object;
}

}  // namespace tunefarm::elf

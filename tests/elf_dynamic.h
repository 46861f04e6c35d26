// The dynamic section of an ELF shared library, read from the file itself
// (what `readelf -d` prints): the libraries it needs and the folders it names
// for finding them (RUNPATH, RPATH). Tests use it to check that a library
// built by tunefarm names no folder of the machine that built it.
#pragma once

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tunefarm::elf_test {

struct DynamicSection {
  std::string error;  // non-empty: the file is not a readable 64-bit ELF with a dynamic section
  std::vector<std::string> needed, runpath, rpath;
  std::string soname;
};

inline DynamicSection ReadDynamicSection(const std::string& path) {
  DynamicSection out;
  auto fail = [&](const std::string& why) {
    DynamicSection failed;
    failed.error = path + ": " + why;
    return failed;
  };
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  auto fits = [&](uint64_t offset, uint64_t size) { return offset <= bytes.size() && size <= bytes.size() - offset; };
  Elf64_Ehdr eh;
  if (!fits(0, sizeof(eh))) return fail("not an ELF file");
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return fail("not a 64-bit ELF file");
  }
  auto section = [&](size_t i, Elf64_Shdr* sh) {
    uint64_t at = eh.e_shoff + uint64_t(i) * eh.e_shentsize;
    if (eh.e_shentsize < sizeof(Elf64_Shdr) || !fits(at, sizeof(Elf64_Shdr))) return false;
    std::memcpy(sh, bytes.data() + at, sizeof(Elf64_Shdr));
    return true;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr dyn, strtab;
    if (!section(i, &dyn)) return fail("truncated section headers");
    if (dyn.sh_type != SHT_DYNAMIC) continue;
    if (!section(dyn.sh_link, &strtab) || !fits(dyn.sh_offset, dyn.sh_size) || !fits(strtab.sh_offset, strtab.sh_size)) {
      return fail("truncated dynamic section");
    }
    auto str = [&](uint64_t offset) {
      if (offset >= strtab.sh_size) return std::string("<bad string offset>");
      const char* s = bytes.data() + strtab.sh_offset + offset;
      return std::string(s, strnlen(s, strtab.sh_size - offset));
    };
    for (uint64_t at = dyn.sh_offset; at + sizeof(Elf64_Dyn) <= dyn.sh_offset + dyn.sh_size; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + at, sizeof(d));
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) out.needed.push_back(str(d.d_un.d_val));
      if (d.d_tag == DT_RUNPATH) out.runpath.push_back(str(d.d_un.d_val));
      if (d.d_tag == DT_RPATH) out.rpath.push_back(str(d.d_un.d_val));
      if (d.d_tag == DT_SONAME) out.soname = str(d.d_un.d_val);
    }
    return out;
  }
  return fail("no dynamic section");
}

}  // namespace tunefarm::elf_test

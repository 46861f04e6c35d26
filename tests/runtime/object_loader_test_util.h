// Shared by the object loader tests (LoadObject, object_loader.h): the suite's
// workloads at small and odd sizes, schedules drawn from the sketch rules, a
// kernel object checked against the reference interpreter, and a writer of
// small ELF objects for the cases a compiler does not produce.
#pragma once

#include <gtest/gtest.h>

#include <elf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../compiler/schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/runtime/object_loader.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::testing {

// A suite workload (configs/workloads/NAME.tf) at the sizes `overrides` set.
inline ir::PrimFunc SuiteWorkload(const std::string& name, const Overrides& overrides) {
  std::string text = ReadTextFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf");
  auto f = LowerText(text, overrides);
  EXPECT_TRUE(f.ok()) << name << ": " << f.status().ToString();
  return f.ok() ? *f : ir::PrimFunc{};
}

// Six suite workloads shrunk to odd sizes (no dimension a multiple of the
// vector width), so that tails and guards are in the code.
inline std::vector<ir::PrimFunc> OddSizedSuite() {
  return {
      SuiteWorkload("gmm_512", {{"M", 13}, {"N", 37}, {"K", 19}}),
      SuiteWorkload("c2d_resnet_3x3", {{"C", 5}, {"H", 9}, {"W", 11}, {"K", 7}}),
      SuiteWorkload("dep_3x3_c256_28", {{"C", 9}, {"H", 13}, {"W", 11}}),
      SuiteWorkload("softmax", {{"M", 7}, {"N", 33}}),
      SuiteWorkload("layer_norm", {{"M", 5}, {"N", 71}}),
      SuiteWorkload("dense_bias_relu", {{"M", 7}, {"N", 45}, {"K", 19}}),
  };
}

// `n` programs drawn at random from the CPU sketch rules' design space of f.
inline std::vector<ir::PrimFunc> RandomSchedules(const ir::PrimFunc& f, uint64_t seed, int n) {
  auto policy = tuner::MakeCpuSketchPolicy({});
  tuner::EvolutionarySearch search(f, policy.get(), tuner::SearchOptions{}, seed);
  std::vector<ir::PrimFunc> out;
  for (int i = 0; i < n; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << f.name << ": " << c.status().ToString();
    if (c.ok()) out.push_back(c->func);
  }
  return out;
}

// kConstMatmul at odd M and K with B packed into 16-wide panels at the
// root: a prepack split (prepack and prepacked entries besides the whole one).
inline Result<ir::PrimFunc> PackedMatmul() {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(kConstMatmul, {{"M", 9}, {"N", 32}, {"K", 13}}));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
  TF_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(loops[0], {-1, 4}));
  TF_RETURN_IF_ERROR(sch.Parallel(i[0]));
  TF_RETURN_IF_ERROR(sch.PackLayout(b_copy, 1, 16, 0));
  return sch.func();
}

inline bool HasLoopOfKind(const ir::Stmt& s, ir::ForKind kind) {
  bool found = false;
  ir::PostOrderVisit(s, [&](const ir::IRNode* node) {
    if (node->kind == ir::IRNodeKind::kFor && static_cast<const ir::For*>(node)->kind == kind) found = true;
  });
  return found;
}

// Calls an entry `int32_t name(void**)` of a loaded object.
inline Status CallEntry(const LoadedObject& object, const std::string& name, std::vector<void*> args) {
  TF_ASSIGN_OR_RETURN(void* address, object.Symbol(name));
  int32_t rc = reinterpret_cast<int32_t (*)(void**)>(address)(args.data());
  if (rc != 0) return Status::Internal(name + " returned " + std::to_string(rc));
  return Status::OK();
}

// Runs `scheduled` from the loaded object on `args` (f's params) as
// PreparedCall does: with a prepack split, its prepack entry into fresh
// packed buffers, then its prepacked entry; else (or when `whole`) the whole
// function's entry.
inline Status RunLoaded(const LoadedObject& object, const ir::PrimFunc& scheduled, std::vector<HostBuffer>& args,
                        bool whole) {
  std::vector<void*> pointers = Pointers(args);
  std::optional<PrepackSplit> split = SplitPrepack(scheduled);
  if (!split || whole) return CallEntry(object, scheduled.name + "_packed", pointers);
  std::vector<HostBuffer> packed;
  for (const ir::Buffer& b : split->packed) packed.push_back(HostBuffer::Like(b));
  std::vector<void*> prepack_args;
  for (size_t i : split->constant_params) prepack_args.push_back(pointers[i]);
  for (HostBuffer& b : packed) {
    prepack_args.push_back(b.data());
    pointers.push_back(b.data());
  }
  TF_RETURN_IF_ERROR(CallEntry(object, split->prepack.name + "_packed", prepack_args));
  return CallEntry(object, split->prepacked.name + "_packed", pointers);
}

// Interprets the default program `base` on random inputs from `seed`, runs
// `scheduled` from `object` on the same inputs (both entries when it has a
// prepack split and `whole_entry`), and compares the outputs.
inline ::testing::AssertionResult LoadedMatchesInterpreter(const LoadedObject& object, const ir::PrimFunc& base,
                                                           const ir::PrimFunc& scheduled, bool whole_entry,
                                                           uint64_t seed) {
  std::vector<HostBuffer> expected = RandomArgs(base, seed);
  Status s = Interpret(base, HostPointers(expected));
  if (!s.ok()) return ::testing::AssertionFailure() << "Interpret: " << s.ToString();
  std::vector<bool> modes = {false};
  if (SplitPrepack(scheduled) && whole_entry) modes.push_back(true);
  for (bool whole : modes) {
    std::vector<HostBuffer> actual = RandomArgs(base, seed);
    s = RunLoaded(object, scheduled, actual, whole);
    if (!s.ok()) return ::testing::AssertionFailure() << "running the loaded kernel: " << s.ToString();
    for (size_t i = base.num_inputs; i < base.params.size(); ++i) {
      CompareResult r = CompareBuffers(actual[i], expected[i], 1e-3, 1e-3);
      if (!r.equal) {
        return ::testing::AssertionFailure() << base.name << (whole ? " (whole entry)" : "") << ", buffer "
                                             << base.params[i]->name << ": " << r.message << "\n"
                                             << ir::ToString(scheduled);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// The permissions /proc/self/maps gives the mapping holding `address`
// ("r-xp"), or "" when nothing is mapped there.
inline std::string PermissionsAt(const void* address) {
  std::ifstream maps("/proc/self/maps");
  uintptr_t at = reinterpret_cast<uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    uintptr_t begin = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &begin, &end, perms) == 3 && at >= begin && at < end) return perms;
  }
  return "";
}

// Writes a small relocatable ELF64 object: sections with contents, symbols
// (locals first), RELA relocations; enough to build what the code generator
// never emits (unsupported relocations, unresolvable symbols, hand-written code).
class ElfBuilder {
 public:
  explicit ElfBuilder(uint16_t machine) : machine_(machine) {}

  // Returns the section's index. SHT_NOBITS sections take `size`, not bytes.
  uint32_t AddSection(const std::string& name, uint32_t type, uint64_t flags, const std::string& bytes,
                      uint64_t align = 16, uint64_t size = 0) {
    sections_.push_back({name, type, flags, bytes, align, type == SHT_NOBITS ? size : bytes.size(), {}});
    return uint32_t(sections_.size());  // section 0 is the null section
  }
  // Returns the symbol's index (0 is the null symbol).
  uint32_t AddSymbol(const std::string& name, uint8_t bind, uint8_t type, uint16_t section, uint64_t value) {
    Elf64_Sym sym{};
    sym.st_name = AddString(symbol_names_, name);
    sym.st_info = ELF64_ST_INFO(bind, type);
    sym.st_shndx = section;
    sym.st_value = value;
    symbols_.push_back(sym);
    return uint32_t(symbols_.size());
  }
  void AddRelocation(uint32_t section, uint64_t offset, uint32_t type, uint32_t symbol, int64_t addend) {
    Elf64_Rela r{};
    r.r_offset = offset;
    r.r_info = ELF64_R_INFO(symbol, type);
    r.r_addend = addend;
    sections_[section - 1].relocations.push_back(r);
  }

  std::string Build() const;

 private:
  struct Section {
    std::string name;
    uint32_t type;
    uint64_t flags;
    std::string bytes;
    uint64_t align, size;
    std::vector<Elf64_Rela> relocations;
  };
  static uint32_t AddString(std::string& table, const std::string& s) {
    if (s.empty()) return 0;
    uint32_t at = uint32_t(table.size());
    table += s;
    table.push_back('\0');
    return at;
  }

  uint16_t machine_;
  std::vector<Section> sections_;
  std::vector<Elf64_Sym> symbols_;
  std::string symbol_names_ = std::string(1, '\0');
};

inline std::string ElfBuilder::Build() const {
  std::string out(sizeof(Elf64_Ehdr), '\0');
  auto place = [&out](const std::string& bytes, uint64_t align) {
    while (out.size() % std::max<uint64_t>(align, 1) != 0) out.push_back('\0');
    uint64_t at = out.size();
    out += bytes;
    return at;
  };
  std::vector<Elf64_Shdr> headers(1);  // the null section
  std::string section_names(1, '\0');
  for (const Section& s : sections_) {
    Elf64_Shdr h{};
    h.sh_name = AddString(section_names, s.name);
    h.sh_type = s.type;
    h.sh_flags = s.flags;
    h.sh_offset = s.type == SHT_NOBITS ? out.size() : place(s.bytes, s.align);
    h.sh_size = s.size;
    h.sh_addralign = s.align;
    headers.push_back(h);
  }
  const uint32_t symtab = uint32_t(headers.size()), strtab = symtab + 1;
  std::string symbol_bytes(sizeof(Elf64_Sym), '\0');
  uint32_t first_global = 1;
  for (size_t i = 0; i < symbols_.size(); ++i) {
    symbol_bytes.append(reinterpret_cast<const char*>(&symbols_[i]), sizeof(Elf64_Sym));
    if (ELF64_ST_BIND(symbols_[i].st_info) == STB_LOCAL) first_global = uint32_t(i + 2);
  }
  Elf64_Shdr sh{};
  sh.sh_name = AddString(section_names, ".symtab");
  sh.sh_type = SHT_SYMTAB;
  sh.sh_offset = place(symbol_bytes, 8);
  sh.sh_size = symbol_bytes.size();
  sh.sh_link = strtab;
  sh.sh_info = first_global;
  sh.sh_addralign = 8;
  sh.sh_entsize = sizeof(Elf64_Sym);
  headers.push_back(sh);
  Elf64_Shdr st{};
  st.sh_name = AddString(section_names, ".strtab");
  st.sh_type = SHT_STRTAB;
  st.sh_offset = place(symbol_names_, 1);
  st.sh_size = symbol_names_.size();
  headers.push_back(st);
  for (size_t i = 0; i < sections_.size(); ++i) {
    if (sections_[i].relocations.empty()) continue;
    std::string bytes(reinterpret_cast<const char*>(sections_[i].relocations.data()),
                      sections_[i].relocations.size() * sizeof(Elf64_Rela));
    Elf64_Shdr rh{};
    rh.sh_name = AddString(section_names, ".rela" + sections_[i].name);
    rh.sh_type = SHT_RELA;
    rh.sh_flags = SHF_INFO_LINK;
    rh.sh_offset = place(bytes, 8);
    rh.sh_size = bytes.size();
    rh.sh_link = symtab;
    rh.sh_info = uint32_t(i + 1);
    rh.sh_addralign = 8;
    rh.sh_entsize = sizeof(Elf64_Rela);
    headers.push_back(rh);
  }
  Elf64_Shdr names{};
  names.sh_name = AddString(section_names, ".shstrtab");
  names.sh_type = SHT_STRTAB;
  names.sh_offset = place(section_names, 1);
  names.sh_size = section_names.size();
  headers.push_back(names);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_REL;
  eh.e_machine = machine_;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = uint16_t(headers.size());
  eh.e_shstrndx = uint16_t(headers.size() - 1);
  std::string header_bytes(reinterpret_cast<const char*>(headers.data()), headers.size() * sizeof(Elf64_Shdr));
  eh.e_shoff = place(header_bytes, 8);
  std::memcpy(out.data(), &eh, sizeof(eh));
  return out;
}

// The ELF machine this process runs on, one it does not, and this
// machine's 64-bit absolute relocation.
#if defined(__x86_64__)
inline constexpr uint16_t kHostMachine = EM_X86_64;
inline constexpr const char* kOtherTriple = "llvm -mtriple=aarch64-linux-gnu";
inline constexpr uint32_t kAbs64Type = R_X86_64_64;
#elif defined(__aarch64__)
inline constexpr uint16_t kHostMachine = EM_AARCH64;
inline constexpr const char* kOtherTriple = "llvm -mtriple=x86_64-linux-gnu";
inline constexpr uint32_t kAbs64Type = R_AARCH64_ABS64;
#endif

}  // namespace tunefarm::testing

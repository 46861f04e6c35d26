// LoadObject on bytes that must not load: not ELF64, the wrong machine, a
// relocation type the loader does not know, an undefined symbol nothing
// resolves, sections and relocations outside the file or their section, and
// random corruption of real objects. Each is InvalidArgument with a message
// that names what is wrong; none crashes (the bytes come from the network).
#include <random>

#include "object_loader_test_util.h"

namespace tunefarm::testing {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kCallType = R_X86_64_PLT32;
constexpr uint32_t kUnsupportedType = R_X86_64_GOTOFF64;
constexpr const char* kUnsupportedName = "R_X86_64_GOTOFF64";
#elif defined(__aarch64__)
constexpr uint32_t kCallType = R_AARCH64_CALL26;
constexpr uint32_t kUnsupportedType = R_AARCH64_TLSDESC_CALL;
constexpr const char* kUnsupportedName = "R_AARCH64_TLSDESC_CALL";
#endif

// A 64-byte .text for this machine with one relocation of `type` at
// `offset` against the undefined symbol `callee` (never run: these objects
// must not load).
std::string CraftedObject(uint32_t type, uint64_t offset, const std::string& callee) {
  ElfBuilder b(kHostMachine);
  uint32_t text = b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(64, '\0'));
  b.AddSymbol("entry", STB_GLOBAL, STT_FUNC, uint16_t(text), 0);
  uint32_t sym = b.AddSymbol(callee, STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
  b.AddRelocation(text, offset, type, sym, -4);
  return b.Build();
}

// A real kernel object: gmm with a random schedule (parallel, calls into the runtime).
struct RealKernel {
  ir::PrimFunc base, scheduled;
  std::string bytes;
};

const RealKernel& Real() {
  static const RealKernel kernel = [] {
    RealKernel k;
    k.base = SuiteWorkload("gmm_512", {{"M", 9}, {"N", 21}, {"K", 7}});
    for (const ir::PrimFunc& f : RandomSchedules(k.base, 7, 8)) {
      if (!HasLoopOfKind(f.body, ir::ForKind::kParallel)) continue;
      auto bytes = EmitObject(f, Target::Host());
      EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
      if (!bytes.ok()) break;
      k.scheduled = f;
      k.bytes = *bytes;
      return k;
    }
    ADD_FAILURE() << "no parallel gmm schedule among 8 samples";
    return k;
  }();
  return kernel;
}

const std::string& RealObject() { return Real().bytes; }

TEST(ObjectLoaderErrorsTest, TheCraftedObjectLoadsWhenNothingIsWrong) {
  // The baseline of the crafted cases below: the same object with a symbol
  // that resolves loads.
  auto loaded = LoadObject(CraftedObject(kCallType, 16, "tunefarm_alloc"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->stats().relocations, 1u);
  EXPECT_TRUE((*loaded)->Symbol("entry").ok());
}

TEST(ObjectLoaderErrorsTest, EveryTruncationIsRefused) {
  const std::string& bytes = RealObject();
  ASSERT_FALSE(bytes.empty());
  ASSERT_TRUE(LoadObject(bytes).ok());
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto loaded = LoadObject(std::string_view(bytes).substr(0, size));
    ASSERT_FALSE(loaded.ok()) << "the first " << size << " of " << bytes.size() << " bytes loaded";
    ASSERT_TRUE(IsInvalid(loaded.status(), {"cannot load object"})) << size;
  }
}

TEST(ObjectLoaderErrorsTest, AFlippedHeaderFieldIsNamed) {
  const std::string& real = RealObject();
  ASSERT_FALSE(real.empty());
  struct Case {
    size_t offset;
    char value;
    std::string words;
  };
  const std::vector<Case> cases = {
      {0, 0x7e, "not an ELF file"},
      {EI_CLASS, ELFCLASS32, "not a 64-bit ELF file"},
      {EI_DATA, ELFDATA2MSB, "not a little-endian"},
      {EI_VERSION, 2, "version"},
      {offsetof(Elf64_Ehdr, e_type), ET_EXEC, "not a relocatable object"},
      {offsetof(Elf64_Ehdr, e_shentsize), 32, "section header size"},
      {offsetof(Elf64_Ehdr, e_shoff) + 6, 0x7f, "section headers lie outside the file"},
      {offsetof(Elf64_Ehdr, e_shnum), char(0xff), "section headers do not fit"},
  };
  for (const Case& c : cases) {
    std::string bytes = real;
    bytes[c.offset] = c.value;
    EXPECT_TRUE(IsInvalid(LoadObject(bytes).status(), {c.words})) << c.words;
  }
}

TEST(ObjectLoaderErrorsTest, AnObjectForAnotherMachineIsRefused) {
  auto other = Target::Parse(kOtherTriple);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto bytes = EmitObject(SuiteWorkload("softmax", {{"M", 3}, {"N", 5}}), *other);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_TRUE(IsInvalid(LoadObject(*bytes).status(), {"AArch64", "x86-64", "this process runs on"}));
}

TEST(ObjectLoaderErrorsTest, AnUnsupportedRelocationTypeIsNamedWithItsSectionAndOffset) {
  EXPECT_TRUE(IsInvalid(LoadObject(CraftedObject(kUnsupportedType, 0x10, "tunefarm_alloc")).status(),
                        {kUnsupportedName, ".text", "+0x10", "not supported"}));
  EXPECT_TRUE(IsInvalid(LoadObject(CraftedObject(250, 0x18, "tunefarm_alloc")).status(),
                        {"(250)", ".text", "+0x18", "not supported"}));
}

TEST(ObjectLoaderErrorsTest, AnUndefinedSymbolNothingResolvesIsNamed) {
  EXPECT_TRUE(IsInvalid(LoadObject(CraftedObject(kCallType, 8, "tunefarm_no_such_symbol")).status(),
                        {"undefined symbol 'tunefarm_no_such_symbol'", "nothing resolves it"}));
  // A real kernel, with a resolver that knows all but the thread pool.
  auto loaded = LoadObject(RealObject(), [](const std::string& name) -> void* {
    return name == "tunefarm_parallel_for" ? nullptr : ResolveRuntimeSymbol(name);
  });
  EXPECT_TRUE(IsInvalid(loaded.status(), {"'tunefarm_parallel_for'"}));
  // Nor does an empty resolver.
  EXPECT_TRUE(IsInvalid(LoadObject(RealObject(), SymbolResolver()).status(), {"undefined symbol"}));
}

TEST(ObjectLoaderErrorsTest, ARelocationOutsideItsSectionOrTableIsRefused) {
  EXPECT_TRUE(IsInvalid(LoadObject(CraftedObject(kCallType, 62, "tunefarm_alloc")).status(),
                        {"+0x3e", "outside its section"}));
  EXPECT_TRUE(IsInvalid(LoadObject(CraftedObject(kCallType, uint64_t(-2), "tunefarm_alloc")).status(),
                        {"outside its section"}));
  ElfBuilder b(kHostMachine);
  uint32_t text = b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(16, '\0'));
  b.AddRelocation(text, 0, kCallType, 99, 0);
  EXPECT_TRUE(IsInvalid(LoadObject(b.Build()).status(), {".rela.text", "symbol 99", "does not exist"}));
}

TEST(ObjectLoaderErrorsTest, SectionsItCannotPlaceAreRefused) {
  {
    ElfBuilder b(kHostMachine);
    b.AddSection(".init_array", SHT_INIT_ARRAY, SHF_ALLOC | SHF_WRITE, std::string(8, '\0'), 8);
    EXPECT_TRUE(IsInvalid(LoadObject(b.Build()).status(), {".init_array", "constructors"}));
  }
  {
    ElfBuilder b(kHostMachine);
    b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE | SHF_EXECINSTR, std::string(8, '\0'));
    EXPECT_TRUE(IsInvalid(LoadObject(b.Build()).status(), {".text", "both writable and executable"}));
  }
  {
    ElfBuilder b(kHostMachine);
    b.AddSection(".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, "", 8, uint64_t(1) << 40);
    EXPECT_TRUE(IsInvalid(LoadObject(b.Build()).status(), {".bss", "more than the loader maps"}));
  }
  {
    // A section whose contents lie past the end of the file.
    std::string bytes = CraftedObject(kCallType, 0, "tunefarm_alloc");
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof(eh));
    size_t text_offset_field = eh.e_shoff + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset);
    uint64_t far = bytes.size() - 10;
    std::memcpy(bytes.data() + text_offset_field, &far, sizeof(far));
    EXPECT_TRUE(IsInvalid(LoadObject(bytes).status(), {"section 1", "lies outside the file"}));
  }
}

TEST(ObjectLoaderErrorsTest, AMissingSymbolIsNotFound) {
  auto loaded = LoadObject(RealObject());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto missing = (*loaded)->Symbol("gmm_512_nothing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'gmm_512_nothing'"), std::string::npos);
}

TEST(ObjectLoaderErrorsTest, RandomCorruptionLoadsOrIsRefusedButNeverCrashes) {
  const std::string& real = RealObject();
  ASSERT_FALSE(real.empty());
  Elf64_Ehdr eh;
  std::memcpy(&eh, real.data(), sizeof(eh));
  std::mt19937_64 rng(2024);
  int loaded = 0, refused = 0;
  for (int mutation = 0; mutation < 500; ++mutation) {
    std::string bytes = real;
    // Half the flips land in the headers, section headers and the tables
    // after the code (symbols, relocations, strings), where they change what
    // the loader reads; the rest anywhere.
    int flips = 1 + int(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      size_t at = 0;
      switch (rng() % 3) {
        case 0: at = rng() % sizeof(Elf64_Ehdr); break;
        case 1: at = eh.e_shoff / 2 + rng() % (bytes.size() - eh.e_shoff / 2); break;
        case 2: at = rng() % bytes.size(); break;
      }
      bytes[at] = rng() % 2 ? char(rng()) : char(bytes[at] ^ (1 << (rng() % 8)));
    }
    auto result = LoadObject(bytes);
    if (result.ok()) {
      ++loaded;
      EXPECT_GT((*result)->stats().image_bytes, 0u);
    } else {
      ++refused;
      EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().ToString();
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
  // The unmutated object still loads and computes what the interpreter does
  // (the mutated ones are never run: their code is random).
  auto again = LoadObject(real);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(LoadedMatchesInterpreter(**again, Real().base, Real().scheduled, true, 3));
}

}  // namespace
}  // namespace tunefarm::testing

// LoadObject on hand-written x86-64 code for the relocations LLVM's kernels
// do not all use today: a jump to a function beyond ±2 GiB through a stub,
// loads through GOT slots (GOTPCREL, REX_GOTPCRELX), PC32 into .rodata, .data
// and .bss, R_X86_64_64 and PC64 in .data, and an .eh_frame whose
// relocations the loader skips. Each function is called and its result
// checked, and each region's permissions are read from /proc/self/maps.
#if defined(__x86_64__)

#include <cstdlib>

#include "object_loader_test_util.h"

namespace tunefarm::testing {
namespace {

extern "C" int32_t LoaderTestReturnSeven(void**) { return 7; }
int64_t loader_test_value = 1234;

std::string Bytes(std::initializer_list<uint8_t> bytes) { return std::string(bytes.begin(), bytes.end()); }

// Code at fixed offsets of .text (see each entry's comment); 16 bytes apart.
std::string HandWrittenObject() {
  std::string text(128, char(0xcc));
  auto put = [&text](size_t at, const std::string& code) { text.replace(at, code.size(), code); };
  put(0, Bytes({0xe9, 0, 0, 0, 0}));                           // jmp LoaderTestReturnSeven
  put(16, Bytes({0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3}));        // mov rax, [rip + GOT(value)]; ret
  put(32, Bytes({0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3}));        // the same through GOTPCREL
  put(48, Bytes({0x8b, 0x05, 0, 0, 0, 0, 0xc3}));              // mov eax, [rip + answers + 4]; ret
  put(64, Bytes({0x48, 0x8b, 0x05, 0, 0, 0, 0, 0x8b, 0x00, 0xc3}));  // mov rax, [rip + data]; mov eax, [rax]; ret
  put(80, Bytes({0x8b, 0x05, 0, 0, 0, 0, 0xff, 0xc0, 0x89, 0x05, 0, 0, 0, 0, 0xc3}));  // ++counter
  // lea rcx, [rip + data + 8]; mov rax, [rcx]; mov eax, [rcx + rax]; ret
  put(96, Bytes({0x48, 0x8d, 0x0d, 0, 0, 0, 0, 0x48, 0x8b, 0x01, 0x8b, 0x04, 0x01, 0xc3}));

  ElfBuilder b(EM_X86_64);
  uint32_t code = b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text);
  uint32_t rodata = b.AddSection(".rodata", SHT_PROGBITS, SHF_ALLOC, Bytes({41, 0, 0, 0, 42, 0, 0, 0}), 8);
  uint32_t data = b.AddSection(".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, std::string(16, '\0'), 8);
  uint32_t bss = b.AddSection(".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, "", 8, 4096);
  uint32_t eh = b.AddSection(".eh_frame", SHT_X86_64_UNWIND, SHF_ALLOC, std::string(16, '\0'), 8);
  uint32_t text_sym = b.AddSymbol("", STB_LOCAL, STT_SECTION, uint16_t(code), 0);
  uint32_t rodata_sym = b.AddSymbol("", STB_LOCAL, STT_SECTION, uint16_t(rodata), 0);
  uint32_t data_sym = b.AddSymbol("", STB_LOCAL, STT_SECTION, uint16_t(data), 0);
  uint32_t bss_sym = b.AddSymbol("", STB_LOCAL, STT_SECTION, uint16_t(bss), 0);
  const char* entries[] = {"jump_far", "got_load", "gotpcrel_load", "rodata_load", "data_load", "bss_counter",
                           "pc64_load"};
  for (int i = 0; i < 7; ++i) b.AddSymbol(entries[i], STB_GLOBAL, STT_FUNC, uint16_t(code), 16 * i);
  b.AddSymbol("answers", STB_GLOBAL, STT_OBJECT, uint16_t(rodata), 0);
  b.AddSymbol("counter", STB_GLOBAL, STT_OBJECT, uint16_t(bss), 0);
  b.AddSymbol("pointers", STB_GLOBAL, STT_OBJECT, uint16_t(data), 0);
  uint32_t seven = b.AddSymbol("loader_test_seven", STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
  uint32_t value = b.AddSymbol("loader_test_value", STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
  b.AddRelocation(code, 1, R_X86_64_PLT32, seven, -4);
  b.AddRelocation(code, 19, R_X86_64_REX_GOTPCRELX, value, -4);
  b.AddRelocation(code, 35, R_X86_64_GOTPCREL, value, -4);
  b.AddRelocation(code, 50, R_X86_64_PC32, rodata_sym, 4 - 4);
  b.AddRelocation(code, 67, R_X86_64_PC32, data_sym, -4);
  b.AddRelocation(code, 82, R_X86_64_PC32, bss_sym, -4);
  b.AddRelocation(code, 90, R_X86_64_PC32, bss_sym, -4);
  b.AddRelocation(code, 99, R_X86_64_PC32, data_sym, 8 - 4);
  b.AddRelocation(data, 0, R_X86_64_64, rodata_sym, 4);
  b.AddRelocation(data, 8, R_X86_64_PC64, rodata_sym, 4);  // answers + 4 - (data + 8)
  // Unwind info is not loaded: its relocations, even of a type the loader
  // does not support, are skipped.
  b.AddRelocation(eh, 8, R_X86_64_PC32, text_sym, 0);
  b.AddRelocation(eh, 12, R_X86_64_GOTOFF64, text_sym, 0);
  return b.Build();
}

void* Resolve(const std::string& name) {
  if (name == "loader_test_seven") return reinterpret_cast<void*>(&LoaderTestReturnSeven);
  if (name == "loader_test_value") return &loader_test_value;
  return nullptr;
}

template <typename R>
R Call(const LoadedObject& object, const std::string& name) {
  auto address = object.Symbol(name);
  EXPECT_TRUE(address.ok()) << address.status().ToString();
  return address.ok() ? reinterpret_cast<R (*)(void**)>(*address)(nullptr) : R();
}

TEST(ObjectLoaderX86_64Test, HandWrittenRelocationsComputeWhatTheyShould) {
  auto loaded = LoadObject(HandWrittenObject(), &Resolve);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const LoadedObject& object = **loaded;
  EXPECT_EQ(Call<int32_t>(object, "jump_far"), 7);
  EXPECT_EQ(Call<int64_t*>(object, "got_load"), &loader_test_value);
  EXPECT_EQ(Call<int64_t*>(object, "gotpcrel_load"), &loader_test_value);
  EXPECT_EQ(Call<int32_t>(object, "rodata_load"), 42);
  EXPECT_EQ(Call<int32_t>(object, "data_load"), 42);
  EXPECT_EQ(Call<int32_t>(object, "pc64_load"), 42);
  EXPECT_EQ(Call<int32_t>(object, "bss_counter"), 1);
  EXPECT_EQ(Call<int32_t>(object, "bss_counter"), 2);
  // Both GOT relocations share one slot; the far jump needs a stub exactly
  // when the function is beyond ±2 GiB of the image.
  EXPECT_EQ(object.stats().got_slots, 1u);
  int64_t distance =
      reinterpret_cast<int64_t>(&LoaderTestReturnSeven) - reinterpret_cast<int64_t>(*object.Symbol("jump_far"));
  EXPECT_EQ(object.stats().stubs, std::llabs(distance) > (int64_t(1) << 31) ? 1u : 0u) << distance;
  EXPECT_EQ(object.stats().relocations, 10u);  // .eh_frame's two are not applied
  EXPECT_EQ(object.stats().sections, 4u);

  EXPECT_EQ(PermissionsAt(*object.Symbol("jump_far")), "r-xp");
  EXPECT_EQ(PermissionsAt(*object.Symbol("answers")), "r--p");
  EXPECT_EQ(PermissionsAt(*object.Symbol("counter")), "rw-p");
  EXPECT_EQ(PermissionsAt(*object.Symbol("pointers")), "rw-p");
}

TEST(ObjectLoaderX86_64Test, ACallWithinReachNeedsNoStub) {
  // `mov eax, 7; ret` in an object of its own: its image lands among the
  // other mappings, within ±2 GiB of the next one, unlike this executable.
  ElfBuilder b(EM_X86_64);
  uint32_t code = b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, Bytes({0xb8, 7, 0, 0, 0, 0xc3}));
  b.AddSymbol("seven", STB_GLOBAL, STT_FUNC, uint16_t(code), 0);
  auto callee = LoadObject(b.Build());
  ASSERT_TRUE(callee.ok()) << callee.status().ToString();
  void* seven = *(*callee)->Symbol("seven");
  auto loaded = LoadObject(HandWrittenObject(), [seven](const std::string& name) {
    return name == "loader_test_seven" ? seven : Resolve(name);
  });
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Call<int32_t>(**loaded, "jump_far"), 7);
  int64_t distance = reinterpret_cast<int64_t>(seven) - reinterpret_cast<int64_t>(*(*loaded)->Symbol("jump_far"));
  EXPECT_EQ((*loaded)->stats().stubs, std::llabs(distance) > (int64_t(1) << 31) ? 1u : 0u) << distance;
}

}  // namespace
}  // namespace tunefarm::testing

#endif  // defined(__x86_64__)

// Call stubs and GOT slots of a loaded object (elf_relocate.h), and the
// little-endian accessors both architectures' relocations use.
//
// Stubs and slots are shared by target: an object that calls memcpy from
// sixty places gets one stub. The capacities were counted from the
// relocations that may need one, so running out means a broken count, not a
// hostile file -- still an error, never a write past the area.
#include <cstring>

#include "elf_relocate.h"

namespace tunefarm::elf {

uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void Write16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
void Write32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void Write64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

Result<uint64_t> Trampolines::StubTo(uint64_t target) {
  auto it = stub_at_.find(target);
  if (it != stub_at_.end()) return it->second;
  if (stub_at_.size() >= stub_capacity_) return Status::Internal("the loader ran out of call stubs");
  uint8_t* at = stubs_ + stub_at_.size() * stub_bytes_;
  write_stub_(at, target);
  uint64_t address = reinterpret_cast<uint64_t>(at);
  stub_at_.emplace(target, address);
  return address;
}

Result<uint64_t> Trampolines::GotSlotFor(uint64_t value) {
  auto it = got_at_.find(value);
  if (it != got_at_.end()) return it->second;
  if (got_at_.size() >= got_capacity_) return Status::Internal("the loader ran out of GOT slots");
  uint8_t* at = got_ + got_at_.size() * 8;
  Write64(at, value);
  uint64_t address = reinterpret_cast<uint64_t>(at);
  got_at_.emplace(value, address);
  return address;
}

}  // namespace tunefarm::elf

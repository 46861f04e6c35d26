// A small program that loads a kernel object with LoadObject and runs it on
// buffers read from files: what the AArch64 object loader test runs under
// qemu-aarch64 (object_loader_aarch64_test.cpp writes its input). It links
// nothing but the runtime's sources, so it cross-compiles statically with
// aarch64-linux-gnu-g++ alone (tests/runtime/aarch64/CMakeLists.txt).
//
// Usage: object_loader_driver DIR. DIR/manifest.txt holds one line each:
//   object FILE                      the object to load (first line)
//   expect_error TEXT                loading must fail with a message holding TEXT
//                                    (the rest of the line); nothing is run
//   buffer BYTES FILE|-              a buffer (numbered in order), read from
//                                    FILE or zero-filled
//   call SYMBOL INDEX...             calls int32_t SYMBOL(void** args), which must return 0
//   call_expect RC SYMBOL INDEX...   the same, returning RC
//   output INDEX FILE                writes buffer INDEX to FILE after the calls
// Prints "loaded relocations=R stubs=S got_slots=G" when the object loads.
// Exit status: 0 when everything went as asked, 1 otherwise (with a message).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tunefarm/runtime/object_loader.h"
#include "tunefarm/runtime/runtime.h"

namespace {

int Fail(const std::string& why) {
  std::cerr << "object_loader_driver: " << why << "\n";
  return 1;
}

bool ReadFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

struct Call {
  std::string symbol;
  int32_t expected_rc = 0;
  std::vector<size_t> args;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: object_loader_driver DIR");
  const std::string dir = argv[1];
  std::ifstream manifest(dir + "/manifest.txt");
  if (!manifest) return Fail("cannot read " + dir + "/manifest.txt");
  std::string object_path, expected_error, line;
  std::vector<std::pair<size_t, std::string>> buffer_specs, outputs;
  std::vector<Call> calls;
  while (std::getline(manifest, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word == "object") {
      words >> object_path;
    } else if (word == "expect_error") {
      std::getline(words >> std::ws, expected_error);
    } else if (word == "buffer") {
      size_t bytes = 0;
      std::string file;
      words >> bytes >> file;
      buffer_specs.emplace_back(bytes, file);
    } else if (word == "call" || word == "call_expect") {
      Call call;
      if (word == "call_expect") words >> call.expected_rc;
      words >> call.symbol;
      for (size_t index; words >> index;) call.args.push_back(index);
      calls.push_back(call);
    } else if (word == "output") {
      size_t index = 0;
      std::string file;
      words >> index >> file;
      outputs.emplace_back(index, file);
    } else if (!word.empty()) {
      return Fail("unknown manifest line: " + line);
    }
  }
  std::string bytes;
  if (!ReadFile(dir + "/" + object_path, bytes)) return Fail("cannot read the object " + object_path);
  auto loaded = tunefarm::LoadObject(bytes);
  if (!expected_error.empty()) {
    if (loaded.ok()) return Fail("the object loaded, but an error holding '" + expected_error + "' was expected");
    if (loaded.status().message().find(expected_error) == std::string::npos) {
      return Fail("expected an error holding '" + expected_error + "', got: " + loaded.status().message());
    }
    std::cout << "refused: " << loaded.status().message() << "\n";
    return 0;
  }
  if (!loaded.ok()) return Fail("LoadObject: " + loaded.status().message());
  const tunefarm::LoadedObjectStats& stats = (*loaded)->stats();
  std::cout << "loaded relocations=" << stats.relocations << " stubs=" << stats.stubs
            << " got_slots=" << stats.got_slots << "\n";

  std::vector<void*> buffers;
  for (const auto& [size, file] : buffer_specs) {
    void* data = tunefarm_alloc(int64_t(size == 0 ? 1 : size), 64);
    std::memset(data, 0, size);
    if (file != "-") {
      std::string content;
      if (!ReadFile(dir + "/" + file, content) || content.size() != size) return Fail("bad input buffer " + file);
      std::memcpy(data, content.data(), size);
    }
    buffers.push_back(data);
  }
  for (const Call& call : calls) {
    auto symbol = (*loaded)->Symbol(call.symbol);
    if (!symbol.ok()) return Fail(symbol.status().message());
    std::vector<void*> args;
    for (size_t index : call.args) {
      if (index >= buffers.size()) return Fail("call " + call.symbol + " names buffer " + std::to_string(index));
      args.push_back(buffers[index]);
    }
    auto entry = reinterpret_cast<int32_t (*)(void**)>(*symbol);
    int32_t rc = entry(args.data());
    if (rc != call.expected_rc) {
      return Fail(call.symbol + " returned " + std::to_string(rc) + ", not " + std::to_string(call.expected_rc));
    }
  }
  for (const auto& [index, file] : outputs) {
    if (index >= buffers.size()) return Fail("output names buffer " + std::to_string(index));
    std::ofstream out(dir + "/" + file, std::ios::binary);
    out.write(static_cast<const char*>(buffers[index]), std::streamsize(buffer_specs[index].first));
    if (!out) return Fail("cannot write " + file);
  }
  for (void* data : buffers) tunefarm_free(data);
  return 0;
}

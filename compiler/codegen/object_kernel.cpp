// LoadKernelObject (object_kernel.h): the packed entries of a loaded object
// behind the JitKernel interface.
#include "tunefarm/compiler/codegen/object_kernel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/runtime/object_loader.h"

namespace tunefarm {
namespace {

using PackedFn = int32_t (*)(void**);

struct Entry {
  PackedFn fn = nullptr;  // null: the object lacks it
  size_t params = 0;
};

class ObjectKernel final : public JitKernel {
 public:
  ObjectKernel(std::unique_ptr<LoadedObject> code, std::string name, Entry whole, Entry prepack, Entry prepacked)
      : code_(std::move(code)), name_(std::move(name)), whole_(whole), prepack_(prepack), prepacked_(prepacked) {}

  Status Run(const std::vector<void*>& args) const override {
    if (whole_.fn == nullptr) {
      return Status::FailedPrecondition("kernel '" + name_ +
                                        "' was compiled with its prepack entries only (CodegenOptions::whole_entry): "
                                        "call it through PreparedCall");
    }
    return Call(whole_, name_, args);
  }
  const std::string& name() const override { return name_; }
  bool has_prepack() const override { return prepack_.fn != nullptr; }
  Status RunPrepack(const std::vector<void*>& args) const override {
    if (!has_prepack()) return Status::FailedPrecondition("kernel '" + name_ + "' has no prepack entry");
    return Call(prepack_, name_ + kPrepackSuffix, args);
  }
  Status RunPrepacked(const std::vector<void*>& args) const override {
    if (!has_prepack()) return Status::FailedPrecondition("kernel '" + name_ + "' has no prepacked entry");
    return Call(prepacked_, name_ + kPrepackedSuffix, args);
  }

 private:
  static Status Call(const Entry& entry, const std::string& name, const std::vector<void*>& args) {
    if (args.size() != entry.params) {
      return Status::InvalidArgument("kernel '" + name + "' takes " + std::to_string(entry.params) +
                                     " buffers, got " + std::to_string(args.size()));
    }
    const int32_t rc = entry.fn(const_cast<void**>(args.data()));
    if (rc == 0) return Status::OK();
    const std::string why = rc == kKernelErrorOutOfMemory ? " (out of memory)" : "";
    return Status::Internal("kernel '" + name + "' returned error code " + std::to_string(rc) + why);
  }

  std::unique_ptr<LoadedObject> code_;  // owns the pages the entries point into
  std::string name_;
  Entry whole_, prepack_, prepacked_;
};

}  // namespace

Result<std::unique_ptr<JitKernel>> LoadKernelObject(std::string_view object_bytes, const ir::PrimFunc& f) {
  const std::string& name = f.name;
  if (name.empty()) return Status::InvalidArgument("the PrimFunc has no name (the kernel's entry symbol)");
  if (object_bytes.empty()) return Status::InvalidArgument("the object for '" + name + "' is empty");
  auto loaded = LoadObject(object_bytes);
  if (!loaded.ok()) {
    return Status::InvalidArgument("the object for '" + name + "' does not load: " + loaded.status().message());
  }
  std::unique_ptr<LoadedObject> code = std::move(loaded).value();
  auto find = [&](const std::string& entry, size_t params, bool required) -> Result<Entry> {
    auto address = code->Symbol(entry + "_packed");
    if (!address.ok()) {
      if (!required) return Entry{};
      return Status::InvalidArgument("the object for '" + name + "' has no entry '" + entry + "_packed'");
    }
    return Entry{reinterpret_cast<PackedFn>(*address), params};
  };
  Entry whole, prepack, prepacked;
  if (std::optional<PrepackSplit> split = SplitPrepack(f)) {
    TF_ASSIGN_OR_RETURN(prepack, find(name + kPrepackSuffix, split->prepack.params.size(), true));
    TF_ASSIGN_OR_RETURN(prepacked, find(name + kPrepackedSuffix, split->prepacked.params.size(), true));
    TF_ASSIGN_OR_RETURN(whole, find(name, f.params.size(), false));  // measurement objects omit it
  } else {
    TF_ASSIGN_OR_RETURN(whole, find(name, f.params.size(), true));
  }
  return std::unique_ptr<JitKernel>(new ObjectKernel(std::move(code), name, whole, prepack, prepacked));
}

}  // namespace tunefarm

// A compiled model's bind entry: the object fills the slots whose memory it
// decides itself, so that the caller allocates only what it fills or reads.
//
//   int32_t <name>(void** slots, void* workspace)
//
// stores, for each embedded constant, the address of its bytes (read-only
// data of the object, 64-byte aligned) into slots[slot], and for each
// workspace slot `workspace + offset` into slots[slot]; it returns 0. The
// other slots are left as they are. The object owns the constants' bytes for
// as long as it is loaded; the caller owns the workspace.
//
// Only the llvm generator emits these (EmitCombinedObjectWithBind); a model
// object is one module, so the data travels in it and no second object or
// file is needed at link time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

struct BindEntry {
  struct Constant {
    size_t slot = 0;
    std::shared_ptr<const std::string> bytes;  // shared with the caller: not copied before LLVM takes it
  };
  struct WorkspaceSlot {
    size_t slot = 0;
    int64_t offset = 0;  // bytes from the workspace's start
  };
  std::string name;
  std::vector<Constant> constants;
  std::vector<WorkspaceSlot> workspace;
};

// EmitCombinedObject (codegen_llvm.h) plus `bind`'s entry and its constants.
// InvalidArgument when the bind entry's name is taken by another entry, or as
// EmitCombinedObject.
Result<std::string> EmitCombinedObjectWithBind(const std::vector<ir::PrimFunc>& funcs,
                                               const std::vector<SequenceEntry>& sequences, const BindEntry& bind,
                                               const Target& t, const CodegenOptions& options = {});

}  // namespace tunefarm

// Tree queries and rewrites shared by the schedule primitives (private to compiler/).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::sched {

// The For whose loop variable is `var`, or null.
const ir::For* FindLoop(const ir::Stmt& root, const ir::Variable* var);
// The Block named `name`, or null.
const ir::Block* FindBlock(const ir::Stmt& root, const std::string& name);
// The statement handle of a node found above (for rebuilding), or undefined.
ir::Stmt FindStmt(const ir::Stmt& root, const ir::StmtNode* node);
// Loops enclosing `node`, outermost first.
std::vector<const ir::For*> LoopsAbove(const ir::Stmt& root, const ir::StmtNode* node);
// The outermost statement that holds `block` and nothing else: its loop nest.
const ir::StmtNode* NestOf(const ir::Stmt& root, const ir::Block* block);
// Blocks under `s`, in program order.
std::vector<const ir::Block*> BlocksUnder(const ir::Stmt& s);
// Replaces `target` (by identity) with `replacement`; an undefined replacement
// removes the node (from its SeqStmt; a loop or allocate left empty goes too).
ir::Stmt ReplaceNode(const ir::Stmt& root, const ir::StmtNode* target, const ir::Stmt& replacement);

// True if some block under `s` binds a reduction iter var to an expression using `var`.
bool IsReductionLoop(const ir::Stmt& s, const ir::Variable* var);

// The buffer a block writes (its body's single Store) and the buffers it reads.
const ir::Store* BlockStore(const ir::Block* block);
std::vector<const ir::Load*> BlockLoadsOf(const ir::Block* block, const ir::BufferNode* buffer);
std::vector<ir::Buffer> BlockReadBuffers(const ir::Block* block);

// Index expressions of an access with the block's iter vars replaced by their bindings.
std::vector<ir::Expr> BoundIndices(const ir::Block* block, const std::vector<ir::Expr>& indices);

// A rectangular region [min, min + extent) per dimension; mins may use loop
// variables outside the region's scope, extents are constant.
struct RegionDim {
  ir::Expr min;
  int64_t extent;
};
using Region = std::vector<RegionDim>;

// The region `indices` cover while the variables in `varying` range over
// [0, extent); other variables stay symbolic. Fails for non-affine indices.
// `outer` gives the ranges of the symbolic loop variables, used (with the
// varying ones) to simplify floor div/mod of packed layouts first.
Result<Region> AccessRegion(const std::vector<ir::Expr>& indices, const std::map<const ir::Variable*, int64_t>& varying,
                            const ir::RangeMap& outer = {});
// Smallest region containing both; their mins must differ by constants.
Result<Region> UnionRegion(const Region& a, const Region& b);

// Buffers declared by Allocate nodes (name lookup), and whether a buffer is a function param.
bool IsParam(const ir::PrimFunc& f, const ir::BufferNode* buffer);
const ir::Allocate* FindAllocate(const ir::Stmt& root, const ir::BufferNode* buffer);
// True if any Load or Store under `s` touches `buffer`.
bool UsesBuffer(const ir::Stmt& s, const ir::BufferNode* buffer);
// Replaces every access of `from` with `to`, mapping indices through `remap`
// (identity when remap is empty).
ir::Stmt ReplaceBuffer(const ir::Stmt& s, const ir::BufferNode* from, const ir::Buffer& to,
                       const std::function<std::vector<ir::Expr>(const std::vector<ir::Expr>&)>& remap = nullptr);

// Checks that every buffer `body` accesses is a param of `f` or allocated by
// an enclosing Allocate; the error names the buffer and the block using it.
Status CheckAllocationScopes(const ir::PrimFunc& f, const ir::Stmt& body);

// Which side of "index inside [0, extent)" the comparison `check` tests:
// index >= 0 (kLower), index < extent (kUpper), in any arrangement the
// simplifier reduces to a constant difference; kNone for anything else.
enum class BoundSide { kNone, kLower, kUpper };
BoundSide BoundsCheckSide(const ir::Expr& check, const ir::Expr& index, int64_t extent);

// A fresh name not used by any block, loop or buffer so far.
std::string UniqueName(const ir::PrimFunc& f, const std::string& base);

}  // namespace tunefarm::sched

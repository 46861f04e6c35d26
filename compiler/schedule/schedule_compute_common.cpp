#include "schedule_compute_common.h"

#include <algorithm>

#include "schedule_utils.h"

namespace tunefarm::sched {

using namespace ir;

std::vector<const Block*> Writers(const Stmt& root, const BufferNode* buffer) {
  std::vector<const Block*> out;
  for (const Block* b : BlocksUnder(root)) {
    if (const Store* s = BlockStore(b); s && s->buffer.get() == buffer) out.push_back(b);
  }
  return out;
}

std::vector<const Block*> Readers(const Stmt& root, const BufferNode* buffer, const Block* except) {
  std::vector<const Block*> out;
  for (const Block* b : BlocksUnder(root)) {
    if (b != except && !BlockLoadsOf(b, buffer).empty()) out.push_back(b);
  }
  return out;
}

int ProgramIndex(const std::vector<const Block*>& order, const Block* block) {
  auto it = std::find(order.begin(), order.end(), block);
  return it == order.end() ? -1 : int(it - order.begin());
}

const Block* LateWriter(const Stmt& root, const Block* consumer, const BufferNode* except, int position,
                        const BufferNode** buffer) {
  std::vector<const Block*> order = BlocksUnder(root);
  for (const Buffer& b : BlockReadBuffers(consumer)) {
    if (b.get() == except) continue;
    for (const Block* w : order) {
      const Store* s = BlockStore(w);
      if (w == consumer || !s || s->buffer.get() != b.get()) continue;
      if (ProgramIndex(order, w) >= position) {
        *buffer = b.get();
        return w;
      }
    }
  }
  return nullptr;
}

bool StoresAtIterVars(const Block* b, const Store* s) {
  size_t d = 0;
  for (const IterVar& iv : b->iter_vars) {
    if (iv.kind != IterKind::kSpatial) continue;
    if (d >= s->indices.size() || s->indices[d].as<Variable>() != iv.var.get()) return false;
    ++d;
  }
  return d == s->indices.size();
}

Stmt DropUnusedAllocate(const Stmt& root, const BufferNode* buffer) {
  const Allocate* a = FindAllocate(root, buffer);
  if (!a || UsesBuffer(a->body, buffer)) return root;
  return ReplaceNode(root, a, a->body);
}

}  // namespace tunefarm::sched

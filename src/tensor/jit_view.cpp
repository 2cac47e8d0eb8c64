#include "tensor/jit_view.h"

#include "ir/op.h"

namespace ember::detail::jit {

namespace {

bool passes_through(ir::Op op) { return ir::is_movement(op) || op == ir::Op::DETACH; }

// Calls emit(v) for every value of n's key, in order; stops early when emit returns false.
template <class Emit>
bool walk(const ir::Node* n, Emit&& emit) {
  for (;; n = n->src[0].get()) {
    if (!emit(static_cast<int64_t>(n->op)) || !emit(static_cast<int64_t>(n->dtype)) ||
        !emit(static_cast<int64_t>(n->shape.size())))
      return false;
    for (int64_t d : n->shape)
      if (!emit(d)) return false;
    if (n->op == ir::Op::BUFFER) return true;  // not its arg: which buffer, at which version
    if (!emit(static_cast<int64_t>(n->arg.ints.size()))) return false;
    for (int64_t v : n->arg.ints)
      if (!emit(v)) return false;
  }
}

}  // namespace

const ir::Node* view_base(const ir::Node* n) {
  while (passes_through(n->op)) n = n->src[0].get();
  return n->op == ir::Op::BUFFER ? n : nullptr;
}

void view_key(const ir::Node* n, std::vector<int64_t>& key) {
  key.clear();
  walk(n, [&](int64_t v) {
    key.push_back(v);
    return true;
  });
}

bool same_view(const ir::Node* n, const std::vector<int64_t>& key) {
  size_t i = 0;
  return walk(n, [&](int64_t v) { return i < key.size() && key[i++] == v; }) && i == key.size();
}

}  // namespace ember::detail::jit

// StaticData and mark_static (ember/jit.h), and the test a capture's data read must pass.
#include "tensor/jit_static.h"

#include <unordered_set>
#include <vector>

#include "ember/jit.h"
#include "engine/buffer_table.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {
thread_local int t_static_depth = 0;
}  // namespace

StaticData::StaticData() { t_static_depth++; }
StaticData::~StaticData() { t_static_depth--; }

void mark_static(const Tensor& t) {
  t.realize();
  detail::set_static_buffer(t);
}

namespace detail {

bool in_static_scope() { return t_static_depth > 0; }

void set_static_buffer(const Tensor& t) {
  const ir::NodeRef& n = t.node();
  if (n->op != ir::Op::BUFFER)
    throw Error("internal error: mark_static on a tensor that is not a realized buffer");
  engine::set_static(*n);
}

bool static_value(const Tensor& t) { return static_node(*t.node()); }

void check_data_readable(const Tensor& t) {
  if (jit_capturing() && !static_value(t))
    throw Error(
        "jit: reading tensor data (item, to_vector, printing, numpy, DLPack) inside a jitted "
        "function is not allowed: the value would be frozen into the replay; keep the "
        "computation in tensors or read the data outside the function");
}

bool static_node(const ir::Node& value) {
  std::vector<const ir::Node*> todo = {&value};
  std::unordered_set<const ir::Node*> seen;
  while (!todo.empty()) {
    const ir::Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == ir::Op::RAND) return false;  // draws anew on every replay
    if (n->op == ir::Op::BUFFER) {
      if (!engine::is_static(*n)) return false;
      continue;
    }
    for (const auto& s : n->src) todo.push_back(s.get());
  }
  return true;
}

}  // namespace detail
}  // namespace ember

// Realizing tensors and reading their data (realize, item, to_vector, printing): the points where
// the lazy graph is forced. The frontend collects the tensors' graph roots, the engine computes
// them (engine/realize.h), and each tensor is rebound to the buffer that holds its value.
#include <algorithm>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "ember/jit.h"
#include "ember/pending_writes.h"
#include "ember/support/kernel_scalar.h"
#include "ember/support/thread_spare.h"
#include "engine/buffer_table.h"
#include "engine/launch_list.h"
#include "engine/realize.h"
#include "tensor/host_element.h"
#include "tensor/jit_static.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {

using ir::Op;

// A view of a buffer through movement ops (and DETACH) needs no kernel.
bool is_buffer_view(const ir::Node* n) {
  while (ir::is_movement(n->op) || n->op == Op::DETACH) n = n->src[0].get();
  return n->op == Op::BUFFER;
}

// The values a realize computes: distinct (node, in-place target) pairs, and which root each tensor
// takes its value from.
struct Roots {
  std::vector<engine::Root> roots;
  std::vector<std::pair<const Tensor*, size_t>> owners;  // tensor -> root index
  std::vector<const ir::Node*> holders;                  // see holders() below
  std::vector<engine::StorageRef> results;               // per root

  void clear() {  // keeps the vectors' memory (support::ThreadSpare)
    roots.clear();
    owners.clear();
    holders.clear();
    results.clear();
  }
};

// Whether realizing t computes anything: not for a buffer or a view of one without a pending
// in-place write.
bool needs_value(const Tensor& t) {
  if (!t.defined()) return false;
  const TensorImpl* impl = t.impl();
  const ir::Node* n = impl->node.get();
  return impl->assign_target || (n->op != Op::BUFFER && !is_buffer_view(n));
}

void collect_roots(std::span<const Tensor> ts, Roots& out) {
  auto& roots = out.roots;
  std::unordered_multimap<const ir::Node*, size_t> index;  // node -> roots (many roots only)
  for (auto& t : ts) {
    if (!needs_value(t)) continue;
    TensorImpl* impl = t.impl();
    const ir::Node* n = impl->node.get();
    // A value already among the roots with the same target is realized once.
    size_t r = 0;
    if (roots.size() < 32) {  // most realizes have a few roots: no map
      while (r < roots.size() &&
             (roots[r].node.get() != n || roots[r].target != impl->assign_target))
        r++;
    } else {
      if (index.empty())
        for (size_t i = 0; i < roots.size(); i++) index.emplace(roots[i].node.get(), i);
      r = roots.size();
      for (auto [it, end] = index.equal_range(n); it != end; ++it)
        if (roots[it->second].target == impl->assign_target) r = it->second;
      if (r == roots.size()) index.emplace(n, r);
    }
    out.owners.push_back({&t, r});
    if (r == roots.size()) roots.push_back({impl->node, impl->assign_target});
  }
}

// The node of each distinct tensor among the owners (their handles on the roots' values), which
// the engine counts only when a root writes in place: otherwise none.
const std::vector<const ir::Node*>& holders(Roots& rs) {
  bool in_place = false;
  for (auto& r : rs.roots) in_place = in_place || static_cast<bool>(r.target);
  if (!in_place) return rs.holders;
  std::unordered_set<const TensorImpl*> impls;
  for (auto& [t, r] : rs.owners)
    if (impls.insert(t->impl()).second) rs.holders.push_back(t->impl()->node.get());
  return rs.holders;
}

// Each tensor now reads its root's buffer (an in-place target holds the value in a new version).
void bind_results(const Roots& rs, const std::vector<engine::StorageRef>& results) {
  for (auto& [t, r] : rs.owners) {
    TensorImpl* impl = t->impl();
    const bool in_place = static_cast<bool>(impl->assign_target);
    ir::NodeRef value = std::move(impl->node);
    // A static value realized in a capture stays static (ember/jit.h, StaticData).
    const bool fixed = jit_capturing() && value->op != Op::BUFFER && detail::static_node(*value);
    impl->node = engine::make_buffer(results[r], value->shape);
    if (fixed) engine::set_static(*impl->node);
    impl->assign_target.reset();
    // A realized value that requires grad keeps its graph for autograd (tensor/backward.cpp).
    if (impl->requires_grad && !in_place && value->op != Op::BUFFER &&
        !engine::origin_of(*impl->node))
      engine::set_origin(*impl->node, std::move(value));
  }
}

// A span, so that one tensor is realized without building a vector (an eager call's allocation).
void realize_tensors(std::span<const Tensor> ts) {
  // Nothing to compute (a jit call realizes its inputs, buffers as a rule, on every call): no
  // spare taken, no roots collected.
  if (std::none_of(ts.begin(), ts.end(), needs_value)) return;
  support::ThreadSpare<Roots> spare;  // its vectors reused by the next realize on this thread
  Roots& rs = *spare;
  collect_roots(ts, rs);
  if (rs.roots.empty()) return;
  engine::realize(rs.roots, holders(rs), rs.results);
  bind_results(rs, rs.results);
}

// A realized, contiguous storage holding t's elements in row-major order, with every kernel that
// writes it run.
engine::StorageRef contiguous_storage(const Tensor& t) {
  detail::check_data_readable(t);
  realize_tensors({&t, 1});
  const ir::NodeRef& n = t.node();
  if (n->op == Op::BUFFER) {
    engine::sync();
    return engine::storage_of(*n);
  }
  Tensor c = detail::make_tensor_rg(ir::make_node(Op::CONTIGUOUS, n->dtype, {n}), false);
  realize_tensors({&c, 1});
  engine::sync();
  return engine::storage_of(*c.node());
}

// A float read as an integer type: the rule of Tensor::to (kernel_scalar.h).
template <typename T>
T from_float(double v) {
  if constexpr (std::is_same_v<T, int64_t>) return ember_f2i64(v);
  if constexpr (std::is_same_v<T, int32_t>) return ember_f2i32(v);
  if constexpr (std::is_same_v<T, uint8_t>) return ember_f2u8(v);
  if constexpr (std::is_same_v<T, int8_t>) return ember_f2i8(v);
  if constexpr (std::is_same_v<T, int16_t>) return ember_f2i16(v);
  if constexpr (std::is_same_v<T, uint16_t>) return ember_f2u16(v);
  if constexpr (std::is_same_v<T, uint32_t>) return ember_f2u32(v);
  if constexpr (std::is_same_v<T, uint64_t>) return ember_f2u64(v);
  return static_cast<T>(v);  // float, double, bool (v != 0)
}

template <typename T>
T convert(const void* p, ScalarType t, int64_t i) {
  if (is_floating_point(t)) return from_float<T>(detail::load_double(p, t, i));
  const int64_t v = detail::load_int(p, t, i);
  return t == kUInt64 ? static_cast<T>(static_cast<uint64_t>(v)) : static_cast<T>(v);
}

}  // namespace

const Tensor& Tensor::realize() const {
  realize_tensors({this, 1});
  return *this;
}

void realize(const std::vector<Tensor>& ts) { realize_tensors(ts); }

void realize_with_pending_writes(const std::vector<Tensor>& ts) {
  std::vector<Tensor> all = ts;
  for (Tensor& t : detail::pending_writes()) all.push_back(std::move(t));
  realize_tensors(all);
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  auto s = contiguous_storage(*this);
  std::vector<T> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  const void* p = s->host_read();
  for (size_t i = 0; i < out.size(); i++) out[i] = convert<T>(p, dtype(), static_cast<int64_t>(i));
  return out;
}

template <typename T>
T Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("a Tensor with " + std::to_string(numel()) +
                     " elements cannot be converted to Scalar (shape " + ir::shape_str(sizes()) +
                     ")");
  return to_vector<T>()[0];
}

#define EMBER_INSTANTIATE(T)                            \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(int32_t)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint8_t)
EMBER_INSTANTIATE(bool)
EMBER_INSTANTIATE(int8_t)
EMBER_INSTANTIATE(int16_t)
EMBER_INSTANTIATE(uint16_t)
EMBER_INSTANTIATE(uint32_t)
EMBER_INSTANTIATE(uint64_t)
#undef EMBER_INSTANTIATE

}  // namespace ember

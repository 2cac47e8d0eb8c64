// The graph IR: immutable, hash-consed nodes (docs/design.md principle 2). A node is (op, dtype,
// sources, argument, shape); structurally equal nodes are the same object, so pointer equality
// is structural equality and `hash` names the whole computation below a node.
#pragma once
#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/dtype.h"
#include "ember/support/shape_str.h"
#include "ir/op.h"
#include "ir/small_ints.h"
#include "ir/src_list.h"

namespace ember::ir {

using Shape = std::vector<int64_t>;
struct Node;

/// A counted reference to a node, with std::shared_ptr's interface (get, ->, *, bool, reset,
/// use_count, comparisons). The count is intrusive (Node::refs): taking and dropping a reference
/// is one atomic operation, and a node costs one allocation and no control block. The last
/// reference dropped destroys the node, which leaves the interning table as it goes (node.cpp).
class NodeRef {
 public:
  using element_type = const Node;
  constexpr NodeRef() noexcept = default;
  constexpr NodeRef(std::nullptr_t) noexcept {}  // NOLINT: as shared_ptr's
  NodeRef(const NodeRef& o) noexcept;
  NodeRef(NodeRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  NodeRef& operator=(const NodeRef& o) noexcept {
    NodeRef(o).swap(*this);
    return *this;
  }
  NodeRef& operator=(NodeRef&& o) noexcept {
    NodeRef(std::move(o)).swap(*this);
    return *this;
  }
  ~NodeRef();

  const Node* get() const noexcept { return p_; }
  const Node& operator*() const noexcept { return *p_; }
  const Node* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// The number of references to the node (0 for a null one).
  long use_count() const noexcept;
  void reset() noexcept { NodeRef().swap(*this); }
  void swap(NodeRef& o) noexcept { std::swap(p_, o.p_); }
  friend bool operator==(const NodeRef& a, const NodeRef& b) noexcept { return a.p_ == b.p_; }
  friend bool operator==(const NodeRef& a, std::nullptr_t) noexcept { return a.p_ == nullptr; }
  friend std::strong_ordering operator<=>(const NodeRef& a, const NodeRef& b) noexcept {
    return std::compare_three_way{}(a.p_, b.p_);
  }

  /// Takes a new reference to n when it is still alive (its count is not 0), else returns null.
  /// For tables of plain node pointers (interning, Storage's readers), under the lock that a dying
  /// node takes to leave them.
  static NodeRef try_acquire(const Node* n) noexcept;
  /// Wraps a reference already counted in n->refs (make_node's new node).
  static NodeRef adopt(const Node* n) noexcept { return NodeRef(n, 0); }

 private:
  NodeRef(const Node* p, int) noexcept : p_(p) {}
  const Node* p_ = nullptr;
};

using SrcList = InlineRefs<NodeRef>;

/// Op argument: integer list (shape, axes, pads, buffer id and version; up to six in the node
/// itself) and a floating value (constants).
struct Arg {
  SmallInts ints;
  double f = 0;
};

// Made only by make_node (in one allocation from a per-thread pool), destroyed by its last
// NodeRef; the interning table holds plain pointers, which a lookup turns into a NodeRef only
// while the count is not 0 (NodeRef::try_acquire), and a node leaves the table as it is destroyed.
// A node holds only the graph and never changes after make_node: what other layers know about a
// node (the memory a BUFFER reads, autograd's origin of a realized value) lives in their own
// tables (engine/buffer_table.h).
struct Node {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  /// The references to this node (NodeRef). Set to 1 by make_node before the node is shared.
  mutable std::atomic<long> refs;
  Op op;
  ScalarType dtype;
  SrcList src;  // in the node (at most three)
  Arg arg;
  DimVector shape;  // in the node (up to six dims; longer on the heap)
  size_t hash = 0;

  int64_t numel() const;
  /// Constant value of a CONST node as double (an integer CONST's exact value: arg.ints[0]).
  double const_value() const { return arg.f; }
  std::string str() const;  // short description for errors and DEBUG
  bool interned = false;    // in the interning table (make_node), which ~Node leaves
};

inline NodeRef::NodeRef(const NodeRef& o) noexcept : p_(o.p_) {
  if (p_) p_->refs.fetch_add(1, std::memory_order_relaxed);
}
/// Destroys the node whose count has dropped to 0 (out of line: the table, the pool).
void destroy_node(const Node* n) noexcept;
inline NodeRef::~NodeRef() {
  if (p_ && p_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(p_);
}
inline long NodeRef::use_count() const noexcept {
  return p_ ? p_->refs.load(std::memory_order_relaxed) : 0;
}
inline NodeRef NodeRef::try_acquire(const Node* n) noexcept {
  long c = n->refs.load(std::memory_order_relaxed);
  while (c != 0)
    if (n->refs.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                      std::memory_order_relaxed))
      return NodeRef(n, 0);
  return {};
}

/// Returns the unique node with these fields (creating it if needed). Shape is derived from the op
/// and sources for every op but BUFFER and CONST, which take `shape`. An op on float16 or
/// bfloat16 values other than moving them (movement, CAST, WHERE, CONTIGUOUS, DETACH) becomes the
/// op in float32 between CASTs: the graph never computes in 16-bit floats, so the devices only
/// load, store and convert them.
NodeRef make_node(Op op, ScalarType dtype, SrcList src, Arg arg = {}, DimVector shape = {});
/// A BUFFER node: version `version` of the data of buffer `id`, seen with `shape`.
/// arg.ints = {id, version}. Only the engine's buffer table makes them (engine::make_buffer),
/// so that every BUFFER node has memory behind it.
NodeRef make_buffer_node(uint64_t id, uint64_t version, ScalarType dtype, DimVector shape);
/// The buffer a BUFFER node reads (arg.ints[0]).
inline uint64_t buffer_id(const Node& n) { return static_cast<uint64_t>(n.arg.ints.at(0)); }
/// The version of its buffer's data that a BUFFER node reads (arg.ints[1]).
inline uint64_t buffer_version(const Node& n) { return static_cast<uint64_t>(n.arg.ints.at(1)); }

/// Called as the last reference to a BUFFER node goes, after the node left the interning table
/// (no lookup can find it any more) and while its fields are whole: the layer that keeps the
/// memory behind BUFFER nodes (the engine's buffer table, keyed by node) forgets the node there.
/// That layer sets it once, before it makes its first BUFFER node.
using BufferReleaseFn = void (*)(const Node& buffer) noexcept;
void set_buffer_release(BufferReleaseFn fn);
/// v rounded to float16 or bfloat16 (t), through float32 (as libtorch converts a double).
double round_reduced_float(double v, ScalarType t);
/// A 0-d CONST node: v as the dtype holds it (float32 rounded; for integer dtypes converted by
/// the float-to-integer rule of ember/support/kernel_scalar.h).
NodeRef make_const(double v, ScalarType dtype);
/// A 0-d CONST node holding the integer v exactly: arg.ints[0] for integer and bool dtypes
/// (wrapped modulo 2^bits, bool: v != 0), with arg.f its value as a double; a float dtype rounds
/// v once.
NodeRef make_const_int(int64_t v, ScalarType dtype);

int64_t shape_numel(std::span<const int64_t> s);
/// A node's sources: a and then b (when given).
inline SrcList src_list(NodeRef a, NodeRef b = nullptr) {
  SrcList v;
  v.push_back(std::move(a));
  if (b) v.push_back(std::move(b));
  return v;
}
using support::shape_str;  // "[2, 3]"

/// The number of nodes in the interning table (alive, or being destroyed right now).
size_t interned_node_count();

/// Nodes reachable from `roots`, sources before users.
std::vector<const Node*> toposort(const std::vector<const Node*>& roots);

}  // namespace ember::ir

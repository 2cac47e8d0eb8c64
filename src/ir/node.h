// The graph IR: immutable, hash-consed nodes (DESIGN.md principle 2). A node is (op, dtype,
// sources, argument, shape); structurally equal nodes are the same object, so pointer equality
// is structural equality and `hash` names the whole computation below a node.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/dtype.h"
#include "ember/support/shape_str.h"
#include "ir/op.h"
#include "ir/storage.h"

namespace ember::ir {

using Shape = std::vector<int64_t>;
struct Node;
using NodeRef = std::shared_ptr<const Node>;

/// Op argument: integer list (shape, axes, pads, storage id) and a floating value (constants).
struct Arg {
  std::vector<int64_t> ints;
  double f = 0;
};

// Derives from enable_shared_from_this so that the interning table can hold plain pointers: a
// lookup turns one into a NodeRef only while the node is alive, and a node leaves the table as it
// is destroyed (node.cpp). The base is of `const Node`: weak_from_this() is then a plain copy
// (converting a weak_ptr<Node> locks it, and that temporary reference could be the last one).
struct Node : std::enable_shared_from_this<const Node> {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  Op op;
  ScalarType dtype;
  std::vector<NodeRef> src;
  Arg arg;
  Shape shape;
  size_t hash = 0;
  std::shared_ptr<Storage> storage;  // BUFFER only
  /// BUFFER only: the lazy expression whose realized value this buffer holds, kept when that
  /// value requires grad so that autograd can differentiate through a realized tensor.
  NodeRef origin;

  int64_t numel() const;
  /// Constant value of a CONST node as double.
  double const_value() const { return arg.f; }
  std::string str() const;  // short description for errors and DEBUG
  bool interned = false;    // in the interning table (make_node), which ~Node leaves
};

/// Returns the unique node with these fields (creating it if needed). Shape is derived from the op
/// and sources for every op but BUFFER and CONST, which take `shape`.
NodeRef make_node(Op op, ScalarType dtype, std::vector<NodeRef> src, Arg arg = {},
                  Shape shape = {});
/// A BUFFER node reading the current version of `storage` with `shape` (numel must match).
/// arg.ints = {storage id, storage version}.
NodeRef make_buffer(std::shared_ptr<Storage> storage, Shape shape);
/// The version of its storage that a BUFFER node reads (arg.ints[1]).
inline uint64_t buffer_version(const Node& n) { return static_cast<uint64_t>(n.arg.ints.at(1)); }
/// A 0-d CONST node (integers are exact up to 2^53).
NodeRef make_const(double v, ScalarType dtype);

int64_t shape_numel(const Shape& s);
/// An empty int64 vector (for a shape or an argument), holding memory that a dead node of this
/// thread left when there is some: a small eager call's graph then allocates less (issue 11).
std::vector<int64_t> reusable_ints();
/// The same for a node's sources: a vector holding a and then b (when given).
std::vector<NodeRef> reusable_srcs();
inline std::vector<NodeRef> src_list(NodeRef a, NodeRef b = nullptr) {
  std::vector<NodeRef> v = reusable_srcs();
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

#include "ir/node.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "ember/support/kernel_scalar.h"
#include "ember/support/spin_lock.h"
#include "ember/support/splitmix64.h"
#include "ir/element_type.h"

namespace ember::ir {

namespace {

// Every primitive's sources fit a node's SrcList.
constexpr int kMaxArity = std::max({0
#define EMBER_OP(name, cat, arity, flags, cost, c_float, c_int, c_bool) , arity
#include "ir/ops.def"
#undef EMBER_OP
});
static_assert(kMaxArity <= static_cast<int>(SrcList::kMax));

// One multiply-xor step per field (two instructions; boost's hash_combine takes six), and
// splitmix64's output function at the end so that every bit of the result depends on every field:
// make_node hashes about ten fields for each node of every eager call (issue 11). The hash only
// places nodes in the table below (same_fields decides equality), so it is free to change.
size_t hash_fields(Op op, ScalarType dt, const SrcList& src, const Arg& arg,
                   const DimVector& shape) {
  constexpr uint64_t kMul = 0x9fb21c651e98df25ULL;
  uint64_t h = (static_cast<uint64_t>(op) << 8 | static_cast<uint64_t>(dt)) * kMul;
  for (auto& s : src) h = (h ^ s->hash) * kMul;
  for (auto v : arg.ints) h = (h ^ static_cast<uint64_t>(v)) * kMul;
  h = (h ^ std::bit_cast<uint64_t>(arg.f)) * kMul;  // bits, as same_arg compares them
  for (auto v : shape) h = (h ^ static_cast<uint64_t>(v)) * kMul;
  return support::splitmix64_mix(h);
}

// Constants are the same only bit for bit: 0.0 == -0.0 numerically, but x + 0.0 and x + (-0.0)
// differ at x = -0.0, and x * 0.0 and x * (-0.0) differ in sign (parity Const.signed_zeros_*).
bool same_arg(const Arg& a, const Arg& b) {
  return a.ints == b.ints && std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f);
}

bool same_fields(const Node& n, Op op, ScalarType dt, const SrcList& src, const Arg& arg,
                 const DimVector& shape) {
  if (n.op != op || n.dtype != dt || !same_arg(n.arg, arg) || n.shape != shape) return false;
  if (n.src.size() != src.size()) return false;
  for (size_t i = 0; i < src.size(); i++)
    if (n.src[i] != src[i]) return false;
  return true;
}

// The interning table: kShards open-addressed sets of node pointers, each under its own mutex,
// chosen by the node's hash (threads building different graphs rarely meet on one lock). A slot
// holds a plain pointer, no reference: a node removes itself as it is destroyed (~Node, under its
// shard's lock, before any field is torn down), so every pointer in a slot points at a whole
// node. A lookup may still meet a node whose last reference is gone and whose destructor waits for
// the lock: NodeRef::try_acquire fails for it (a count never rises from 0), and the lookup goes on
// as if it were absent.
constexpr size_t kShards = 16;

// A shard's lock is held for a probe, an insert or an erase (tens of instructions), taken twice
// per node of an eager call (make and destroy): a spin lock.
using support::SpinLock;

struct alignas(64) Shard {
  SpinLock mu;
  std::vector<const Node*> slots;  // nullptr: empty; size a power of two (or 0)
  size_t used = 0;

  size_t home(size_t h) const { return (h * support::kSplitMix64Gamma >> 16) & (slots.size() - 1); }
  void insert(const Node* n) {
    if ((used + 1) * 2 > slots.size()) grow();
    size_t i = home(n->hash);
    while (slots[i]) i = (i + 1) & (slots.size() - 1);
    slots[i] = n;
    used++;
  }
  void grow() {
    std::vector<const Node*> old = std::move(slots);
    slots.assign(std::max<size_t>(256, old.size() * 2), nullptr);
    used = 0;
    for (const Node* n : old)
      if (n) insert(n);
  }
  // Removes n (present), shifting later members of its probe run back into the hole.
  void erase(const Node* n) {
    const size_t mask = slots.size() - 1;
    size_t i = home(n->hash);
    while (slots[i] != n) i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; slots[j]; j = (j + 1) & mask) {
      const size_t k = home(slots[j]->hash);
      // slots[j] may move to the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (!stays) {
        slots[i] = slots[j];
        i = j;
      }
    }
    slots[i] = nullptr;
    used--;
  }
};

// Constant-initialised (no guard checked on each of an eager call's makes and destroys) and never
// destroyed: nodes may outlive static destruction.
union ShardTable {
  constexpr ShardTable() : shards() {}
  ~ShardTable() {}
  Shard shards[kShards];
};
constinit ShardTable g_table;
constinit std::atomic<BufferReleaseFn> g_buffer_release{nullptr};
Shard* shards() { return g_table.shards; }
Shard& shard_of(size_t h) { return g_table.shards[(h >> 7) % kShards]; }

// Node blocks are recycled per thread: an eager
// call makes and drops the same handful of nodes each time, more than glibc's per-thread cache
// holds for one size. A thread keeps at most kMaxFree freed blocks; a block freed on another
// thread joins that thread's pool (all are ::operator new blocks of one size).
struct NodePool {
  static constexpr size_t kMaxFree = 512;
  std::vector<void*> free_blocks;  // of sizeof(Node) bytes
  NodePool();
  ~NodePool();
};
// This thread's pool, through a plain pointer: a constant-initialised, trivially destructible
// thread_local is one %fs-relative load, where the pool itself (a dynamic destructor) has its
// guard checked on every access, dozens of times per eager call. Null until the pool is made and
// after it is destroyed (thread exit; then t_pool_gone).
thread_local constinit NodePool* t_pool_ptr = nullptr;
thread_local constinit bool t_pool_gone = false;
thread_local NodePool t_pool;
NodePool::NodePool() { free_blocks.reserve(kMaxFree); }
NodePool::~NodePool() {
  for (void* p : free_blocks) ::operator delete(p);
  free_blocks.clear();
  t_pool_ptr = nullptr;
  t_pool_gone = true;
}
[[gnu::noinline]] NodePool* make_pool() {
  if (t_pool_gone) return nullptr;
  t_pool_ptr = &t_pool;  // constructs it (and registers its destructor) on this first use
  return t_pool_ptr;
}
// This thread's pool, or null during the thread's exit.
inline NodePool* pool() {
  NodePool* p = t_pool_ptr;
  return p ? p : make_pool();
}

// A node's memory: a block of this thread's pool, or a new one.
void* alloc_node_block(NodePool* pool) {
  if (pool && !pool->free_blocks.empty()) {
    void* p = pool->free_blocks.back();
    pool->free_blocks.pop_back();
    return p;
  }
  return ::operator new(sizeof(Node));
}
void free_node_block(void* p) {
  if (NodePool* pool = ir::pool(); pool && pool->free_blocks.size() < NodePool::kMaxFree) {
    pool->free_blocks.push_back(p);
    return;
  }
  ::operator delete(p);
}

// Sets s (empty) to the shape that op (of category c) infers from its sources and argument.
void infer_shape(Op op, OpCategory c, const SrcList& src, const Arg& arg, DimVector& s) {
  switch (c) {
    case OpCategory::Unary:
    case OpCategory::Binary:
    case OpCategory::Ternary:
      s.assign(src.at(0)->shape.begin(), src.at(0)->shape.end());
      return;
    case OpCategory::Reduce:
      s.assign(src.at(0)->shape.begin(), src.at(0)->shape.end());
      for (auto a : arg.ints) s.at(a) = 1;
      return;
    case OpCategory::Movement: {
      const DimVector& in = src.at(0)->shape;
      switch (op) {
        case Op::RESHAPE:
        case Op::EXPAND:
          s.assign(arg.ints.begin(), arg.ints.end());
          return;
        case Op::PERMUTE:
          s.resize(in.size());
          for (size_t i = 0; i < in.size(); i++) s[i] = in.at(arg.ints.at(i));
          return;
        case Op::PAD:
          s.assign(in.begin(), in.end());
          for (size_t i = 0; i < in.size(); i++)
            s[i] += arg.ints.at(2 * i) + arg.ints.at(2 * i + 1);
          return;
        case Op::SHRINK:
          s.assign(in.begin(), in.end());
          for (size_t i = 0; i < in.size(); i++) s[i] = arg.ints.at(2 * i + 1) - arg.ints.at(2 * i);
          return;
        default:
          s.assign(in.begin(), in.end());
          return;
      }
    }
    case OpCategory::Buffer:
      if (!src.empty()) s.assign(src[0]->shape.begin(), src[0]->shape.end());
      return;
  }
}

}  // namespace

int64_t shape_numel(std::span<const int64_t> s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

int64_t Node::numel() const { return shape_numel(shape); }

std::string Node::str() const {
  std::ostringstream o;
  o << op_name(op) << "<" << dtype_name(dtype) << shape_str(shape) << ">";
  return o.str();
}

void destroy_node(const Node* n) noexcept {
  Node* m = const_cast<Node*>(n);
  m->~Node();
  free_node_block(m);
}

Node::~Node() {
  if (interned) {
    Shard& sh = shard_of(hash);
    std::lock_guard<SpinLock> lock(sh.mu);
    sh.erase(this);
  }
  if (op == Op::BUFFER)
    if (BufferReleaseFn f = g_buffer_release.load(std::memory_order_acquire)) f(*this);
  // Out of the table (a lookup compares fields under the lock): the members go (first to last), and
  // the sources' going may destroy them.
}

size_t interned_node_count() {
  size_t n = 0;
  for (size_t i = 0; i < kShards; i++) {
    std::lock_guard<SpinLock> lock(shards()[i].mu);
    n += shards()[i].used;
  }
  return n;
}

namespace {
// is_reduced_floating_point, inline: asked for a node and each of its sources on every make_node.
inline bool reduced_float(ScalarType t) { return t == kFloat16 || t == kBFloat16; }

// Whether a node (of category c) computes on float16 / bfloat16 values. Only moving them
// (movement, CAST, WHERE's select, CONTIGUOUS, DETACH) keeps them; everything else computes in
// float32 between conversions.
bool computes_reduced_float(Op op, OpCategory c, ScalarType dtype, const SrcList& src) {
  if (c == OpCategory::Movement || op == Op::CAST || op == Op::WHERE) return false;
  if (c == OpCategory::Buffer) return op == Op::RAND && reduced_float(dtype);
  if (reduced_float(dtype)) return true;
  for (const NodeRef& s : src)
    if (reduced_float(s->dtype)) return true;
  return false;
}

// The node in float32: its reduced-float sources converted up, its result rounded down (one
// rounding per op, as libtorch's CPU kernels compute float16 and bfloat16).
NodeRef in_float32(Op op, ScalarType dtype, const SrcList& src, Arg arg, DimVector shape) {
  SrcList up;
  for (const NodeRef& s : src)
    up.push_back(is_reduced_floating_point(s->dtype) ? make_node(Op::CAST, kFloat32, {s}) : s);
  const ScalarType t = is_reduced_floating_point(dtype) ? kFloat32 : dtype;
  NodeRef n = make_node(op, t, std::move(up), std::move(arg), std::move(shape));
  return t == dtype ? n : make_node(Op::CAST, dtype, {std::move(n)});
}
}  // namespace

NodeRef make_node(Op op, ScalarType dtype, SrcList src, Arg arg, DimVector shape) {
  const OpCategory c = op_category(op);  // one table lookup (a call) per node
  if (computes_reduced_float(op, c, dtype, src))
    return in_float32(op, dtype, src, std::move(arg), std::move(shape));
  if (op != Op::BUFFER && op != Op::CONST && op != Op::RAND) {
    shape.clear();
    infer_shape(op, c, src, arg, shape);
  }
  const size_t h = hash_fields(op, dtype, src, arg, shape);
  Shard& sh = shard_of(h);
  NodeRef found;
  {
    std::lock_guard<SpinLock> lock(sh.mu);
    if (!sh.slots.empty()) {
      const size_t mask = sh.slots.size() - 1;
      for (size_t i = sh.home(h); sh.slots[i]; i = (i + 1) & mask) {
        const Node* c = sh.slots[i];
        if (c->hash != h || !same_fields(*c, op, dtype, src, arg, shape)) continue;
        found = NodeRef::try_acquire(c);  // null when dying: as good as absent
        if (found) break;
      }
    }
    if (!found) {
      // Default-initialised (no zeroing of the whole node before its members' initialisers).
      Node* n = ::new (alloc_node_block(pool())) Node;
      n->refs.store(1, std::memory_order_relaxed);  // published by the shard's unlock
      n->op = op;
      n->dtype = dtype;
      n->src = std::move(src);
      n->arg = std::move(arg);
      n->shape = std::move(shape);
      n->hash = h;
      n->interned = true;
      sh.insert(n);
      return NodeRef::adopt(n);
    }
  }
  // An existing node: src's references are dropped as it goes, after the lock (that may destroy
  // nodes, which take a shard's lock).
  return found;
}

void set_buffer_release(BufferReleaseFn fn) { g_buffer_release.store(fn); }

NodeRef make_buffer_node(uint64_t id, uint64_t version, ScalarType dtype, DimVector shape) {
  Arg a;
  a.ints.assign({static_cast<int64_t>(id), static_cast<int64_t>(version)});
  return make_node(Op::BUFFER, dtype, {}, std::move(a), std::move(shape));
}

double round_reduced_float(double v, ScalarType t) {
  const auto f = static_cast<float>(v);
  return t == kFloat16 ? ember_h2f(ember_f2h(f)) : ember_bf2f(ember_f2bf(f));
}

namespace {
// A CONST with its argument (ints: the exact value of an integer or bool constant).
NodeRef const_node(ScalarType dtype, double f, std::initializer_list<int64_t> ints) {
  Arg a;
  a.ints.assign(ints);
  a.f = f;
  return make_node(Op::CONST, dtype, {}, a, {});  // a copy: moving leaves GCC 12 unsure
}
}  // namespace

NodeRef make_const(double v, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float32:
      return const_node(dtype, static_cast<double>(static_cast<float>(v)), {});
    case ScalarType::Float16:
    case ScalarType::BFloat16:
      return const_node(dtype, round_reduced_float(v, dtype), {});
    case ScalarType::Float64:
      return const_node(dtype, v, {});
    default:
      return make_const_int(float_to_int(v, dtype), dtype);
  }
}

NodeRef make_const_int(int64_t v, ScalarType dtype) {
  // A float: int64 rounds once to the float's precision (float32 first for 16 bits).
  if (is_floating_point(dtype))
    return make_const(dtype == kFloat64 ? static_cast<double>(v) : static_cast<float>(v), dtype);
  v = wrap_int(v, dtype);  // arg.ints[0] holds the bits; the double is the value (uint64 unsigned)
  const double f =
      dtype == kUInt64 ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v);
  return const_node(dtype, f, {v});
}

std::vector<const Node*> toposort(const std::vector<const Node*>& roots) {
  std::vector<const Node*> order;
  std::unordered_set<const Node*> seen;
  // Iterative DFS (graphs can be deep: long elementwise chains, optimizer updates).
  std::vector<std::pair<const Node*, size_t>> stack;
  for (auto* r : roots) {
    if (!seen.insert(r).second) continue;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->src.size()) {
        const Node* s = n->src[i++].get();
        if (seen.insert(s).second) stack.push_back({s, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace ember::ir

#include "schedule/lower.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "ember/error.h"

namespace ember::schedule {

using ir::Node;
using ir::Op;
using ir::View;

namespace {

// f(0, ..., 0) == 0: the zero fill of a PAD above the op may be pushed below it. The others
// (exp(0) = 1, log(0) = -inf, 1/0, !0, 0 == 0, 0/0, 0^0) need the fill re-applied.
bool zero_preserving(Op op) { return ir::op_has(op, ir::ZeroPreserving); }

bool size1_reshape(const Node& m) {
  if (m.op != Op::RESHAPE) return false;
  std::vector<int64_t> a, b;
  for (auto d : m.src[0]->shape)
    if (d != 1) a.push_back(d);
  for (auto d : m.shape)
    if (d != 1) b.push_back(d);
  return a == b;
}

class Lowerer {
 public:
  Lowerer(const Node* root, const std::unordered_set<const Node*>& mat,
          const std::unordered_map<const Node*, int>& users,
          const std::unordered_map<const Node*, BufferName>& names, const NameBuffer& name)
      : root_(root), mat_(mat), users_(users), names_(names), name_(name) {}

  ScheduleItem lower() {
    ScheduleItem item;
    std::vector<const Node*> stack;
    ExprRef value = visit(root_, stack, false, false);
    materialise_if_recomputed();
    Kernel& k = item.kernel;
    if (reduce_) {
      k.full_shape = reduce_->src[0]->shape;
      k.reduce_axes = reduce_->arg.ints;
      if (order_.empty()) {
        order_.resize(root_->shape.size());
        std::iota(order_.begin(), order_.end(), int64_t{0});
      }
      value = to_out_space(value, reduce_->shape);
      auto out = View::contiguous(root_->shape).permute(order_).reshape(reduce_->shape);
      if (!out) throw Materialise{reduce_};  // the root's layout is no view of the reduce's
      k.out_view = *out;
    } else {
      k.full_shape = root_->shape;
      k.out_view = View::contiguous(root_->shape);
    }
    k.value = value;
    k.buffers.push_back({root_->dtype, root_->numel()});
    item.buffers.push_back(names_.at(root_));
    for (auto& [name, buf] : inputs_) {
      k.buffers.push_back(buf);
      item.buffers.push_back(name);
    }
    return item;
  }

 private:
  // The slot of the buffer `n` reads (a graph BUFFER or a member of the materialised set).
  int slot(const Node* n) {
    const bool graph = n->op == Op::BUFFER;
    const BufferName b = graph ? name_(*n) : names_.at(n);
    for (size_t i = 0; i < inputs_.size(); i++)
      if (inputs_[i].first == b) return static_cast<int>(i) + 1;
    inputs_.push_back({b, KernelBuffer{n->dtype, n->numel()}});
    return static_cast<int>(inputs_.size());
  }

  // The view of a leaf of shape `shape` seen through the movement ops on the stack (top first).
  View leaf_view(const Node* leaf, const std::vector<const Node*>& stack) {
    View v = View::contiguous(leaf->shape);
    for (size_t j = stack.size(); j-- > 0;) {
      auto nv = v.apply(*stack[j]);
      if (!nv) throw Materialise{j + 1 < stack.size() ? stack[j + 1] : leaf};
      v = *nv;
    }
    return v;
  }

  ExprRef visit(const Node* n, std::vector<const Node*>& stack, bool below, bool shared) {
    // Inside a nest, the same node lives in another loop space: one memo context per nest.
    int context = nest_ >= 0 ? 2 + nest_ : below ? 1 : 0;
    auto key = std::make_pair(n, std::make_pair(stack, context));
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    ExprRef e = visit_uncached(n, stack, below, shared);
    memo_[key] = e;
    return e;
  }

  ExprRef visit_uncached(const Node* n, std::vector<const Node*>& stack, bool below, bool shared) {
    touched_.insert(n);
    auto e = std::make_shared<Expr>();
    e->dtype = n->dtype;
    if (n != root_ && (n->op == Op::BUFFER || mat_.count(n))) {
      e->kind = Expr::Kind::Load;
      e->buf = slot(n);
      e->view = leaf_view(n, stack);
      return e;
    }
    for (auto& s : n->src) parents_[s.get()].insert(n);
    switch (ir::op_category(n->op)) {
      case ir::OpCategory::Movement: {
        if (n->op == Op::EXPAND) materialise_if_expensive(n);
        stack.push_back(n);
        ExprRef r =
            visit(n->src[0].get(), stack, below, shared || (n != root_ && users_.at(n) > 1));
        stack.pop_back();
        return r;
      }
      case ir::OpCategory::Unary:
      case ir::OpCategory::Binary:
      case ir::OpCategory::Ternary: {
        if (below && n != root_ && users_.at(n) > 1) below_shared_.push_back(n);
        e->kind = Expr::Kind::Alu;
        e->op = n->op;
        bool sh = shared || (n != root_ && users_.at(n) > 1);
        for (auto& s : n->src) e->src.push_back(visit(s.get(), stack, below, sh));
        if (!zero_preserving(n->op) && !stack.empty()) {
          // Movement ops above this op are applied at the loads below it; a pad among them fills
          // its region with 0 there, so op(0) must be replaced by 0 here: where(valid, op, 0).
          View v = leaf_view(n, stack);
          if (v.has_mask()) return select_valid(e, v, n->dtype);
        }
        return e;
      }
      case ir::OpCategory::Reduce:
        return visit_reduce(n, stack, below, shared);
      case ir::OpCategory::Buffer:
        break;
    }
    switch (n->op) {
      case Op::CONST: {
        e->kind = Expr::Kind::Const;
        e->value = n->arg.f;
        if (!n->arg.ints.empty()) e->ivalue = n->arg.ints[0];  // integer and bool constants
        View v = leaf_view(n, stack);
        if (v.has_mask()) e->view = v;
        return e;
      }
      case Op::RAND:
        e->kind = Expr::Kind::Rand;
        e->buf = slot(n->src[0].get());
        e->view = leaf_view(n, stack);
        return e;
      case Op::DETACH:
      case Op::CONTIGUOUS:  // only the root itself reaches here
        return visit(n->src[0].get(), stack, below, shared);
      default:
        throw Error(std::string("scheduler: unexpected op ") + ir::op_name(n->op));
    }
  }

  static ExprRef select_valid(ExprRef value, const View& v, ScalarType t) {
    auto valid = std::make_shared<Expr>();  // a bool 1 inside the view's mask, 0 outside
    valid->kind = Expr::Kind::Const;
    valid->dtype = kBool;
    valid->value = 1;
    valid->ivalue = 1;
    valid->view = v;
    auto zero = std::make_shared<Expr>();
    zero->kind = Expr::Kind::Const;
    zero->dtype = t;
    auto w = std::make_shared<Expr>();
    w->kind = Expr::Kind::Alu;
    w->op = Op::WHERE;
    w->dtype = t;
    w->src = {valid, std::move(value), zero};
    return w;
  }

  ExprRef visit_reduce(const Node* n, std::vector<const Node*>& stack, bool below, bool shared) {
    bool fusable = nest_ < 0 && !below && !reduce_ && !shared && (n == root_ || users_.at(n) == 1);
    bool size1 = true;
    for (auto* m : stack) size1 = size1 && size1_reshape(*m);
    fusable = fusable && (size1 || identity_above(n, stack) || bijective_above(n, stack));
    if (!fusable) {
      if (n == root_) throw Error("scheduler: root reduce cannot fuse");
      if (nest_ < 0 && root_->numel() == 1 && n->numel() == 1 && users_.at(n) == 1)
        return visit_nest(n);
      throw Materialise{n};
    }
    reduce_ = n;
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Reduce;
    e->op = n->op;
    e->dtype = n->dtype;
    e->axes = n->arg.ints;
    std::vector<const Node*> inner;
    e->src.push_back(visit(n->src[0].get(), inner, true, false));
    return e;
  }

  // A full reduction in a kernel whose value is one element: a nest (kernel.h), computed once in
  // its own loop space instead of materialised by a kernel of its own. Reduces inside it are
  // materialised.
  ExprRef visit_nest(const Node* n) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Reduce;
    e->op = n->op;
    e->dtype = n->dtype;
    e->axes = n->arg.ints;
    e->nested = true;
    e->nest_shape = n->src[0]->shape;
    nested_.push_back(n);
    const int outer = nest_;
    nest_ = next_nest_++;
    std::vector<const Node*> inner;
    e->src.push_back(visit(n->src[0].get(), inner, true, false));
    nest_ = outer;
    return e;
  }

  // True when the root is nothing but the movement ops on the stack over reduce `n` and they
  // compose to the identity on memory order (e.g. a transpose of a transpose, as autograd leaves on
  // a weight's gradient): the reduce can store straight into the root's buffer instead of a
  // separate one plus a copy kernel.
  bool identity_above(const Node* n, const std::vector<const Node*>& stack) {
    const Node* m = root_;
    for (const Node* s : stack) {
      while (m->op == Op::DETACH || m->op == Op::CONTIGUOUS) m = m->src[0].get();
      if (m != s) return false;
      m = m->src[0].get();
    }
    while (m->op == Op::DETACH || m->op == Op::CONTIGUOUS) m = m->src[0].get();
    if (m != n) return false;
    // Same elements in the same order: a slice (offset 0, contiguous strides, fewer elements)
    // is not the identity, and its root cannot hold the reduce's output.
    auto v = whole_view_above(n, stack);
    if (!v) return false;
    auto want = ir::contiguous_strides(v->shape);
    for (size_t d = 0; d < v->shape.size(); d++)
      if (v->shape[d] > 1 && v->strides[d] != want[d]) return false;
    return true;
  }

  // The reduce `n`'s output seen through the movement ops on the stack, where that view reaches
  // every output element once at most: no offset, no mask, as many elements; nullopt otherwise.
  static std::optional<View> whole_view_above(const Node* n,
                                              const std::vector<const Node*>& stack) {
    View v = View::contiguous(n->shape);
    for (size_t j = stack.size(); j-- > 0;) {
      auto nv = v.apply(*stack[j]);
      if (!nv) return std::nullopt;
      v = *nv;
    }
    if (v.offset != 0 || v.has_mask() || ir::shape_numel(v.shape) != n->numel())
      return std::nullopt;
    return v;
  }

  // True when the movement ops on the stack (between the root's loop space and reduce `n`) map
  // the root's indices one to one onto the reduce's outputs: no mask, no broadcast, no offset, the
  // strides a permutation of a contiguous layout (e.g. a product [N, L, C] seen as [N, C, H, W]).
  // The kernel then iterates the reduce's output space and reaches every view above the reduce,
  // the root's store included, through `order_`: the root's dims by falling stride, whose
  // contiguous layout is the reduce's, reshaped to the reduce's shape (to_out_space). Views that
  // this cannot express (a mask, an unmergeable dim) materialise the reduce after all (lower()).
  bool bijective_above(const Node* n, const std::vector<const Node*>& stack) {
    auto whole = whole_view_above(n, stack);
    if (!whole) return false;
    const View& v = *whole;
    std::vector<int64_t> order;
    for (size_t d = 0; d < v.shape.size(); d++)
      if (v.shape[d] != 1) order.push_back(static_cast<int64_t>(d));
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return v.strides[a] > v.strides[b]; });
    int64_t want = 1;  // the sorted dims must be contiguous: each stride the product of those after
    for (size_t i = order.size(); i-- > 0;) {
      if (v.strides[order[i]] != want) return false;
      want *= v.shape[order[i]];
    }
    if (!std::is_sorted(order.begin(), order.end())) {  // in order: the reduce's own layout
      for (size_t d = 0; d < v.shape.size(); d++)
        if (v.shape[d] == 1) order.push_back(static_cast<int64_t>(d));
      order_ = std::move(order);
    }
    return true;
  }

  // Re-expresses the views above the reduce (over the root's loop space) in the kernel's output
  // space (full shape with the reduce axes as 1): permuted by `order_` and reshaped, which only
  // drops or adds size-1 dims unless bijective_above let the reduce fuse. A view that no strided
  // view expresses there (e.g. a mask across dims that merge) materialises the reduce.
  ExprRef to_out_space(const ExprRef& e, const ir::Shape& out_shape) {
    if (e->kind == Expr::Kind::Reduce) return e;
    auto n = std::make_shared<Expr>(*e);
    for (auto& s : n->src) s = to_out_space(s, out_shape);
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Rand ||
        (e->kind == Expr::Kind::Const && e->view.shape.size())) {
      auto v = e->view.permute(order_).reshape(out_shape);
      if (!v) throw Materialise{reduce_};
      n->view = *v;
    }
    return n;
  }

  const Node* root_;
  const std::unordered_set<const Node*>& mat_;
  const std::unordered_map<const Node*, int>& users_;
  const std::unordered_map<const Node*, BufferName>& names_;
  const NameBuffer& name_;
  // Work per element of the value below `n`, up to the next materialised value: the sum of the
  // ops' cost column (ops.def; transcendental ops and reduces 8, other ALU ops 1).
  int cost(const Node* n) {
    touched_.insert(n);
    if (n->op == Op::BUFFER || (n != root_ && mat_.count(n))) return 0;
    auto it = cost_.find(n);
    if (it != cost_.end()) return it->second;
    int c = ir::op_info(n->op).cost;
    for (auto& s : n->src) c += cost(s.get());
    cost_[n] = c;
    return c;
  }
  // A broadcast repeats its source for every index of the new axes: fused, the source would be
  // recomputed that many times (e.g. tanh(x W + b) inside the next layer's matmul, once per output
  // column). Expensive sources are materialised instead (docs/design.md principle 3).
  void materialise_if_expensive(const Node* expand) {
    const Node* src = expand->src[0].get();
    while (ir::is_movement(src->op) || src->op == Op::DETACH) src = src->src[0].get();
    touched_.insert(src);
    if (src->op == Op::BUFFER || src->op == Op::CONST || src->op == Op::RAND || mat_.count(src))
      return;
    if (ir::shape_numel(expand->shape) <= expand->src[0]->numel()) return;
    if (cost(src) >= kExpensive) throw Materialise{src};
  }
  static constexpr int kExpensive = 3;

  // A value fused into a reduce's input and also used outside this kernel is computed by both
  // kernels. Where it is expensive (a depthwise convolution's taps before a squeeze-excitation's
  // average pool and its scaling) it is materialised instead: computed once, by an elementwise
  // kernel that vectorises, where the reduce's loop would not. The first such value from the top.
  void materialise_if_recomputed() {
    for (const Node* n : below_shared_)
      if (parents_[n].size() < static_cast<size_t>(users_.at(n)) && cost(n) >= kRecomputed)
        throw Materialise{n};
  }
  static constexpr int kRecomputed = 16;
  std::vector<const Node*> below_shared_;  // ALU values with several users in a reduce's input
  std::unordered_map<const Node*, std::unordered_set<const Node*>> parents_;  // users in here
  std::unordered_map<const Node*, int> cost_;
  const Node* reduce_ = nullptr;
  std::vector<int64_t> order_;     // the root's dims in the reduce's layout (bijective_above)
  int nest_ = -1, next_nest_ = 0;  // the nest being lowered (-1: the kernel's own loop space)

 public:
  std::vector<const Node*> nested_;          // the reduces lowered as nests, once per nest
  std::unordered_set<const Node*> touched_;  // lower.h: LoweredKernel::touched

 private:
  std::vector<std::pair<BufferName, KernelBuffer>> inputs_;
  std::map<std::pair<const Node*, std::pair<std::vector<const Node*>, int>>, ExprRef> memo_;
};

}  // namespace

LoweredKernel lower_kernel(const Node* root, const std::unordered_set<const Node*>& mat,
                           const std::unordered_map<const Node*, int>& users,
                           const std::unordered_map<const Node*, BufferName>& names,
                           const NameBuffer& name) {
  Lowerer l(root, mat, users, names, name);
  LoweredKernel k;
  k.item = l.lower();
  k.item.node = root;
  k.nested = std::move(l.nested_);
  k.touched = std::move(l.touched_);
  return k;
}

}  // namespace ember::schedule

#include "schedule/schedule.h"

#include <map>
#include <unordered_set>

#include "ember/error.h"
#include "ir/overwrite.h"
#include "schedule/fuse_outputs.h"
#include "schedule/fuse_row_sums.h"

namespace ember::schedule {

using ir::Node;
using ir::Op;
using ir::View;

namespace {

// A request to materialise `node` and schedule again.
struct Materialise {
  const Node* node;
};

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
          const std::unordered_map<const Node*, std::shared_ptr<ir::Storage>>& storage)
      : root_(root), mat_(mat), users_(users), storage_(storage) {}

  ScheduleItem lower() {
    ScheduleItem item;
    std::vector<const Node*> stack;
    ExprRef value = visit(root_, stack, false, false);
    Kernel& k = item.kernel;
    if (reduce_) {
      k.full_shape = reduce_->src[0]->shape;
      k.reduce_axes = reduce_->arg.ints;
      value = to_out_space(value, reduce_->shape);
      auto out = View::contiguous(root_->shape).reshape(reduce_->shape);
      if (!out)
        throw Error("scheduler: internal error: " + root_->str() + " cannot hold " +
                    reduce_->str());
      k.out_view = *out;
    } else {
      k.full_shape = root_->shape;
      k.out_view = View::contiguous(root_->shape);
    }
    k.value = value;
    k.buffers.push_back({root_->dtype, root_->numel()});
    item.buffers.push_back(storage_.at(root_));
    for (auto& s : inputs_) {
      k.buffers.push_back({s->dtype(), s->numel()});
      item.buffers.push_back(s);
    }
    return item;
  }

 private:
  int slot(const std::shared_ptr<ir::Storage>& s) {
    for (size_t i = 0; i < inputs_.size(); i++)
      if (inputs_[i] == s) return static_cast<int>(i) + 1;
    inputs_.push_back(s);
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
    auto e = std::make_shared<Expr>();
    e->dtype = n->dtype;
    if (n != root_ && (n->op == Op::BUFFER || mat_.count(n))) {
      if (n->op == Op::BUFFER) ir::check_current(*n);
      e->kind = Expr::Kind::Load;
      e->buf = slot(n->op == Op::BUFFER ? n->storage : storage_.at(n));
      e->view = leaf_view(n, stack);
      return e;
    }
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
        View v = leaf_view(n, stack);
        if (v.has_mask()) e->view = v;
        return e;
      }
      case Op::RAND:
        e->kind = Expr::Kind::Rand;
        e->buf = slot(n->src[0]->storage);
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
    fusable = fusable && (size1 || identity_above(n, stack));
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
    View v = View::contiguous(n->shape);
    for (size_t j = stack.size(); j-- > 0;) {
      auto nv = v.apply(*stack[j]);
      if (!nv) return false;
      v = *nv;
    }
    // Same elements in the same order: a slice (offset 0, contiguous strides, fewer elements)
    // is not the identity, and its root cannot hold the reduce's output.
    if (v.offset != 0 || v.has_mask() || ir::shape_numel(v.shape) != n->numel()) return false;
    auto want = ir::contiguous_strides(v.shape);
    for (size_t d = 0; d < v.shape.size(); d++)
      if (v.shape[d] > 1 && v.strides[d] != want[d]) return false;
    return true;
  }

  // Re-expresses the views above the reduce in the kernel's output space (full shape with the
  // reduce axes as 1): only size-1 dims differ, which a view can always absorb.
  ExprRef to_out_space(const ExprRef& e, const ir::Shape& out_shape) {
    if (e->kind == Expr::Kind::Reduce) return e;
    auto n = std::make_shared<Expr>(*e);
    for (auto& s : n->src) s = to_out_space(s, out_shape);
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Rand ||
        (e->kind == Expr::Kind::Const && e->view.shape.size())) {
      auto v = e->view.reshape(out_shape);
      if (!v) throw Error("scheduler: view does not fit the output space");
      n->view = *v;
    }
    return n;
  }

  const Node* root_;
  const std::unordered_set<const Node*>& mat_;
  const std::unordered_map<const Node*, int>& users_;
  const std::unordered_map<const Node*, std::shared_ptr<ir::Storage>>& storage_;
  // Work per element of the value below `n`, up to the next materialised value: the sum of the
  // ops' cost column (ops.def; transcendental ops and reduces 8, other ALU ops 1).
  int cost(const Node* n) {
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
  // column). Expensive sources are materialised instead (DESIGN.md principle 3).
  void materialise_if_expensive(const Node* expand) {
    const Node* src = expand->src[0].get();
    while (ir::is_movement(src->op) || src->op == Op::DETACH) src = src->src[0].get();
    if (src->op == Op::BUFFER || src->op == Op::CONST || src->op == Op::RAND || mat_.count(src))
      return;
    if (ir::shape_numel(expand->shape) <= expand->src[0]->numel()) return;
    if (cost(src) >= kExpensive) throw Materialise{src};
  }
  static constexpr int kExpensive = 3;
  std::unordered_map<const Node*, int> cost_;
  const Node* reduce_ = nullptr;
  int nest_ = -1, next_nest_ = 0;  // the nest being lowered (-1: the kernel's own loop space)

 public:
  std::vector<const Node*> nested_;  // the reduces lowered as nests, once per nest

 private:
  std::vector<std::shared_ptr<ir::Storage>> inputs_;
  std::map<std::pair<const Node*, std::pair<std::vector<const Node*>, int>>, ExprRef> memo_;
};

}  // namespace

Schedule create_schedule(const std::vector<Root>& roots) {
  std::vector<const Node*> root_nodes;
  for (auto& r : roots) root_nodes.push_back(r.node.get());
  auto order = ir::toposort(root_nodes);
  std::unordered_map<const Node*, int> users;
  for (auto* n : order) {
    users.emplace(n, 0);
    std::unordered_set<const Node*> distinct;
    for (auto& s : n->src) distinct.insert(s.get());
    for (auto* s : distinct) users[s]++;
  }
  std::unordered_set<const Node*> mat(root_nodes.begin(), root_nodes.end());
  for (auto* n : order) {
    if (n->op == Op::CONTIGUOUS) mat.insert(n);
    if (ir::is_reduce(n->op) && users[n] > 1) mat.insert(n);
  }
  int initial = static_cast<int>(mat.size());

  for (;;) {
    Schedule s;
    std::unordered_map<const Node*, std::shared_ptr<ir::Storage>> storage;
    std::unordered_map<const Node*, std::shared_ptr<ir::Storage>> targets;
    // One value may be assigned to several tensors (a.copy_(v); b.copy_(v)): the first target
    // is handled below, the others get a copy of it after all kernels ran.
    std::vector<std::pair<const Node*, std::shared_ptr<ir::Storage>>> more_targets;
    for (auto& r : roots)
      if (r.target && r.node->op != Op::BUFFER) {
        auto [it, first] = targets.emplace(r.node.get(), r.target);
        if (!first && it->second != r.target) more_targets.push_back({r.node.get(), r.target});
      }
    // Every value (in-place roots too) first gets a fresh buffer; in-place roots are redirected
    // to their target below when that is safe.
    for (auto* n : order) {
      if (!mat.count(n) || n->op == Op::BUFFER) continue;
      storage[n] = std::make_shared<ir::Storage>(n->dtype, n->numel());
    }
    // A reduce nested twice (in two kernels, or under two views in one) is computed once
    // instead: materialised.
    std::unordered_map<const Node*, int> nests;
    try {
      for (auto* n : order) {
        if (!mat.count(n) || n->op == Op::BUFFER) continue;
        Lowerer l(n, mat, users, storage);
        auto item = l.lower();
        item.node = n;
        s.items.push_back(std::move(item));
        for (auto* r : l.nested_) nests[r]++;
      }
    } catch (const Materialise& m) {
      if (mat.count(m.node)) throw Error("scheduler: cannot lower " + m.node->str());
      mat.insert(m.node);
      continue;
    }
    bool again = false;
    for (auto& [r, count] : nests)
      if (count > 1) again = mat.insert(r).second || again;
    if (again) continue;
    fuse_outputs(s.items);
    fuse_row_sums(s.items);
    // An in-place root writes its target directly when no kernel after its own reads the
    // target's old contents (kernels run in order: those before it read them before it writes)
    // and its own kernel reads them only at the index it stores (a pure elementwise update).
    // Otherwise the new value stays in its own buffer (which its readers use) and is copied into
    // the target after all kernels ran.
    for (auto& [node, target] : targets) {
      auto fresh = storage.at(node);
      size_t writer = 0;
      const ir::View* store_view = nullptr;
      for (size_t i = 0; i < s.items.size(); i++) {
        const Kernel& k = s.items[i].kernel;
        for (size_t o = 0; o < k.num_outputs(); o++)
          if (s.items[i].buffers[o] == fresh) {
            writer = i;
            store_view = o ? &k.more_outputs[o - 1].view : &k.out_view;
          }
      }
      bool safe = true;
      for (size_t i = writer; i < s.items.size(); i++) {
        auto& it = s.items[i];
        for (size_t b = it.kernel.num_outputs(); b < it.buffers.size(); b++) {
          if (it.buffers[b] != target) continue;
          if (i != writer || !it.kernel.reduce_axes.empty() ||
              !reads_only_at(it.kernel, static_cast<int>(b), *store_view))
            safe = false;
        }
      }
      if (safe) {
        for (auto& it : s.items)
          for (auto& b : it.buffers)
            if (b == fresh) b = target;
        storage[node] = target;
      } else {
        s.copies.push_back({fresh, target});
      }
    }
    for (auto& item : s.items) alias_inputs_to_outputs(item);
    for (auto& [node, target] : more_targets) s.copies.push_back({storage.at(node), target});
    for (auto& r : roots)
      s.results.push_back(r.node->op == Op::BUFFER ? r.node->storage
                          : r.target               ? r.target
                                                   : storage.at(r.node.get()));
    s.materialised_extra = static_cast<int>(mat.size()) - initial;
    return s;
  }
}

}  // namespace ember::schedule

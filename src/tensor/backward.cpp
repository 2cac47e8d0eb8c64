// The backward pass: a reverse topological walk that applies one gradient rule per primitive op.
// Gradients are graph nodes, so the backward pass is scheduled and fused like any other graph.
#include "tensor/backward.h"

#include <cmath>

#include "ember/error.h"
#include "engine/buffer_table.h"

namespace ember::detail {

using ir::make_node;
using ir::NodeRef;
using ir::Op;

namespace {

NodeRef c(double v, const NodeRef& like) {
  NodeRef k = ir::make_const(v, like->dtype);
  if (like->shape.empty()) return k;
  ir::Arg r;
  r.ints = ir::Shape(like->shape.size(), 1);
  NodeRef rk = make_node(Op::RESHAPE, like->dtype, {k}, r);
  ir::Arg e;
  e.ints = like->shape;
  return make_node(Op::EXPAND, like->dtype, {rk}, e);
}
NodeRef un(Op op, const NodeRef& a) { return make_node(op, a->dtype, {a}); }
NodeRef bin(Op op, const NodeRef& a, const NodeRef& b) { return make_node(op, a->dtype, {a, b}); }
NodeRef mul(const NodeRef& a, const NodeRef& b) { return bin(Op::MUL, a, b); }
NodeRef add(const NodeRef& a, const NodeRef& b) { return bin(Op::ADD, a, b); }
NodeRef sub(const NodeRef& a, const NodeRef& b) { return bin(Op::SUB, a, b); }
NodeRef div(const NodeRef& a, const NodeRef& b) { return bin(Op::DIV, a, b); }
NodeRef neg(const NodeRef& a) { return un(Op::NEG, a); }
NodeRef cast(const NodeRef& a, ScalarType t) {
  return a->dtype == t ? a : make_node(Op::CAST, t, {a});
}
NodeRef eq(const NodeRef& a, const NodeRef& b) { return make_node(Op::CMPEQ, kBool, {a, b}); }
NodeRef lt(const NodeRef& a, const NodeRef& b) { return make_node(Op::CMPLT, kBool, {a, b}); }
NodeRef where(const NodeRef& cnd, const NodeRef& a, const NodeRef& b) {
  return make_node(Op::WHERE, a->dtype, {cnd, a, b});
}
NodeRef movement(Op op, const NodeRef& a, std::vector<int64_t> ints) {
  ir::Arg arg;
  arg.ints = std::move(ints);
  return make_node(op, a->dtype, {a}, arg);
}
NodeRef expand_to(const NodeRef& a, const ir::Shape& s) {
  return a->shape == s ? a : movement(Op::EXPAND, a, s);
}
// Sums g back to `shape` over the dims that an EXPAND broadcast (same rank).
NodeRef unexpand(const NodeRef& g, const ir::Shape& shape) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] != g->shape[i]) axes.push_back(static_cast<int64_t>(i));
  if (axes.empty()) return g;
  ir::Arg a;
  a.ints = axes;
  return make_node(Op::SUM, g->dtype, {g}, a);
}

bool differentiable(const ir::Node* n) { return is_floating_point(n->dtype); }

// Contributions to each source's gradient given the output gradient g of node n.
std::vector<NodeRef> rule(const ir::Node& n, const NodeRef& self, const NodeRef& g) {
  const auto& s = n.src;
  switch (n.op) {
    case Op::NEG:
      return {neg(g)};
    case Op::EXP:
      return {mul(g, self)};
    case Op::LOG:
      return {div(g, s[0])};
    case Op::SIN:
      return {mul(g, un(Op::COS, s[0]))};
    case Op::COS:
      return {neg(mul(g, un(Op::SIN, s[0])))};
    case Op::SQRT:
      return {div(g, mul(c(2, self), self))};
    case Op::RECIP:
      return {neg(mul(g, mul(self, self)))};
    case Op::TANH:
      return {mul(g, sub(c(1, self), mul(self, self)))};
    case Op::CAST:
      return {differentiable(s[0].get()) ? cast(g, s[0]->dtype) : nullptr};
    case Op::ADD:
      return {g, g};
    case Op::SUB:
      return {g, neg(g)};
    case Op::MUL:
      return {mul(g, s[1]), mul(g, s[0])};
    case Op::DIV:
      return {div(g, s[1]), neg(div(mul(g, self), s[1]))};
    case Op::MAX: {
      // torch.maximum's rule: ties split the gradient in half, the smaller side gets none, and
      // where either side is NaN (no order) both get all of it.
      NodeRef half = c(0.5, g), zero = c(0, g);
      NodeRef tie = eq(s[0], s[1]);
      NodeRef g_or_half = where(tie, mul(g, half), g);
      NodeRef ga = where(lt(s[0], s[1]), zero, g_or_half);
      NodeRef gb = where(lt(s[1], s[0]), zero, g_or_half);
      return {ga, gb};
    }
    case Op::POW: {
      // d/dx x^y = y x^(y-1), defined as 0 where y == 0 (libtorch's pow_backward: 0 * 0^-1).
      NodeRef gx = where(eq(s[1], c(0, s[1])), c(0, g),
                         mul(g, mul(s[1], bin(Op::POW, s[0], sub(s[1], c(1, s[1]))))));
      // d/dy x^y = x^y log x, defined as 0 where x == 0 and y >= 0 (pow_backward_exponent).
      NodeRef lx = un(Op::LOG, s[0]);
      NodeRef base0 =
          make_node(Op::AND, kBool,
                    {eq(s[0], c(0, s[0])), make_node(Op::NOT, kBool, {lt(s[1], c(0, s[1]))})});
      NodeRef gy = where(base0, c(0, g), mul(g, mul(self, lx)));
      return {gx, gy};
    }
    case Op::WHERE: {
      NodeRef zero = c(0, g);
      return {nullptr, where(s[0], g, zero), where(s[0], zero, g)};
    }
    case Op::SUM:
      return {expand_to(g, s[0]->shape)};
    case Op::RMAX: {
      // Evenly split among the maxima (torch.amax).
      NodeRef hit = cast(eq(s[0], expand_to(self, s[0]->shape)), g->dtype);
      NodeRef count = make_node(Op::SUM, g->dtype, {hit}, n.arg);
      return {mul(hit, expand_to(div(g, count), s[0]->shape))};
    }
    case Op::PROD: {
      // d prod / d x_i = the product of the others: prod / x_i without zeros; with exactly one
      // zero, the product of the nonzero terms at the zero and 0 elsewhere; with more, 0
      // (libtorch's prod_backward). Computed without dividing by a zero.
      NodeRef x = s[0], zero = eq(x, c(0, x));
      NodeRef nz = make_node(Op::SUM, g->dtype, {cast(zero, g->dtype)}, n.arg);
      NodeRef rest = make_node(Op::PROD, x->dtype, {where(zero, c(1, x), x)}, n.arg);
      NodeRef nz_e = expand_to(nz, x->shape), g_e = expand_to(g, x->shape);
      NodeRef safe_x = where(zero, c(1, x), x);
      NodeRef none = div(mul(g_e, expand_to(self, x->shape)), safe_x);
      NodeRef one = where(zero, mul(g_e, expand_to(rest, x->shape)), c(0, g));
      return {where(eq(nz_e, c(0, nz_e)), none, where(eq(nz_e, c(1, nz_e)), one, c(0, g)))};
    }
    case Op::RESHAPE:
      return {movement(Op::RESHAPE, g, s[0]->shape)};
    case Op::PERMUTE: {
      std::vector<int64_t> inv(n.arg.ints.size());
      for (size_t i = 0; i < inv.size(); i++) inv[n.arg.ints[i]] = static_cast<int64_t>(i);
      return {movement(Op::PERMUTE, g, inv)};
    }
    case Op::EXPAND:
      return {unexpand(g, s[0]->shape)};
    case Op::PAD: {
      std::vector<int64_t> b;
      for (size_t i = 0; i < s[0]->shape.size(); i++) {
        b.push_back(n.arg.ints[2 * i]);
        b.push_back(n.arg.ints[2 * i] + s[0]->shape[i]);
      }
      return {movement(Op::SHRINK, g, b)};
    }
    case Op::SHRINK: {
      std::vector<int64_t> p;
      for (size_t i = 0; i < s[0]->shape.size(); i++) {
        p.push_back(n.arg.ints[2 * i]);
        p.push_back(s[0]->shape[i] - n.arg.ints[2 * i + 1]);
      }
      return {movement(Op::PAD, g, p)};
    }
    case Op::FLIP:
      return {movement(Op::FLIP, g, n.arg.ints)};
    case Op::CONTIGUOUS:
      return {g};
    case Op::FLOOR:
      return {c(0, g)};  // piecewise constant (libtorch: zeros)
    // Not differentiable (the NoGrad flag of ops.def; checked by tests/ops): leaves, the gradient
    // barrier, and ops with bool results.
    case Op::BUFFER:
    case Op::CONST:
    case Op::RAND:
    case Op::DETACH:
    case Op::NOT:
    case Op::CMPLT:
    case Op::CMPEQ:
    case Op::AND:
    case Op::OR:
    case Op::XOR:
      return std::vector<NodeRef>(s.size(), nullptr);
  }  // no default: -Werror=switch makes a new op in ops.def without a rule a build error
  throw Error(std::string("autograd: no gradient rule for ") + ir::op_name(n.op));
}

// The sources autograd walks: a realized value that kept its graph (engine::origin_of) leads to
// it.
const ir::SrcList& grad_sources(const ir::Node* n) {
  static const ir::SrcList none;
  thread_local ir::SrcList one;
  if (n->op != Op::BUFFER) return n->src;
  ir::NodeRef origin = engine::origin_of(*n);
  if (!origin) return none;
  one = ir::SrcList{std::move(origin)};
  return one;
}

// The gradient that buffer n passes to its origin: the same, or, for a value that Tensor::to
// copied from a buffer in another memory, the gradient copied back there (to()'s backward).
NodeRef to_origin_memory(const ir::Node& n, NodeRef g) {
  const NodeRef origin = engine::origin_of(n);
  if (!origin || origin->op != Op::BUFFER) return g;
  runtime::Device* from = engine::storage_of(*origin)->device();
  if (engine::storage_of(n)->device() == from) return g;
  return detail::to_memory(g, from);
}

std::vector<const ir::Node*> grad_toposort(const ir::Node* root) {
  std::vector<const ir::Node*> order;
  std::unordered_set<const ir::Node*> seen{root};
  std::vector<std::pair<const ir::Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    const auto& src = grad_sources(n);
    if (i < src.size()) {
      const ir::Node* s = src[i++].get();
      if (seen.insert(s).second) stack.push_back({s, 0});
    } else {
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

std::unordered_map<const ir::Node*, NodeRef> backward_graph(
    const NodeRef& root, const NodeRef& seed, const std::unordered_set<const ir::Node*>& targets) {
  auto order = grad_toposort(root.get());
  // Which nodes lead to a target (gradients flow only along those paths).
  std::unordered_map<const ir::Node*, bool> live;
  std::unordered_map<const ir::Node*, NodeRef> self;
  for (auto* n : order) {
    bool l = targets.count(n) > 0;
    if (n->op != Op::DETACH && differentiable(n))
      for (auto& s : grad_sources(n)) {
        l = l || live[s.get()];
        self[s.get()] = s;
      }
    live[n] = l;
  }
  self[root.get()] = root;
  // A value the forward graph also materialises (x.contiguous(), e.g. an MLP's activations) is
  // read back from there by the rules that use a node's own value (tanh, exp, sqrt, recip),
  // instead of being recomputed inside the backward kernels.
  std::unordered_map<const ir::Node*, NodeRef> value_of;
  for (auto* n : order)
    if (n->op == Op::CONTIGUOUS && n->src.size() == 1 && !ir::is_movement(n->src[0]->op) &&
        n->src[0]->shape == n->shape && n->src[0]->dtype == n->dtype)
      value_of.emplace(n->src[0].get(), self.at(n));
  std::unordered_map<const ir::Node*, NodeRef> grads;
  grads[root.get()] = seed;
  std::unordered_map<const ir::Node*, NodeRef> out;
  for (size_t i = order.size(); i-- > 0;) {
    const ir::Node* n = order[i];
    auto it = grads.find(n);
    if (it == grads.end() || !live[n]) continue;
    NodeRef g = it->second;
    if (targets.count(n)) out[n] = g;
    const ir::SrcList src = grad_sources(n);
    if (src.empty() || n->op == Op::DETACH) continue;
    // A realized value passes its gradient to the graph it was computed from.
    const auto v = value_of.find(n);
    auto contrib = n->op == Op::BUFFER ? std::vector<NodeRef>{to_origin_memory(*n, g)}
                                       : rule(*n, v != value_of.end() ? v->second : self.at(n), g);
    for (size_t j = 0; j < src.size(); j++) {
      const ir::Node* s = src[j].get();
      if (!contrib[j] || !live[s] || !differentiable(s)) continue;
      NodeRef cg = cast(contrib[j], s->dtype);
      auto [gi, inserted] = grads.emplace(s, cg);
      if (!inserted) gi->second = add(gi->second, cg);
    }
  }
  return out;
}

}  // namespace ember::detail

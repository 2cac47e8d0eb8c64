// Matrix products as broadcast multiply + sum over the shared dim (one fused reduce kernel; the
// codegen's heuristic register-tiles it).
#include "ember/support/shape_str.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {
std::string dims_str(const Tensor& t) { return support::dims_str(t.sizes()); }

// a: [..., n, k], b: [..., k, m] (batch dims broadcast) -> [..., n, m]. With `b_t`, b holds the
// right operand transposed, [..., m, k] (Linear's weight: no transposed view is made).
Tensor batched_matmul(const Tensor& a, const Tensor& b, bool b_t = false) {
  // The shapes read once from the nodes (each Tensor accessor checks and reports its read again):
  // a small eager product is latency-bound (issue 11).
  const ir::NodeRef& an = detail::node_of(a);
  const ir::NodeRef& bn = detail::node_of(b);
  const DimVector& sa = an->shape;
  const DimVector& sb = bn->shape;
  const size_t kb = b_t ? sb.size() - 1 : sb.size() - 2;  // b's shared dim
  const int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb[b_t ? sb.size() - 2 : sb.size() - 1];
  if (sb[kb] != k)
    throw ShapeError("mat1 and mat2 shapes cannot be multiplied (" + dims_str(a) + " and " +
                     (b_t ? dims_str(b.transpose(-1, -2)) : dims_str(b)) + ")");
  ScalarType t = result_type(a, b);
  DimVector batch;
  if (sa.size() > 2 || sb.size() > 2) {  // 2-D operands (the usual case) have no batch dims
    std::span<const int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    try {
      batch = detail::broadcast_shapes(ba, bb, "matmul");
    } catch (const ShapeError& e) {
      throw ShapeError("matmul: batch dims of " + ir::shape_str(sa) + " and " + ir::shape_str(sb) +
                       " do not broadcast (" + e.what() + ")");
    }
  }
  DimVector full = batch;
  full.push_back(n);
  full.push_back(m);
  full.push_back(k);
  if (!is_floating_point(t)) {         // bool and integer products keep their ops' own rules
    Tensor x = a.to(t).unsqueeze(-2);  // [..., n, 1, k]
    Tensor y = (b_t ? b.to(t) : b.to(t).transpose(-1, -2)).unsqueeze(-3);  // [..., 1, m, k]
    Tensor prod = x.expand(full.vec()) * y.expand(full.vec());
    return prod.sum({-1}, false, t);
  }
  // The same nodes as the lines above (hash-consing makes them the same objects: interning
  // tests), built without a tensor for every step, and with b's own PERMUTE composed into the
  // transpose: a small eager product is latency-bound (issue 11).
  using ir::NodeRef;
  // The operands' own nodes when they need no cast: no reference taken and dropped (an atomic
  // add each, and an eager product is latency-bound).
  NodeRef ca, cb;
  const NodeRef& na = an->dtype == t ? an : (ca = detail::cast(an, t));
  const NodeRef& nb = bn->dtype == t ? bn : (cb = detail::cast(bn, t));
  auto with_one_at = [](const DimVector& s, size_t from_end) {  // s with a 1 inserted
    const size_t at = s.size() - from_end;
    DimVector r(s.begin(), s.begin() + at);
    r.push_back(1);
    for (size_t i = at; i < s.size(); i++) r.push_back(s[i]);
    return r;
  };
  // [..., n, 1, k] -> full
  NodeRef x = detail::broadcast_to(detail::reshape_node(na, with_one_at(na->shape, 1)), full);
  // [..., m, k]: b itself with b_t, else b transposed. Where b = PERMUTE(w, p) (x @ w.t()), one
  // PERMUTE of w composed of both, or w itself when they cancel: the same view, a node less.
  NodeRef yt;
  if (b_t) {
    yt = nb;
  } else {
    ir::Arg perm;
    perm.ints.resize(nb->shape.size());
    for (size_t i = 0; i < perm.ints.size(); i++) perm.ints[i] = static_cast<int64_t>(i);
    std::swap(perm.ints[perm.ints.size() - 1], perm.ints[perm.ints.size() - 2]);
    const bool composed = nb->op == ir::Op::PERMUTE;
    bool identity = composed;
    if (composed)
      for (size_t i = 0; i < perm.ints.size(); i++) {
        perm.ints[i] = nb->arg.ints[static_cast<size_t>(perm.ints[i])];
        identity = identity && perm.ints[i] == static_cast<int64_t>(i);
      }
    const NodeRef& src = composed ? nb->src[0] : nb;
    yt = identity ? src : ir::make_node(ir::Op::PERMUTE, t, ir::src_list(src), std::move(perm));
  }
  // [..., 1, m, k] -> full
  const DimVector yt1 = with_one_at(yt->shape, 2);
  NodeRef y = detail::broadcast_to(detail::reshape_node(std::move(yt), yt1), full);
  NodeRef prod = detail::binary(ir::Op::MUL, std::move(x), std::move(y), t, "mul");
  ir::Arg axis;
  axis.ints.push_back(static_cast<int64_t>(full.size()) - 1);
  NodeRef sum = ir::make_node(ir::Op::SUM, t, ir::src_list(std::move(prod)), std::move(axis));
  full.pop_back();
  return detail::make_tensor(detail::reshape_node(std::move(sum), full), {&a, &b});
}
}  // namespace

Tensor detail::matmul_transposed(const Tensor& x, const Tensor& w) {
  if (x.dim() < 2 || w.dim() != 2) return x.matmul(w.t());
  return batched_matmul(x, w, true);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  Tensor y = detail::matmul_transposed(input, weight);  // input.matmul(weight.t())
  return bias.defined() ? y + bias : y;
}

Tensor Tensor::matmul(const Tensor& o) const {
  const size_t da = sizes().size(), db = o.sizes().size();
  if (da == 0 || db == 0)
    throw ShapeError("matmul: both arguments need at least 1 dimension, got " +
                     ir::shape_str(sizes()) + " and " + ir::shape_str(o.sizes()));
  if (da == 1 && db == 1) {
    if (size(0) != o.size(0))
      throw ShapeError("inconsistent tensor size, expected tensor [" + std::to_string(size(0)) +
                       "] and src [" + std::to_string(o.size(0)) +
                       "] to have the same number of elements");
    ScalarType t = result_type(*this, o);
    return (to(t) * o.to(t)).sum({0}, false, t);
  }
  if (da == 1) return batched_matmul(unsqueeze(0), o).squeeze(-2);
  if (db == 1) return batched_matmul(*this, o.unsqueeze(-1)).squeeze(-1);
  return batched_matmul(*this, o);
}

Tensor Tensor::mm(const Tensor& o) const {
  if (dim() != 2 || o.dim() != 2)
    throw ShapeError("mm: expected 2-D tensors, got " + ir::shape_str(sizes()) + " and " +
                     ir::shape_str(o.sizes()));
  return batched_matmul(*this, o);
}

Tensor Tensor::bmm(const Tensor& o) const {
  if (dim() != 3 || o.dim() != 3)
    throw ShapeError("bmm: expected 3-D tensors, got " + ir::shape_str(sizes()) + " and " +
                     ir::shape_str(o.sizes()));
  if (size(0) != o.size(0))
    throw ShapeError("bmm: batch sizes differ (" + dims_str(*this) + " and " + dims_str(o) + ")");
  return batched_matmul(*this, o);
}

Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
Tensor mm(const Tensor& a, const Tensor& b) { return a.mm(b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return a.bmm(b); }

}  // namespace ember

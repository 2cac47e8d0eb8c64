#include "schedule/fuse_row_sums.h"

#include <functional>
#include <optional>
#include <unordered_map>

namespace ember::schedule {

namespace {

// The elementwise term of a SUM: constants and ALU ops over loads that all read one buffer
// through one unmasked view. Its (first) load, else nullptr.
const Expr* term_load(const Expr& e) {
  if (e.kind == Expr::Kind::Load) return e.view.has_mask() ? nullptr : &e;
  if (e.kind == Expr::Kind::Const) return nullptr;
  if (e.kind != Expr::Kind::Alu) return nullptr;
  const Expr* l = nullptr;
  for (auto& s : e.src) {
    if (s->kind == Expr::Kind::Const && !s->view.has_mask()) continue;
    const Expr* m = term_load(*s);
    if (!m || (l && (m->buf != l->buf || !(m->view == l->view) || m->dtype != l->dtype)))
      return nullptr;
    l = m;
  }
  return l;
}

// A simplified kernel whose value is a SUM over its last axis of such a term (a column sum): the
// term's load, else nullptr.
const Expr* plain_sum(const Kernel& r) {
  const size_t rank = r.full_shape.size();
  if (rank < 1 || rank > 2 || r.reduce_axes.size() != 1 ||
      r.reduce_axes[0] != static_cast<int64_t>(rank) - 1 || !r.more_outputs.empty())
    return nullptr;
  const Expr& v = *r.value;
  if (v.kind != Expr::Kind::Reduce || v.nested || v.op != ir::Op::SUM ||
      !is_floating_point(v.dtype) || v.axes != r.reduce_axes || r.out_view.has_mask())
    return nullptr;
  return term_load(*v.src[0]);
}

// Whether product p (simplified) reads, under its reduce, load `pl` of the elements that column
// sum r's load `rl` reads: same offset and reduce stride, and the sum's output axis (if any) is the
// one output axis of p along which `pl` moves. The axis (or -1) goes to `axis`.
bool same_operand(const Kernel& p, const Expr& pl, const Kernel& r, const Expr& rl, int& axis) {
  const size_t rank = p.full_shape.size();
  const size_t red = rank - 1;
  if (pl.view.has_mask() || pl.view.offset != rl.view.offset ||
      p.full_shape[red] != r.full_shape.back() || pl.view.strides[red] != rl.view.strides.back())
    return false;
  axis = -1;
  for (size_t d = 0; d < red; d++) {
    if (p.full_shape[d] == 1 || pl.view.strides[d] == 0) continue;
    if (axis >= 0 || r.full_shape.size() != 2 || p.full_shape[d] != r.full_shape[0] ||
        pl.view.strides[d] != rl.view.strides[0])
      return false;
    axis = static_cast<int>(d);
  }
  // The operand varies along the outer of the last two output axes (a product's rows: dZ's
  // features in dZ^T X), or along no output axis. A sum along the other operand (the columns,
  // which the tiled product loads as vectors) stays a kernel of its own. A sum with more than one
  // output (r of rank 2) needs that axis: with none (an operand that does not vary, as a
  // broadcast scalar), the merged kernel would store only its first output.
  if (r.full_shape.size() == 1 || r.full_shape[0] == 1) return axis < 0;
  return axis >= 0 && axis == static_cast<int>(rank) - 3;
}

// The loads under e (not under nests).
void loads(const Expr& e, std::vector<const Expr*>& out) {
  if (e.nested) return;
  if (e.kind == Expr::Kind::Load) out.push_back(&e);
  for (auto& s : e.src) loads(*s, out);
}

bool reads(const ScheduleItem& it, BufferName st) {
  for (size_t s = it.kernel.num_outputs(); s < it.buffers.size(); s++)
    if (it.buffers[s] == st) return true;
  return false;
}

// Product item p (simplified) with column sum item r (simplified) as its second output, or
// nullopt when they do not match.
std::optional<ScheduleItem> merge(const ScheduleItem& p, const ScheduleItem& r) {
  const Kernel& pk = p.kernel;
  const Kernel& rk = r.kernel;
  const Expr* rl = plain_sum(rk);
  const size_t rank = pk.full_shape.size();
  if (!rl || rank < 2 || pk.num_outputs() != 1 || !kernel_nests(pk).empty() ||
      pk.reduce_axes != std::vector<int64_t>{static_cast<int64_t>(rank) - 1})
    return std::nullopt;
  const Expr* red = top_reduce(*pk.value);
  if (!red || red->op != ir::Op::SUM || red->dtype != rk.value->dtype ||
      red->axes != pk.reduce_axes)
    return std::nullopt;
  const BufferName src = r.buffers[rl->buf];
  std::vector<const Expr*> ls;
  loads(*red->src[0], ls);
  const Expr* match = nullptr;
  int axis = -1;
  for (const Expr* l : ls)
    if (p.buffers[l->buf] == src && l->dtype == rl->dtype && same_operand(pk, *l, rk, *rl, axis)) {
      match = l;
      break;
    }
  if (!match) return std::nullopt;
  // Slots: P's output, R's output, then P's inputs one slot up.
  ScheduleItem m;
  m.node = p.node;
  Kernel& k = m.kernel;
  k.full_shape = pk.full_shape;
  k.reduce_axes = pk.reduce_axes;
  k.out_view = pk.out_view;
  m.buffers = {p.buffers[0], r.buffers[0]};
  k.buffers = {pk.buffers[0], rk.buffers[0]};
  for (size_t s = 1; s < p.buffers.size(); s++) {
    m.buffers.push_back(p.buffers[s]);
    k.buffers.push_back(pk.buffers[s]);
  }
  std::unordered_map<const Expr*, ExprRef> memo;
  std::function<ExprRef(const ExprRef&)> shift = [&](const ExprRef& e) -> ExprRef {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    auto n = std::make_shared<Expr>(*e);
    if (!e->nested) {
      if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Rand) n->buf = e->buf + 1;
      for (auto& s : n->src) s = shift(s);
    }
    memo[e.get()] = n;
    return n;
  };
  k.value = shift(pk.value);
  // The sum's term over the product's own operand node (renderers may share its loads).
  const ExprRef operand = memo.at(match);
  std::function<ExprRef(const ExprRef&)> term = [&](const ExprRef& e) -> ExprRef {
    if (e->kind == Expr::Kind::Load) return operand;
    auto n = std::make_shared<Expr>(*e);
    if (e->kind == Expr::Kind::Const) {
      n->view = ir::View{};  // unmasked (term_load): its view over R's loop space means nothing
      return n;
    }
    for (auto& s : n->src) s = term(s);
    return n;
  };
  auto sum = std::make_shared<Expr>(*rk.value);
  sum->src = {term(rk.value->src[0])};
  sum->axes = pk.reduce_axes;
  KernelOutput out;
  out.value = sum;
  out.view.shape = pk.full_shape;
  out.view.shape[rank - 1] = 1;
  out.view.strides.assign(rank, 0);
  out.view.offset = rk.out_view.offset;
  if (axis >= 0) out.view.strides[static_cast<size_t>(axis)] = rk.out_view.strides[0];
  k.more_outputs.push_back(out);
  return m;
}

}  // namespace

void fuse_row_sums(std::vector<ScheduleItem>& items) {
  std::vector<bool> gone(items.size(), false);
  for (size_t i = 0; i < items.size(); i++) {
    if (gone[i] || items[i].kernel.reduce_axes.empty()) continue;
    ScheduleItem ri = items[i];
    ri.kernel = simplify(ri.kernel);
    if (!plain_sum(ri.kernel)) continue;
    for (size_t j = 0; j < items.size(); j++) {
      if (j == i || gone[j] || items[j].kernel.reduce_axes.empty() ||
          items[j].kernel.num_outputs() != 1)
        continue;
      // The earlier of the two moves to the later one's place: nothing after it, up to and
      // including the later one, may read it.
      const size_t lo = std::min(i, j), hi = std::max(i, j);
      bool movable = true;
      for (size_t b = lo + 1; b <= hi && movable; b++)
        if (!gone[b] && reads(items[b], items[lo].buffers[0])) movable = false;
      if (!movable) continue;
      ScheduleItem pj = items[j];
      pj.kernel = simplify(pj.kernel);
      auto m = merge(pj, ri);
      if (!m) continue;
      items[hi] = std::move(*m);
      gone[lo] = true;
      break;
    }
  }
  std::vector<ScheduleItem> kept;
  for (size_t i = 0; i < items.size(); i++)
    if (!gone[i]) kept.push_back(std::move(items[i]));
  items = std::move(kept);
}

}  // namespace ember::schedule

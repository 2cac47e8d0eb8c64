// How a product kernel's reduce term splits into row and column operands (tile_operands.h).
#include "codegen/tile_operands.h"

#include <algorithm>
#include <cstdlib>

namespace ember::codegen {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

namespace {

bool fits(const Expr& e, int red, ScalarType t) {
  if (e.dtype != t || e.nested) return false;
  switch (e.kind) {
    case Expr::Kind::Load:
      return !e.view.has_mask() &&
             (e.view.shape[red] <= 1 || e.view.strides[red] == 0 || e.view.strides[red] == 1);
    case Expr::Kind::Const:
      return !e.view.has_mask();
    case Expr::Kind::Alu:
      if (!ir::op_has(e.op, ir::TileTerm)) return false;
      for (auto& s : e.src)
        if (!fits(*s, red, t)) return false;
      return true;
    default:
      return false;
  }
}

uint64_t view_deps(const ir::View& v) {
  uint64_t m = 0;
  for (size_t d = 0; d < v.shape.size(); d++) {
    if (v.shape[d] <= 1) continue;
    bool masked = v.has_mask() && !(v.mask[d].first == 0 && v.mask[d].second == v.shape[d]);
    if (v.strides[d] != 0 || masked) m |= uint64_t{1} << d;
  }
  return m;
}

bool vector_op(const Expr& e, ScalarType t) {
  return e.kind == Expr::Kind::Alu && e.dtype == t && ir::op_has(e.op, ir::TileTerm);
}

// Walks the part of the reduce term that varies along both row and col; collects the column-only
// operands. False when a node there has no vector form.
bool classify(const Expr& e, uint64_t rowb, uint64_t colb, AxisDeps& deps, ScalarType t,
              std::vector<const Expr*>& cols, std::vector<const Expr*>& rows) {
  uint64_t d = deps(e);
  if (!(d & colb)) {  // row-only or constant along both: a scalar per row
    if ((d & rowb) && std::find(rows.begin(), rows.end(), &e) == rows.end()) rows.push_back(&e);
    return true;
  }
  if (!(d & rowb)) {
    if (e.dtype != t) return false;
    if (std::find(cols.begin(), cols.end(), &e) == cols.end()) cols.push_back(&e);
    return true;
  }
  if (!vector_op(e, t)) return false;
  for (auto& s : e.src)
    if (!classify(*s, rowb, colb, deps, t, cols, rows)) return false;
  return true;
}

}  // namespace

int strided_loads(const std::vector<const Expr*>& terms, int axis) {
  int n = 0;
  std::vector<const Expr*> stack(terms.begin(), terms.end());
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->kind == Expr::Kind::Load && e->view.shape[axis] > 1 &&
        std::abs(e->view.strides[axis]) > 1)
      n++;
    for (auto& s : e->src) stack.push_back(s.get());
  }
  return n;
}

bool tile_rows_kmajor(const TileOperands& p) {
  return strided_loads(p.rows, p.red) > strided_loads(p.rows, p.row);
}

uint64_t AxisDeps::operator()(const Expr& e) {
  auto it = memo_.find(&e);
  if (it != memo_.end()) return it->second;
  uint64_t m = 0;
  if (e.kind == Expr::Kind::Load || e.kind == Expr::Kind::Rand ||
      (e.kind == Expr::Kind::Const && !e.view.shape.empty()))
    m = view_deps(e.view);
  for (auto& s : e.src) m |= (*this)(*s);
  memo_[&e] = m;
  return m;
}

std::optional<TileOperands> tile_operands(const Kernel& k) {
  size_t rank = k.full_shape.size();
  if (rank < 3 || rank > 64 || k.reduce_axes.size() != 1 ||
      k.reduce_axes[0] != static_cast<int64_t>(rank) - 1)
    return std::nullopt;
  const Expr* red = schedule::top_reduce(*k.value);
  if (!red || red->op != Op::SUM || red->axes.size() != 1 ||
      (red->dtype != kFloat32 && red->dtype != kFloat64))
    return std::nullopt;
  TileOperands p;
  p.row = static_cast<int>(rank) - 3;
  p.col = static_cast<int>(rank) - 2;
  p.red = static_cast<int>(rank) - 1;
  p.reduce = red;
  AxisDeps deps;
  uint64_t rowb = uint64_t{1} << p.row, colb = uint64_t{1} << p.col;
  uint64_t d = deps(*red->src[0]);
  if (!(d & rowb) || !(d & colb)) return std::nullopt;
  if (!classify(*red->src[0], rowb, colb, deps, red->dtype, p.cols, p.rows) || p.cols.empty())
    return std::nullopt;
  p.rows_direct = true;
  for (auto* r : p.rows)
    if (r->kind != Expr::Kind::Load || r->view.has_mask()) p.rows_direct = false;
  for (auto& o : k.more_outputs) {
    const Expr& e = *o.value;
    if (e.kind != Expr::Kind::Reduce || e.nested || e.op != Op::SUM || e.axes != red->axes ||
        e.dtype != red->dtype || (deps(*e.src[0]) & colb) || o.view.has_mask() ||
        o.view.strides[p.col] != 0)
      return std::nullopt;
    p.sums.push_back(e.src[0].get());
  }
  p.direct = true;
  for (auto* c : p.cols)
    if (c->kind != Expr::Kind::Load || c->view.has_mask() || c->view.strides[p.col] != 1)
      p.direct = false;
  return p;
}

bool dot_fits(const TileOperands& p) { return fits(*p.reduce->src[0], p.red, p.reduce->dtype); }

}  // namespace ember::codegen

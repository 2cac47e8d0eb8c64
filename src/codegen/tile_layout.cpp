// The tiled reduce's plan (plan_tile: which operands are rows, columns and row sums) and its work
// layout, which the runtime needs to launch it: the units the thread pool
// splits (batch index x row block x split-K slice) and split-K's scratch (per-row-block counters,
// zeroed at each launch, then one partial tile per slice). The code that fills them is
// render_tile.cpp's; the two must agree. Also the pieces of code that the tiled and the dot
// renderers (render_dot.cpp) both emit: the function head and the scalar store of a tile's sums.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

namespace {

uint64_t view_deps(const ir::View& v) {
  uint64_t m = 0;
  for (size_t d = 0; d < v.shape.size(); d++) {
    if (v.shape[d] <= 1) continue;
    bool masked = v.has_mask() && !(v.mask[d].first == 0 && v.mask[d].second == v.shape[d]);
    if (v.strides[d] != 0 || masked) m |= uint64_t{1} << d;
  }
  return m;
}

const Expr* find_reduce(const Expr& e) {
  if (e.kind == Expr::Kind::Reduce) return &e;
  for (auto& s : e.src)
    if (auto* r = find_reduce(*s)) return r;
  return nullptr;
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

bool tile_rows_kmajor(const TilePlan& p) {
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

std::optional<TilePlan> plan_tile(const Kernel& k) {
  size_t rank = k.full_shape.size();
  if (rank < 3 || rank > 64 || k.reduce_axes.size() != 1 ||
      k.reduce_axes[0] != static_cast<int64_t>(rank) - 1)
    return std::nullopt;
  const Expr* red = find_reduce(*k.value);
  if (!red || red->op != Op::SUM || red->axes.size() != 1 ||
      (red->dtype != kFloat32 && red->dtype != kFloat64))
    return std::nullopt;
  TilePlan p;
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

Scratch tile_scratch(const Kernel& k, const Opts& o) {
  const Action* sk = o.find(ActionKind::SplitReduce);
  const Action* vec = o.find(ActionKind::Vectorize);
  if (!sk || !vec) return {};
  size_t rank = k.full_shape.size();
  int row = static_cast<int>(rank) - 3;
  auto up = o.upcasts(rank);
  int64_t n = k.full_shape[row], m = k.full_shape[rank - 2], kk = k.full_shape[rank - 1];
  int64_t tn = up[row], tm = up[rank - 2];
  const Action* ob = o.find(ActionKind::BlockOuter);
  int64_t nc = ob ? ob->amount : (n + tn - 1) / tn * tn;
  int64_t bt = 1;
  for (int d = 0; d < row; d++) bt *= k.full_shape[d];
  int64_t slices = (kk + sk->amount - 1) / sk->amount;
  auto p = plan_tile(k);
  if (!p) return {};
  int64_t es = static_cast<int64_t>(element_size(p->reduce->dtype));
  Scratch s;
  s.zeroed = (bt * ((n + nc - 1) / nc) * 8 + 63) / 64 * 64;
  int64_t npad = (n + tn - 1) / tn * tn, mpad = (m + tm - 1) / tm * tm;
  // Then each row sum's partials, [batch][slice][row].
  s.bytes = s.zeroed + bt * slices * npad * (mpad + static_cast<int64_t>(p->sums.size())) * es;
  return s;
}

int64_t tile_runtime_rows(const Kernel& k, const Opts& o) {
  // Row blocks of a fixed size (BlockOuter) are the only place the row count enters the code: the
  // unit of work is the block, and the last block ends at the row count. Batch axes and split-K
  // slices would need it to decompose the unit index, so they keep the compiled-in count, and so
  // does a product of one block (its block size is its row count: nothing to share).
  const size_t rank = k.full_shape.size();
  const Action* ob = o.find(ActionKind::BlockOuter);
  if (rank != 3 || !o.find(ActionKind::Vectorize) || !ob || ob->amount >= k.full_shape[0] ||
      o.find(ActionKind::SplitReduce) || o.find(ActionKind::BlockCols))
    return -1;
  return k.full_shape[0];
}

int64_t tile_outer_extent(const Kernel& k, const Opts& o) {
  size_t rank = k.full_shape.size();
  int row = static_cast<int>(rank) - 3;
  int64_t n = k.full_shape[row];
  int64_t tn = o.upcasts(rank)[row];
  const Action* ob = o.find(ActionKind::BlockOuter);
  int64_t nc = ob ? ob->amount : (n + tn - 1) / tn * tn;
  int64_t bt = 1;
  for (int d = 0; d < row; d++) bt *= k.full_shape[d];
  const Action* sk = o.find(ActionKind::SplitReduce);
  int64_t slices = sk ? (k.full_shape[rank - 1] + sk->amount - 1) / sk->amount : 1;
  int64_t cblocks = 1;
  if (const Action* cb = o.find(ActionKind::BlockCols)) {
    const int64_t tm = o.upcasts(rank)[rank - 2];
    const int64_t mpad = (k.full_shape[rank - 2] + tm - 1) / tm * tm;
    cblocks = (mpad + cb->amount - 1) / cb->amount;
  }
  return bt * ((n + nc - 1) / nc) * slices * cblocks;
}

void render_kernel_head(std::ostringstream& s, const std::string& fn, const Kernel& k,
                        const char* vector_type, int64_t vector_bytes, const char* what) {
  s << "void " << fn << "(void* const* restrict bufs, int64_t start, int64_t end) {\n";
  for (size_t i = 0; i < k.buffers.size(); i++)
    s << "  " << (i >= k.num_outputs() ? "const " : "") << ctype(k.buffers[i].dtype)
      << "* restrict b" << i << " = (" << ctype(k.buffers[i].dtype) << "*)bufs[" << i << "];\n";
  // The lanes were chosen for the prelude's target: a mismatch is a compile error, not wrong data.
  s << "  _Static_assert(sizeof(" << vector_type << ") == " << vector_bytes << ", \"" << what
    << " lanes differ from the prelude's vector width\");\n";
}

void render_batch_index(std::ostringstream& s, const Kernel& k, const TilePlan& p) {
  if (p.row == 0) return;
  s << "    int64_t t_ = bt;\n";
  for (int d = p.row - 1; d >= 0; d--)
    s << "    const int64_t x" << d << " = t_ % " << k.full_shape[d]
      << "; t_ /= " << k.full_shape[d] << ";\n";
}

void render_scalar_store(std::ostringstream& s, const std::string& ind, const Kernel& k,
                         const TilePlan& p, ExprEmitter& em, const std::vector<std::string>& base,
                         const char* type, int64_t rows, int64_t stride) {
  s << ind << "for (int64_t i = 0; i < " << rows << " && n0 + i < n_hi; i++) {\n";
  s << ind << "  #pragma GCC ivdep\n";
  s << ind << "  for (int64_t j = 0; j < mv; j++) {\n";
  const std::string in = ind + "    ";
  s << in << type << " red = tl[i * " << stride << " + j];\n";
  std::vector<std::string> idx = base;
  idx[p.row] = "(n0 + i)";
  idx[p.col] = "(m0 + j)";
  ExprEmitter::Memo memo;
  memo[p.reduce] = "red";
  const std::string out = em.emit(*k.value, s, in, memo, idx);
  s << in << "b0[" << ExprEmitter::index(k.out_view, idx) << "] = " << out << ";\n";
  s << ind << "  }\n" << ind << "}\n";
}

}  // namespace ember::codegen

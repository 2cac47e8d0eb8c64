// The heuristic's plain loops (plan_heuristic.h): elementwise kernels, reduces that are not
// products (sums, maxima, a matrix-vector product's rows) and the nests inside kernels.
#include <algorithm>
#include <cstdlib>

#include "codegen/column_split.h"
#include "codegen/loop_shapes.h"
#include "codegen/plan_heuristic.h"

namespace ember::codegen {

using schedule::Expr;
using schedule::Kernel;

namespace {

// Both walks stay in the kernel's own loop space: a nest is planned on its own.
void loads(const Expr& e, std::vector<const Expr*>& out) {
  if (e.nested) return;
  if (e.kind == Expr::Kind::Load) out.push_back(&e);
  for (auto& s : e.src) loads(*s, out);
}

void nodes(const Expr& e, std::vector<const Expr*>& out) {
  if (e.nested) return;
  out.push_back(&e);
  for (auto& s : e.src) nodes(*s, out);
}

int pick(int64_t size, std::initializer_list<int> choices) {
  for (int c : choices)
    if (size % c == 0 && size >= c) return c;
  return 1;
}

// The loads of the reduces' inputs, and how many are contiguous along the reduce's last axis and
// along the last output axis.
struct ReduceLoads {
  int reduce_contiguous = 0, out_contiguous = 0;
  bool max_reduce = false;
};

ReduceLoads reduce_loads(const Kernel& k) {
  const size_t rank = k.full_shape.size(), nglob = rank - k.reduce_axes.size();
  std::vector<const Expr*> all, ls;
  nodes(*k.value, all);
  ReduceLoads r;
  for (auto* e : all) {
    if (e->kind == Expr::Kind::Reduce) loads(*e->src[0], ls);
    r.max_reduce |= e->kind == Expr::Kind::Reduce && e->op == ir::Op::RMAX;
  }
  for (auto* l : ls) {
    // A load constant along every reduce axis (a per-output operand: batch norm's mean, scale or
    // shift beside the reduced input) is read once per output, not once per term: it does not
    // pick the vector axis.
    bool varies = false;
    for (size_t d = nglob; d < rank; d++) varies |= l->view.strides[d] != 0;
    if (!varies) continue;
    if (l->view.strides[rank - 1] == 1) r.reduce_contiguous++;
    if (nglob > 0 && l->view.strides[nglob - 1] == 1) r.out_contiguous++;
  }
  return r;
}

}  // namespace

// Vectors across the output when more of the reduce's loads are contiguous along it (a column
// sum, a product's broadcast operand); ties keep the output axis. The vector axis is judged on the
// reduce's own input (the loads that run rows x reduce times), not on the epilogue's: a
// matrix-vector product whose epilogue reads a vector along the output (the value head minus its
// target) must still walk its contiguous reduce axis.
bool out_vector_axis(const Kernel& k) {
  const ReduceLoads r = reduce_loads(k);
  return r.out_contiguous > 0 && r.out_contiguous >= r.reduce_contiguous;
}

namespace {

// Upcast / unroll factors: a float vector's worth (at least 4, for independent accumulators
// where there are no vectors), then halves.
int vector_factor(const Target& t) {
  return static_cast<int>(std::max<int64_t>(4, t.lanes(kFloat32)));
}

// Register tile: a vector's worth of the last output axis times a few rows of another. A plain
// column sum (one output axis) takes up to four vectors per row: a row's 256 contiguous bytes per
// step instead of one 64-byte line per 512-byte stride (same sums, same order per column).
// Wider still, up to half the vector registers, while two units of work remain: each unit walks
// all the rows, so fewer units make fewer passes over the matrix (128 columns at AVX2: 2 passes of
// 64 instead of 4 of 32; at SSE2 4 of 32 instead of 8 of 16).
void column_tile(const Kernel& k, const Target& t, LoopPlan& l) {
  const int L = vector_factor(t);
  const size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  int u = nglob == 1 ? pick(k.full_shape[0], {4 * L, 2 * L, L, L / 2, L / 4})
                     : pick(k.full_shape[nglob - 1], {L, L / 2, L / 4});
  const Expr* red = schedule::top_reduce(*k.value);
  const int64_t lanes = red ? t.lanes(red->dtype) : 1;
  if (nglob == 1 && lanes > 1) {
    const int64_t n0 = k.full_shape[0];
    for (int64_t c = t.vector_registers / 2 * lanes; c > u; c /= 2)
      if (n0 % c == 0 && n0 / c >= 2) {
        u = static_cast<int>(c);
        break;
      }
  }
  l.upcast[nglob - 1] = u;
  if (nglob >= 2) l.upcast[nglob - 2] = pick(k.full_shape[nglob - 2], {8, 4, 2});
}

// A contiguous reduce axis unrolled by a vector's worth of accumulators. A max stays one loop:
// GCC vectorises the integer-key max reduction (render_c.cpp) itself, but not sixteen unrolled
// scalar ones.
// Rows in fours (each its own accumulators, summed in the same order): a row's vector accumulator
// is one chain of dependent adds, 16 long for the value head's h . w (K = 128) at AVX2, 32 at
// SSE2; four rows keep four chains in flight. h . w at 10,000 rows, 1 thread, time / a copy
// pass's: SSE2 0.88 -> 0.65; at AVX2 within the noise (0.49-0.52 -> 0.46-0.58). Not for shorter
// chains: at AVX-512 (8 steps) 0.56-0.58 -> 0.61-0.63.
void reduce_unroll(const Kernel& k, const Target& t, LoopPlan& l) {
  const size_t rank = k.full_shape.size(), nglob = rank - k.reduce_axes.size();
  const int u =
      pick(k.full_shape[rank - 1], {vector_factor(t), vector_factor(t) / 2, vector_factor(t) / 4});
  l.unroll = u;
  const Expr* red = schedule::top_reduce(*k.value);
  if (u > 1 && nglob >= 1 && red && red->op == ir::Op::SUM && k.full_shape[rank - 1] / u >= 16 &&
      k.reduce_axes.size() == 1 && schedule::kernel_nests(k).empty())
    l.upcast[nglob - 1] = pick(k.full_shape[nglob - 1], {4, 2});
}

}  // namespace

// The kernel's plain loops, its nests planned by loop_plan.
LoopPlan plain_loops(const Kernel& k, const Target& t) {
  LoopPlan l{std::vector<int64_t>(k.full_shape.size(), 1), 1, {}};
  for (const Expr* n : schedule::kernel_nests(k))
    l.nests.push_back(loop_plan(schedule::nest_kernel(k, *n), t));
  return l;
}

// An elementwise kernel's concatenation axis (concat_axis, loop_shapes.h) other than axis 0 (the
// thread pool's; the renderer specialises that one) is unrolled whole: each unrolled copy holds
// its index as a constant and loads its own piece only. The stacked taps' copy E_16_9_64_4_4:
// 0.18x the loop's time (one thread, the generated code alone, alternated).
void cat_axis(const Kernel& k, LoopPlan& l) {
  for (size_t d = 1; d + 1 < k.full_shape.size(); d++)
    if (concat_axis(k, d)) {
      l.upcast[d] = k.full_shape[d];
      return;
    }
}

std::optional<ColumnSplitPlan> column_split_plan(const Kernel& k) {
  if (const int64_t rows = column_split_rows(k)) return ColumnSplitPlan{k.full_shape[0], rows};
  return std::nullopt;
}

LoopPlan loop_plan(const Kernel& k, const Target& t) {
  const size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  LoopPlan l = plain_loops(k, t);
  if (k.reduce_axes.empty()) return l;
  if (nglob >= 1 && out_vector_axis(k))
    column_tile(k, t, l);
  else if (const ReduceLoads r = reduce_loads(k); r.reduce_contiguous && !r.max_reduce)
    reduce_unroll(k, t, l);
  return l;
}

}  // namespace ember::codegen

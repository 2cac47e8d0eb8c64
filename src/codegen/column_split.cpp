#include "codegen/column_split.h"

#include "codegen/kernel_plan.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Expr;

namespace {

int count_reduces(const Expr& e) {
  if (e.nested) return 0;
  int n = e.kind == Expr::Kind::Reduce;
  for (auto& x : e.src) n += count_reduces(*x);
  return n;
}

}  // namespace

bool column_split_renderable(const schedule::Kernel& k, const std::vector<int64_t>& up,
                             int unroll) {
  if (k.full_shape.size() != 2 || k.reduce_axes.size() != 1 || k.reduce_axes[0] != 1 ||
      unroll != 1 || up.size() != 2 || up[1] != 1 || k.full_shape[1] <= kSumBlock ||
      !schedule::kernel_nests(k).empty() || count_reduces(*k.value) != 1)
    return false;
  const Expr* red = schedule::top_reduce(*k.value);
  return red && red->op == ir::Op::SUM && is_floating_point(red->dtype);
}

int64_t column_split_rows(const schedule::Kernel& k) {
  if (k.full_shape.size() != 2 || k.full_shape[0] > kSplitColumns ||
      !column_split_renderable(k, {k.full_shape[0], 1}, 1))
    return 0;
  const int64_t rows = k.full_shape[1];
  if (rows < 8 * kSumBlock || k.full_shape[0] * rows < kMinParallelWork) return 0;
  // At least 4 blocks a slice; larger while 8 slices remain (both threads' shares stay even).
  const int64_t blocks = (rows + kSumBlock - 1) / kSumBlock;
  int64_t b = 4;
  while ((blocks + 2 * b - 1) / (2 * b) >= 8) b *= 2;
  return b * kSumBlock;
}

int64_t column_split_slices(const schedule::Kernel& k, int64_t rows_per_slice) {
  return (k.full_shape[1] + rows_per_slice - 1) / rows_per_slice;
}

Scratch column_split_scratch(const schedule::Kernel& k, int64_t cols_per_unit,
                             int64_t rows_per_slice) {
  const int64_t units = k.full_shape[0] / cols_per_unit;
  const Expr* red = schedule::top_reduce(*k.value);
  const int64_t es = red ? static_cast<int64_t>(element_size(red->dtype)) : 8;
  Scratch s;
  s.zeroed = (units * 8 + 63) / 64 * 64;
  s.bytes = s.zeroed + units * column_split_slices(k, rows_per_slice) * cols_per_unit * es;
  return s;
}

}  // namespace ember::codegen

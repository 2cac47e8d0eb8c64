// KernelPlan's words (DEBUG=3), legality and launch facts (kernel_plan.h).
#include "codegen/kernel_plan.h"

#include <algorithm>
#include <unordered_set>

#include "codegen/column_split.h"
#include "codegen/loop_shapes.h"
#include "codegen/render_tile.h"
#include "codegen/tile_operands.h"

namespace ember::codegen {

using schedule::Kernel;

namespace {

// A plan's local buffers live on the stack of the thread that runs it (8 MiB by default, the
// callers' frames included): at most half of that.
constexpr int64_t kMaxFrameBytes = int64_t{4} << 20;
// Elements a loop plan's iteration computes (its register tile, its unrolled reduce) at most.
constexpr int64_t kMaxLoopTile = 1024;
// Row pointers the tiled and dot kernels keep in general registers at most.
constexpr int64_t kMaxTileRows = 8;

const char* const kActionNames[] = {"UPCAST",       "UNROLL",      "VECTORIZE",  "PACK",
                                    "BLOCK_REDUCE", "BLOCK_OUTER", "COLS_OUTER", "SPLIT_REDUCE",
                                    "HOLD",         "BLOCK_COLS",  "THREADS",    "KIND"};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Batch indices of a product: the loop axes before its row axis.
int64_t batch_of(const Kernel& k, int row) {
  int64_t b = 1;
  for (int d = 0; d < row; d++) b *= k.full_shape[d];
  return b;
}

ScalarType reduce_dtype(const Kernel& k) {
  const schedule::Expr* red = schedule::top_reduce(*k.value);
  return red ? red->dtype : k.value->dtype;
}

void loop_actions(const LoopPlan& l, int nest, std::vector<Action>& out) {
  for (size_t d = 0; d < l.upcast.size(); d++)
    if (l.upcast[d] > 1)
      out.push_back({ActionKind::Upcast, static_cast<int>(d), l.upcast[d], nest});
  if (l.unroll > 1)
    out.push_back({ActionKind::Unroll, static_cast<int>(l.upcast.size()) - 1, l.unroll, nest});
}

void tile_actions(const TilePlan& t, std::vector<Action>& out) {
  out.push_back({ActionKind::Upcast, t.row, t.tile_rows});
  out.push_back({ActionKind::Upcast, t.col, t.tile_cols});
  out.push_back({ActionKind::Vectorize, t.col, t.lanes});
  if (t.pack_cols) out.push_back({ActionKind::Pack, t.col, 1});
  if (t.row_panel != RowPanel::None)
    out.push_back({ActionKind::Pack, t.row, t.row_panel == RowPanel::Broadcast ? t.lanes : 1});
  if (t.block_k) out.push_back({ActionKind::BlockReduce, t.red, t.block_k});
  out.push_back({ActionKind::BlockOuter, t.row, t.block_rows});
  if (t.block_cols) out.push_back({ActionKind::BlockCols, t.col, t.block_cols});
  if (t.split_k) out.push_back({ActionKind::SplitReduce, t.red, t.split_k});
  if (t.cols_outer) out.push_back({ActionKind::ColsOuter, t.col, 1});
  if (t.hold) out.push_back({ActionKind::Hold, t.col, 1});
}

void dot_actions(const DotPlan& d, std::vector<Action>& out) {
  out.push_back({ActionKind::Upcast, d.row, d.tile_rows});
  out.push_back({ActionKind::Upcast, d.col, d.tile_cols});
  out.push_back({ActionKind::Vectorize, d.red, d.lanes});
  out.push_back({ActionKind::BlockOuter, d.row, d.block_rows});
  if (d.block_cols) out.push_back({ActionKind::BlockCols, d.col, d.block_cols});
  if (d.hold) out.push_back({ActionKind::Hold, d.red, 1});
}

std::string loop_illegal(const Kernel& k, const LoopPlan& l) {
  const size_t rank = k.full_shape.size(), nglob = rank - k.reduce_axes.size();
  if (l.upcast.size() != rank)
    return std::to_string(l.upcast.size()) + " upcasts for " + std::to_string(rank) + " axes";
  int64_t elems = l.unroll;
  for (size_t d = 0; d < rank; d++) {
    const int64_t u = l.upcast[d];
    if (u < 1 || k.full_shape[d] % u)
      return "upcast " + std::to_string(u) + " of axis " + std::to_string(d) +
             " does not divide it";
    if (d >= nglob && u > 1) return "an upcast of reduce axis " + std::to_string(d);
    elems *= u;
  }
  if (l.unroll < 1 ||
      (l.unroll > 1 && (k.reduce_axes.empty() || k.full_shape[rank - 1] % l.unroll)))
    return "unroll " + std::to_string(l.unroll) + " does not divide the last reduce axis";
  if (elems > kMaxLoopTile) return "more than " + std::to_string(kMaxLoopTile) + " elements a step";
  const auto nests = schedule::kernel_nests(k);
  if (l.nests.size() != nests.size())
    return std::to_string(l.nests.size()) + " nest plans for " + std::to_string(nests.size());
  for (size_t i = 0; i < nests.size(); i++)
    if (std::string why = loop_illegal(schedule::nest_kernel(k, *nests[i]), l.nests[i]);
        !why.empty())
      return "nest " + std::to_string(i) + ": " + why;
  return "";
}

std::string column_split_illegal(const Kernel& k, const ColumnSplitPlan& c) {
  if (!column_split_renderable(k, {c.cols, 1}, 1))
    return "not a column sum over more than one block of rows";
  if (c.cols < 1 || c.cols > kSplitColumns || k.full_shape[0] % c.cols)
    return "columns per unit " + std::to_string(c.cols) + " do not divide the columns";
  const int64_t blocks = c.slice_rows / kSumBlock;
  if (c.slice_rows < kSumBlock || c.slice_rows % kSumBlock || (blocks & (blocks - 1)))
    return "a slice of " + std::to_string(c.slice_rows) + " rows is no power-of-two of blocks";
  if (column_split_slices(k, c.slice_rows) < 2) return "one slice";
  return "";
}

// The reduce blocks of a unit's range: the longest split-K slice, or the whole reduce.
int64_t range_blocks(const Kernel& k, const TilePlan& t) {
  const int64_t kk = k.full_shape[t.red];
  const int64_t range = t.split_k ? ceil_div(kk, ceil_div(kk, t.split_k)) : kk;
  return t.block_k ? ceil_div(range, t.block_k) : 1;
}

// Bytes of the tiled kernel's local buffers (render_tile.cpp's declarations); `whole`: the column
// panel holds the unit's whole range (col_panel_whole_range).
int64_t tile_frame_bytes(const Kernel& k, const TilePlan& t, const TileOperands& p,
                         bool whole = false) {
  const int64_t es = static_cast<int64_t>(element_size(p.reduce->dtype));
  const int64_t kk = k.full_shape[t.red], kc = t.block_k ? t.block_k : kk;
  const int64_t mpad = ceil_div(k.full_shape[t.col], t.tile_cols) * t.tile_cols;
  int64_t bytes = 2 * t.tile_rows * t.tile_cols;  // the tile's sums (tl, tot)
  if (t.pack_cols)
    bytes += static_cast<int64_t>(p.cols.size()) * kc * (whole ? range_blocks(k, t) : 1) *
             (col_panel_per_tile(p, t.pack_cols, t.cols_outer) ? t.tile_cols : mpad);
  if (t.block_k && !t.split_k) bytes += t.block_rows * mpad;  // cacc
  bytes += 2 * static_cast<int64_t>(p.sums.size()) * t.block_rows;
  if (t.row_panel == RowPanel::Scalar)
    bytes += static_cast<int64_t>(p.rows.size()) * t.block_rows * kc;
  if (t.row_panel == RowPanel::Broadcast) {
    const bool per_tile = !t.cols_outer && !tile_rows_kmajor(p);
    bytes += static_cast<int64_t>(p.rows.size()) * (per_tile ? t.tile_rows : t.block_rows) * kc *
             t.lanes;
  }
  return bytes * es;
}

}  // namespace

// A plan's legality does not depend on it: the whole range is taken only where it fits.
bool col_panel_whole_range(const Kernel& k, const TilePlan& t, const TileOperands& p) {
  if (!t.pack_cols || col_panel_per_tile(p, t.pack_cols, t.cols_outer) || t.block_cols ||
      range_blocks(k, t) < 2 || ceil_div(k.full_shape[t.row], t.block_rows) < 2)
    return false;
  return tile_frame_bytes(k, t, p, true) <= kMaxFrameBytes;
}

int64_t col_panel_shared(const Kernel& k, const TilePlan& t, const TileOperands& p) {
  const int64_t kk = k.full_shape[t.red], kc = t.block_k ? t.block_k : kk;
  if (!t.pack_cols || col_panel_per_tile(p, t.pack_cols, t.cols_outer) ||
      KernelPlan{t}.runtime_rows(k) < 0)
    return 0;
  const bool whole = col_panel_whole_range(k, t, p);
  if (kc < kk && !whole) return 0;  // packed again for each reduce block
  const int64_t mpad = ceil_div(k.full_shape[t.col], t.tile_cols) * t.tile_cols;
  return kc * (whole ? range_blocks(k, t) : 1) * mpad;
}

namespace {

// The row blocks of a product: a multiple of the tile, at most the rows padded to whole tiles.
std::string row_blocks_illegal(const Kernel& k, int row, int64_t tile_rows, int64_t block_rows) {
  const int64_t npad = ceil_div(k.full_shape[row], tile_rows) * tile_rows;
  if (block_rows < tile_rows || block_rows % tile_rows || block_rows > npad)
    return "row blocks of " + std::to_string(block_rows) + " for tiles of " +
           std::to_string(tile_rows) + " rows";
  return "";
}

std::string tile_illegal(const Kernel& k, const TilePlan& t) {
  const auto p = tile_operands(k);
  if (!p) return "not a product (tile_operands)";
  if (t.row != p->row || t.col != p->col || t.red != p->red) return "other axes than the product's";
  const int64_t m = k.full_shape[t.col], kk = k.full_shape[t.red];
  if (t.lanes < 1 || t.tile_rows < 1 || t.tile_cols < t.lanes || t.tile_cols % t.lanes)
    return "a register tile of " + std::to_string(t.tile_rows) + " x " +
           std::to_string(t.tile_cols) + " in vectors of " + std::to_string(t.lanes);
  if (std::string why = row_blocks_illegal(k, t.row, t.tile_rows, t.block_rows); !why.empty())
    return why;
  if (t.block_k < 0 || t.block_k >= kk) return "reduce blocks of " + std::to_string(t.block_k);
  if (!t.pack_cols && (!p->direct || m % t.tile_cols))
    return "column operands read in place that are not contiguous whole tiles";
  if (t.row_panel != RowPanel::None && p->rows.empty()) return "a row panel without row operands";
  if ((t.row_panel == RowPanel::Broadcast || t.hold) && t.lanes == 1)
    return "a broadcast panel or held vectors without vectors";
  if (t.split_k && (t.split_k < 0 || ceil_div(kk, t.split_k) < 2 || !t.block_k))
    return "split-K into slices of " + std::to_string(t.split_k) + " without reduce blocks";
  const int64_t mpad = ceil_div(m, t.tile_cols) * t.tile_cols;
  if (t.block_cols && (t.block_cols < 0 || t.block_cols % t.tile_cols || t.block_cols >= mpad ||
                       t.split_k || !p->sums.empty()))
    return "column blocks of " + std::to_string(t.block_cols) +
           " (whole tiles, no split-K, no row sums)";
  if (int64_t b = tile_frame_bytes(k, t, *p); b > kMaxFrameBytes)
    return std::to_string(b) + " bytes of local buffers";
  return "";
}

std::string dot_illegal(const Kernel& k, const DotPlan& d) {
  const auto p = tile_operands(k);
  if (!p) return "not a product (tile_operands)";
  if (d.row != p->row || d.col != p->col || d.red != p->red) return "other axes than the product's";
  if (!p->sums.empty()) return "row sums beside the product (the dot kernel stores one output)";
  if (!dot_fits(*p)) return "operands that do not read as vectors along the reduce axis";
  if (d.lanes < 1 || (d.lanes & (d.lanes - 1)) || d.tile_rows < 1 || d.tile_cols < 1)
    return "a register tile of " + std::to_string(d.tile_rows) + " x " +
           std::to_string(d.tile_cols) + " in vectors of " + std::to_string(d.lanes);
  if (d.hold && d.lanes == 1) return "held vectors without vectors";
  if (d.block_cols < 0 || d.block_cols % d.tile_cols || d.block_cols >= k.full_shape[d.col])
    return "column blocks of " + std::to_string(d.block_cols) + " (whole tiles, fewer than the " +
           std::to_string(k.full_shape[d.col]) + " columns)";
  return row_blocks_illegal(k, d.row, d.tile_rows, d.block_rows);
}

// The register tile against the target: its lanes, its row pointers, its accumulators.
std::string registers_illegal(const Target& t, ScalarType dtype, int64_t lanes, int64_t rows,
                              int64_t accumulators) {
  if (lanes != t.lanes(dtype))
    return "vectors of " + std::to_string(lanes) + " lanes on a target of " +
           std::to_string(t.lanes(dtype));
  if (rows > kMaxTileRows) return std::to_string(rows) + " row pointers";
  if (accumulators > t.vector_registers)
    return std::to_string(accumulators) + " accumulators in " + std::to_string(t.vector_registers) +
           " vector registers";
  return "";
}

}  // namespace

std::string Action::str() const {
  std::string s = nest >= 0 ? "NEST" + std::to_string(nest) + ":" : "";
  s += kActionNames[static_cast<int>(kind)];
  if (kind == ActionKind::Kind)
    return s + "(" + plan_kind_name(static_cast<PlanKind>(amount)) + ")";
  return s + "(" + std::to_string(axis) + "," + std::to_string(amount) + ")";
}

const char* plan_kind_name(PlanKind kind) {
  static const char* const names[] = {"loop", "tile", "dot", "column_split"};
  return names[static_cast<int>(kind)];
}

std::vector<Action> KernelPlan::actions() const {
  std::vector<Action> out;
  if (const auto* l = std::get_if<LoopPlan>(&layout)) {
    loop_actions(*l, -1, out);
    for (size_t i = 0; i < l->nests.size(); i++)
      loop_actions(l->nests[i], static_cast<int>(i), out);
  } else if (const auto* t = std::get_if<TilePlan>(&layout)) {
    tile_actions(*t, out);
  } else if (const auto* d = std::get_if<DotPlan>(&layout)) {
    dot_actions(*d, out);
  } else {
    const auto& c = std::get<ColumnSplitPlan>(layout);
    out.push_back({ActionKind::Upcast, 0, c.cols});
    out.push_back({ActionKind::SplitReduce, 1, c.slice_rows});
  }
  if (threads) out.push_back({ActionKind::Threads, 0, threads});
  return out;
}

std::string KernelPlan::str() const {
  const auto* l = std::get_if<LoopPlan>(&layout);
  const std::vector<Action> all = actions();
  if (l && l->nests.empty() && all.empty()) return "";
  std::string s = plan_kind_name(kind()) + std::string(":");
  for (const Action& a : all)
    if (a.nest < 0) s += " " + a.str();
  for (size_t i = 0; l && i < l->nests.size(); i++) {
    s += " NEST" + std::to_string(i) + "[";
    std::vector<Action> own;
    loop_actions(l->nests[i], -1, own);
    for (const Action& a : own) s += " " + a.str();
    s += " ]";
  }
  return s;
}

std::string KernelPlan::illegal(const Kernel& k) const {
  if (threads != 0 && threads != 1) return "THREADS(0," + std::to_string(threads) + ")";
  switch (kind()) {
    case PlanKind::Loop:
      return loop_illegal(k, std::get<LoopPlan>(layout));
    case PlanKind::Tile:
      return tile_illegal(k, std::get<TilePlan>(layout));
    case PlanKind::Dot:
      return dot_illegal(k, std::get<DotPlan>(layout));
    case PlanKind::ColumnSplit:
      return column_split_illegal(k, std::get<ColumnSplitPlan>(layout));
  }
  return "an unknown plan kind";
}

std::string KernelPlan::illegal(const Kernel& k, const Target& t) const {
  if (std::string why = illegal(k); !why.empty()) return why;
  if (const auto* p = std::get_if<TilePlan>(&layout))
    return registers_illegal(t, reduce_dtype(k), p->lanes, p->tile_rows,
                             p->tile_rows * (p->tile_cols / p->lanes));
  if (const auto* d = std::get_if<DotPlan>(&layout))
    return registers_illegal(t, reduce_dtype(k), d->lanes, d->tile_rows,
                             d->tile_rows * d->tile_cols);
  return "";
}

int64_t KernelPlan::units(const Kernel& k) const {
  if (const auto* t = std::get_if<TilePlan>(&layout)) {
    const int64_t kk = k.full_shape[t->red];
    const int64_t mpad = ceil_div(k.full_shape[t->col], t->tile_cols) * t->tile_cols;
    const int64_t slices = t->split_k ? ceil_div(kk, t->split_k) : 1;
    const int64_t cblocks = t->block_cols ? ceil_div(mpad, t->block_cols) : 1;
    return batch_of(k, t->row) * ceil_div(k.full_shape[t->row], t->block_rows) * slices * cblocks;
  }
  if (const auto* d = std::get_if<DotPlan>(&layout))
    return batch_of(k, d->row) * ceil_div(k.full_shape[d->row], d->block_rows) *
           (d->block_cols ? ceil_div(k.full_shape[d->col], d->block_cols) : 1);
  if (const auto* c = std::get_if<ColumnSplitPlan>(&layout))
    return k.full_shape[0] / c->cols * column_split_slices(k, c->slice_rows);
  const auto& l = std::get<LoopPlan>(layout);
  if (k.full_shape.size() == k.reduce_axes.size()) return 1;
  return k.full_shape[0] / l.upcast[0];
}

LoopPlan plain_loop_plan(const Kernel& k) {
  LoopPlan l{std::vector<int64_t>(k.full_shape.size(), 1), 1, {}};
  for (const schedule::Expr* n : schedule::kernel_nests(k))
    l.nests.push_back(plain_loop_plan(schedule::nest_kernel(k, *n)));
  return l;
}

int64_t KernelPlan::grain(const Kernel& k) const {
  const auto* l = std::get_if<LoopPlan>(&layout);
  if (!l) return 1;
  const size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  // 256 iterations: a multiple of any vector loop's step (64 one-byte lanes at 512 bits, times a
  // possible unroll by 4), so only the launch's last range has an epilogue, as on one thread.
  const bool vector_outer =
      k.reduce_axes.empty() && (nglob == 1 || (nglob == 2 && short_last_axis(k, l->upcast)));
  return vector_outer ? 256 : 1;
}

namespace {

// The ops' cost column (ops.def) summed over `e`'s distinct ALU expressions, counting only those
// below a reduce when `below_only`; nests (their own loop space) are left out.
int64_t alu_cost(const schedule::Expr& e, bool below_only,
                 std::unordered_set<const schedule::Expr*>& seen) {
  if (!seen.insert(&e).second || e.nested) return 0;
  const bool reduce = e.kind == schedule::Expr::Kind::Reduce;
  int64_t c = e.kind == schedule::Expr::Kind::Alu && !below_only ? ir::op_info(e.op).cost : 0;
  for (const auto& s : e.src) c += alu_cost(*s, below_only && !reduce, seen);
  return c;
}

// The ALU work of one iteration of `k`'s loop space, at least 1: below the reduce in a reduce
// kernel (a product's multiply, not its epilogue, which runs once per output), all of it in an
// elementwise one (a depthwise convolution's taps).
int64_t iteration_cost(const Kernel& k) {
  std::unordered_set<const schedule::Expr*> seen;
  const bool reduces = !k.reduce_axes.empty();
  int64_t c = alu_cost(*k.value, reduces, seen);
  for (const auto& o : k.more_outputs) c += alu_cost(*o.value, reduces, seen);
  return std::max<int64_t>(1, c);
}

}  // namespace

// kMinParallelWork counts loop-space elements times their iteration cost: a depthwise tap sum of
// 47k elements (25 taps each) takes as long as a product of 2^20 multiply-adds.
bool KernelPlan::splits(const Kernel& k) const {
  return threads != 1 && units(k) > 1 &&
         ir::shape_numel(k.full_shape) * iteration_cost(k) >= kMinParallelWork;
}

Scratch KernelPlan::scratch(const Kernel& k) const {
  if (const auto* c = std::get_if<ColumnSplitPlan>(&layout))
    return column_split_scratch(k, c->cols, c->slice_rows);
  const auto* t = std::get_if<TilePlan>(&layout);
  if (!t) return {};
  if (!t->split_k) {
    const auto p = tile_operands(k);
    const int64_t panel = p ? col_panel_shared(k, *t, *p) : 0;
    if (!panel) return {};
    // The panel's state word (0 unpacked, 1 being packed, 2 packed), then each operand's panel.
    return {64 + static_cast<int64_t>(p->cols.size()) * panel *
                     static_cast<int64_t>(element_size(p->reduce->dtype)),
            64};
  }
  // Counters (one per row block, zeroed), then the partial tiles, [batch][slice][row][MPAD], then
  // each row sum's partials, [batch][slice][row].
  const int64_t n = k.full_shape[t->row], bt = batch_of(k, t->row);
  const int64_t slices = ceil_div(k.full_shape[t->red], t->split_k);
  const int64_t npad = ceil_div(n, t->tile_rows) * t->tile_rows;
  const int64_t mpad = ceil_div(k.full_shape[t->col], t->tile_cols) * t->tile_cols;
  const int64_t es = static_cast<int64_t>(element_size(reduce_dtype(k)));
  Scratch s;
  s.zeroed = (bt * ceil_div(n, t->block_rows) * 8 + 63) / 64 * 64;
  s.bytes =
      s.zeroed + bt * slices * npad * (mpad + static_cast<int64_t>(k.more_outputs.size())) * es;
  return s;
}

int64_t KernelPlan::runtime_rows(const Kernel& k) const {
  // Row blocks of a fixed size are the only place the row count enters the tiled code: the unit
  // of work is the block, and the last block ends at the row count. Batch axes, split-K slices
  // and column blocks would need it to decompose the unit index, so they keep the compiled-in
  // count, and so does a product of one block (its block size is its row count).
  const auto* t = std::get_if<TilePlan>(&layout);
  if (!t || k.full_shape.size() != 3 || t->block_rows >= k.full_shape[0] || t->split_k ||
      t->block_cols)
    return -1;
  return k.full_shape[0];
}

}  // namespace ember::codegen

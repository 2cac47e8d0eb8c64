// KernelPlan::neighbours (kernel_plan.h): the plans one action away from a plan. Each kind varies
// what its renderer reads: the loops their upcasts and unrolls (by the next divisor up or down),
// the tiled reduce every field of its TilePlan, the dot kernel its tile, row and column blocks and
// held vectors, the column split its slices and columns; and every plan may become the heuristic's
// plan of another kind that fits the kernel, and a launch split across threads may run on one.
// Only legal plans are kept, each once; a move keeps the plan's THREADS unless it is the move.
// An action's amount 0 turns it off (PACK, BLOCK_REDUCE, BLOCK_COLS, SPLIT_REDUCE, COLS_OUTER,
// HOLD, THREADS).
#include <functional>
#include <set>

#include "codegen/column_split.h"
#include "codegen/kernel_plan.h"
#include "codegen/plan_heuristic.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Kernel;

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The next divisor of n above u (0 when none) and below u (0 when none).
int64_t divisor_above(int64_t n, int64_t u) {
  for (int64_t d = u + 1; d <= n; d++)
    if (n % d == 0) return d;
  return 0;
}
int64_t divisor_below(int64_t n, int64_t u) {
  for (int64_t d = u - 1; d >= 1; d--)
    if (n % d == 0) return d;
  return 0;
}

// Collects the moves: legal, not the plan itself, each plan once.
class Moves {
 public:
  Moves(const Kernel& k, const Target& t, const KernelPlan& from)
      : k_(k), t_(t), threads_(from.threads) {
    seen_.insert(from.str());
  }
  void add(const Action& a, KernelPlan p) {
    if (a.kind != ActionKind::Threads) p.threads = threads_;
    if (!p.legal(k_, t_) || !seen_.insert(p.str()).second) return;
    out_.push_back({a, std::move(p)});
  }
  std::vector<Move> take() { return std::move(out_); }

 private:
  const Kernel& k_;
  const Target& t_;
  int64_t threads_;
  std::set<std::string> seen_;
  std::vector<Move> out_;
};

using LoopSink = std::function<void(const Action&, LoopPlan)>;

// A loop plan's upcasts and unroll by the next divisor up and down, and its nests' moves.
void loop_moves(const Kernel& k, const LoopPlan& l, int nest, const LoopSink& add) {
  const size_t rank = k.full_shape.size(), nglob = rank - k.reduce_axes.size();
  for (size_t d = 0; d < nglob; d++)
    for (int64_t u : {divisor_above(k.full_shape[d], l.upcast[d]),
                      divisor_below(k.full_shape[d], l.upcast[d])}) {
      if (u < 1) continue;
      LoopPlan n = l;
      n.upcast[d] = u;
      add({ActionKind::Upcast, static_cast<int>(d), u, nest}, n);
    }
  if (!k.reduce_axes.empty())
    for (int64_t u : {divisor_above(k.full_shape[rank - 1], l.unroll),
                      divisor_below(k.full_shape[rank - 1], l.unroll)}) {
      if (u < 1) continue;
      LoopPlan n = l;
      n.unroll = u;
      add({ActionKind::Unroll, static_cast<int>(rank - 1), u, nest}, n);
    }
  const auto nests = schedule::kernel_nests(k);
  for (size_t i = 0; i < nests.size() && nest < 0; i++)
    loop_moves(schedule::nest_kernel(k, *nests[i]), l.nests[i], static_cast<int>(i),
               [&](const Action& a, LoopPlan np) {
                 LoopPlan n = l;
                 n.nests[i] = std::move(np);
                 add(a, n);
               });
}

// Row blocks of `tiles_per` tiles of `tile_rows` rows, at most the whole (padded) rows.
int64_t row_block(const Kernel& k, int row, int64_t tile_rows, int64_t tiles_per) {
  const int64_t tiles = ceil_div(k.full_shape[row], tile_rows);
  return std::max<int64_t>(1, std::min(tiles_per, tiles)) * tile_rows;
}

// The row block sizes one action away: twice or half the tiles, and all the rows (one unit of
// work per batch index).
std::vector<int64_t> row_blocks(const Kernel& k, int row, int64_t tile_rows, int64_t block_rows) {
  const int64_t per = block_rows / tile_rows;
  return {row_block(k, row, tile_rows, per * 2), row_block(k, row, tile_rows, per / 2),
          row_block(k, row, tile_rows, k.full_shape[row])};
}

// Offers a copy of the layout `l` (a TilePlan or a DotPlan) changed by `change`.
template <typename L>
auto changes(const L& l, Moves& out) {
  return [&l, &out](const Action& a, const std::function<void(L&)>& change) {
    L n = l;
    change(n);
    out.add(a, KernelPlan{n});
  };
}

// The moves of the tiled and the dot kernels alike: the tile one row larger or smaller (its row
// blocks about as many rows), the row blocks, held vectors (along `hold_axis`) on or off.
template <typename L>
void product_moves(const Kernel& k, const L& l, int hold_axis, Moves& out) {
  const auto with = changes(l, out);
  for (int64_t r : {l.tile_rows - 1, l.tile_rows + 1})
    with({ActionKind::Upcast, l.row, r}, [&](L& n) {
      n.tile_rows = std::max<int64_t>(1, r);
      n.block_rows = row_block(k, l.row, n.tile_rows, ceil_div(l.block_rows, n.tile_rows));
    });
  for (int64_t b : row_blocks(k, l.row, l.tile_rows, l.block_rows))
    with({ActionKind::BlockOuter, l.row, b}, [&](L& n) { n.block_rows = b; });
  with({ActionKind::Hold, hold_axis, l.hold ? 0 : 1}, [](L& n) { n.hold ^= true; });
}

// The tile one vector wider or narrower (packed where it does not divide the columns), the
// column panel and the row panel, the loop order.
void tile_shape_moves(const Kernel& k, const TilePlan& t, Moves& out) {
  const auto with = changes(t, out);
  const int64_t m = k.full_shape[t.col];
  for (int64_t tm : {t.tile_cols - t.lanes, t.tile_cols + t.lanes})
    with({ActionKind::Upcast, t.col, tm}, [&](TilePlan& n) {
      n.tile_cols = tm;
      if (tm > 0 && m % tm) n.pack_cols = true;
      if (n.block_cols && tm > 0) {
        n.block_cols = ceil_div(t.block_cols, tm) * tm;
        if (n.block_cols >= ceil_div(m, tm) * tm) n.block_cols = 0;
      }
    });
  with({ActionKind::Pack, t.col, t.pack_cols ? 0 : 1}, [](TilePlan& n) { n.pack_cols ^= true; });
  for (RowPanel r : {RowPanel::None, RowPanel::Scalar, RowPanel::Broadcast}) {
    const int64_t amount = r == RowPanel::None ? 0 : r == RowPanel::Scalar ? 1 : t.lanes;
    if (r != t.row_panel)
      with({ActionKind::Pack, t.row, amount}, [&](TilePlan& n) { n.row_panel = r; });
  }
  with({ActionKind::ColsOuter, t.col, t.cols_outer ? 0 : 1},
       [](TilePlan& n) { n.cols_outer ^= true; });
}

// Column blocks (of whole tiles) twice or half as many, or none.
template <typename L>
void col_block_moves(const Kernel& k, const L& l, Moves& out) {
  const auto with = changes(l, out);
  const int64_t ctiles = ceil_div(k.full_shape[l.col], l.tile_cols);
  const int64_t cblocks = l.block_cols ? ceil_div(ctiles * l.tile_cols, l.block_cols) : 1;
  for (int64_t c : {cblocks * 2, cblocks / 2}) {
    const int64_t cols = c < 2 ? 0 : ceil_div(ctiles, c) * l.tile_cols;
    with({ActionKind::BlockCols, l.col, cols}, [&](L& n) { n.block_cols = cols; });
  }
}

// Reduce blocks twice or half as deep (or one block), column blocks twice or half as many (or
// none), split-K slices twice or half as many (or none).
void tile_block_moves(const Kernel& k, const TilePlan& t, Moves& out) {
  const auto with = changes(t, out);
  const int64_t kk = k.full_shape[t.red], kc = t.block_k ? t.block_k : kk;
  for (int64_t b : {kc * 2, kc / 2}) {
    const int64_t block = b >= kk ? 0 : b;
    with({ActionKind::BlockReduce, t.red, block}, [&](TilePlan& n) { n.block_k = block; });
  }
  col_block_moves(k, t, out);
  const int64_t slices = t.split_k ? ceil_div(kk, t.split_k) : 1;
  for (int64_t s : {slices * 2, slices / 2}) {
    const int64_t depth = s < 2 ? 0 : ceil_div(kk, s);
    // Split-K needs reduce blocks: one block a slice where there were none.
    with({ActionKind::SplitReduce, t.red, depth}, [&](TilePlan& n) {
      n.split_k = depth;
      if (depth && !n.block_k) n.block_k = depth;
    });
  }
}

// The dot tile one column wider or narrower (its column blocks about as wide), column blocks twice
// or half as many (or none).
void dot_moves(const Kernel& k, const DotPlan& d, Moves& out) {
  const auto with = changes(d, out);
  for (int64_t c : {d.tile_cols - 1, d.tile_cols + 1})
    with({ActionKind::Upcast, d.col, c}, [&](DotPlan& n) {
      n.tile_cols = c;
      if (n.block_cols && c > 0) n.block_cols = ceil_div(d.block_cols, c) * c;
    });
  col_block_moves(k, d, out);
}

void column_split_moves(const Kernel& k, const ColumnSplitPlan& c, Moves& out) {
  for (int64_t rows : {c.slice_rows * 2, c.slice_rows / 2})
    out.add({ActionKind::SplitReduce, 1, rows}, KernelPlan{ColumnSplitPlan{c.cols, rows}});
  for (int64_t cols :
       {divisor_above(k.full_shape[0], c.cols), divisor_below(k.full_shape[0], c.cols)})
    out.add({ActionKind::Upcast, 0, cols}, KernelPlan{ColumnSplitPlan{cols, c.slice_rows}});
}

// The heuristic's plan of every other kind that fits the kernel (the dot kernel at any batch).
void kind_moves(const Kernel& k, const Target& t, PlanKind from, Moves& out) {
  auto to = [&](PlanKind kind, KernelPlan p) {
    if (kind != from) out.add({ActionKind::Kind, -1, static_cast<int64_t>(kind)}, std::move(p));
  };
  to(PlanKind::Loop, KernelPlan{loop_plan(k, t)});
  if (auto c = column_split_plan(k)) to(PlanKind::ColumnSplit, KernelPlan{*c});
  if (auto p = tile_operands(k)) {
    to(PlanKind::Tile, KernelPlan{tile_plan(k, *p, t)});
    if (auto d = dot_plan(k, *p, t, false)) to(PlanKind::Dot, KernelPlan{*d});
  }
}

}  // namespace

std::vector<Move> KernelPlan::neighbours(const Kernel& k, const Target& t) const {
  Moves out(k, t, *this);
  if (const auto* l = std::get_if<LoopPlan>(&layout)) {
    loop_moves(k, *l, -1,
               [&](const Action& a, LoopPlan n) { out.add(a, KernelPlan{std::move(n)}); });
  } else if (const auto* tp = std::get_if<TilePlan>(&layout)) {
    product_moves(k, *tp, tp->col, out);
    tile_shape_moves(k, *tp, out);
    tile_block_moves(k, *tp, out);
  } else if (const auto* d = std::get_if<DotPlan>(&layout)) {
    product_moves(k, *d, d->red, out);
    dot_moves(k, *d, out);
  } else {
    column_split_moves(k, std::get<ColumnSplitPlan>(layout), out);
  }
  kind_moves(k, t, kind(), out);
  // One thread where the launcher would split (whether a second thread pays is the search's to
  // time), and back.
  KernelPlan other = *this;
  other.threads = threads ? 0 : 1;
  if (threads || splits(k)) out.add({ActionKind::Threads, 0, other.threads}, std::move(other));
  return out.take();
}

}  // namespace ember::codegen

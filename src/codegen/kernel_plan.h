// Kernel plans (docs/design.md principle 4, schedules are data): how one kernel is rendered. A plan
// is one of four kinds, each a fixed algorithm with the layout that parameterises it; the launcher
// reads its units of work, scratch and row count from it. plan() is the heuristic's choice
// (plan_heuristic.cpp), legal() says whether a plan renders and fits the target, neighbours() lists
// the legal plans one action away (plan_neighbours.cpp: what a schedule search explores next).
// The renderers (render_c.h) only render a plan.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// The words of a plan (DEBUG=3 prints a plan as its actions) and of the moves between plans.
enum class ActionKind {
  Upcast,
  Unroll,
  Vectorize,
  Pack,
  BlockReduce,
  BlockOuter,
  ColsOuter,
  SplitReduce,
  Hold,
  BlockCols,
  Threads,
  Kind
};

/// One action: `kind` on loop axis `axis` by `amount`, e.g. UPCAST(0,4). In a move, amount 0 turns
/// an action off (PACK, BLOCK_REDUCE, BLOCK_COLS, SPLIT_REDUCE, COLS_OUTER, HOLD), a move of a
/// nest's plan names the nest (`nest` >= 0, schedule::kernel_nests order), and KIND is the move
/// to the heuristic's plan of another kind (`amount`: a PlanKind).
struct Action {
  ActionKind kind;
  int axis;
  int64_t amount;
  int nest = -1;
  std::string str() const;
};

enum class PlanKind { Loop, Tile, Dot, ColumnSplit };
/// "loop", "tile", "dot", "column_split".
const char* plan_kind_name(PlanKind kind);

/// The loop renderer (render_c.cpp): a loop per output axis (the outermost is split across
/// threads), the reduce axes inside; elementwise kernels vectorise their innermost loop. Any
/// kernel renders this way.
struct LoopPlan {
  /// UPCAST(d, u): u consecutive indices of output axis d per iteration, a register tile (1: none;
  /// a divisor of the axis). The last output axis stays a loop GCC vectorises.
  std::vector<int64_t> upcast;
  /// UNROLL: the last reduce axis split into this many independent accumulators (a divisor).
  int64_t unroll = 1;
  /// The plans of the kernel's nests (schedule::kernel_nests order), each the plan of the kernel
  /// the nest would be on its own (schedule::nest_kernel).
  std::vector<LoopPlan> nests;
};

/// Split-K of a column sum (column_split.h), rendered by the loop renderer: UPCAST(0, cols)
/// SPLIT_REDUCE(1, slice_rows). A unit of work is one slice of the rows for `cols` columns.
struct ColumnSplitPlan {
  int64_t cols = 0;        // columns per unit (a divisor of the columns)
  int64_t slice_rows = 0;  // rows per slice: a power-of-two multiple of kSumBlock
};

/// Which panel the tiled reduce stages its row operands in (PACK on the row axis): none (read in
/// place), a scalar panel of the block's rows (PACK(row,1): computed operands evaluated once, rows
/// far apart), or a broadcast panel (PACK(row,lanes): each value stored as a whole vector, for
/// targets whose broadcast is not a plain load; render_tile.h's TileRowPanel).
enum class RowPanel { None, Scalar, Broadcast };

/// The register-tiled reduce (render_tile.h): matrix products and their fused epilogues as an
/// explicit-SIMD micro-kernel, a tile_rows x tile_cols tile of accumulators in vectors along col.
struct TilePlan {
  int row = -1, col = -1, red = -1;  // loop axes (tile_operands)
  /// VECTORIZE(col, lanes): the target's vector (c_prelude's ember_vf / ember_vd).
  int64_t lanes = 1;
  int64_t tile_rows = 1, tile_cols = 1;  // UPCAST(row, .) UPCAST(col, .); tile_cols % lanes == 0
  /// PACK(col,1): the column operands in a zero-padded panel per reduce block (transposed or
  /// computed operands, column counts the tile does not divide); else read in place.
  bool pack_cols = false;
  RowPanel row_panel = RowPanel::None;
  /// BLOCK_REDUCE: the reduce axis in cache blocks of this depth, the accumulators kept in a local
  /// buffer between blocks (0: one block).
  int64_t block_k = 0;
  /// BLOCK_OUTER: rows per unit of work (a multiple of tile_rows).
  int64_t block_rows = 0;
  /// BLOCK_COLS: columns per unit of work (a multiple of tile_cols; 0: all). Needs no split-K
  /// and no row sums.
  int64_t block_cols = 0;
  /// SPLIT_REDUCE: split-K, the reduce axis in ceil(K / split_k) slices of equal depth, each slice
  /// of each row block a unit of work; the unit that finishes a block's last slice sums the
  /// partials in slice order (kernel scratch) and applies the epilogue (0: none). Needs blocks.
  int64_t split_k = 0;
  /// COLS_OUTER: within a row block, the column tiles outside the row tiles (one column tile's
  /// panel stays in L1 while the rows stream past). Same sums, same order.
  bool cols_outer = false;
  /// HOLD(col,1): each k step's column vectors bound to registers (an empty asm statement), so
  /// GCC loads each once instead of folding the load into every multiply-add. Vectors only.
  bool hold = false;
};

/// The dot-product kernel of small products (render_dot.h): a tile_rows x tile_cols tile of
/// accumulators, each a vector along the reduce axis (VECTORIZE(red, lanes)), operands read in
/// place; then each accumulator's lanes are summed.
struct DotPlan {
  int row = -1, col = -1, red = -1;
  int64_t lanes = 1;
  int64_t tile_rows = 1, tile_cols = 1;
  int64_t block_rows = 0;  // rows per unit of work (a multiple of tile_rows)
  bool hold = false;       // HOLD(red,1): the step's row and column vectors in registers
  /// BLOCK_COLS(col, .): columns per unit of work (a multiple of tile_cols below the columns; 0:
  /// all), the units of a batch that is one row block. Each column's sum is the same in any block.
  int64_t block_cols = 0;
};

/// Scratch memory a launch passes after the kernel's buffers and its row count, if any (one more
/// `bufs` slot), 64-byte aligned, its first `zeroed` bytes zero at each launch: split-K's counters
/// and partials, or the launch's one column panel (col_panel_shared, render_tile.h).
struct Scratch {
  int64_t bytes = 0, zeroed = 0;
};

struct Move;

/// A launch is split across the thread pool only above this much work (loop-space elements times
/// each one's iteration cost, KernelPlan::splits: a matrix product's multiply-adds). Waking a
/// worker costs ~10 us on an idle machine and a scheduler time slice on a busy one; 2^18
/// multiply-adds take ~10 us on one core, so a batch-4 product (4x128x128 = 2^16) stays on the
/// caller's thread.
constexpr int64_t kMinParallelWork = int64_t{1} << 18;

struct KernelPlan {
  std::variant<LoopPlan, TilePlan, DotPlan, ColumnSplitPlan> layout;
  /// THREADS(0,1): every launch runs on the caller's thread alone, though its work is above
  /// kMinParallelWork (where waking a worker costs more than it saves: small kernels, a second
  /// hardware thread of one core). 0: the launcher's rule. Values do not depend on it: the units
  /// of work and their order are the same.
  int64_t threads = 0;

  PlanKind kind() const { return static_cast<PlanKind>(layout.index()); }
  /// The plan as actions, in the order DEBUG=3 prints them.
  std::vector<Action> actions() const;
  /// DEBUG=3's line, e.g. "tile: UPCAST(0,6) UPCAST(1,64) VECTORIZE(1,16) ..."; empty for a loop
  /// plan without actions (the kernel's plain loops).
  std::string str() const;

  /// Why `k` cannot be rendered with this plan, or "" when it can: the plan's kind must fit the
  /// kernel, its sizes divide the kernel's, and its local buffers fit a thread's stack.
  std::string illegal(const schedule::Kernel& k) const;
  /// As above, and the plan must fit `t`: its lanes are the target's, its register tile fits the
  /// vector registers (at most 8 row pointers).
  std::string illegal(const schedule::Kernel& k, const Target& t) const;
  bool legal(const schedule::Kernel& k, const Target& t) const { return illegal(k, t).empty(); }

  /// The legal plans one action away (plan_neighbours.cpp): a register tile one row or one vector
  /// larger or smaller, upcasts and unrolls doubled or halved, reduce blocks, split-K, row and
  /// column blocks (one unit of work among them), packing on and off, the loop order, held
  /// vectors, one thread or the launcher's split, and the default plan of every other kind that
  /// fits the kernel.
  std::vector<Move> neighbours(const schedule::Kernel& k, const Target& t) const;

  /// Units of work: the iterations of the generated function's outer loop, what its `start` and
  /// `end` range over and the thread pool splits.
  int64_t units(const schedule::Kernel& k) const;
  /// A launch split across threads cuts the units only at multiples of this. It is above 1 where
  /// the outer loop is the vectorised one (a flat elementwise kernel): there a range's last
  /// iterations run in the scalar epilogue, and libm's scalar and vector functions may differ in
  /// the last bits, so cuts that follow the thread count would make results depend on it.
  int64_t grain(const schedule::Kernel& k) const;
  /// Whether a launch may split its units across threads: more than one unit, at least
  /// kMinParallelWork of work, and no THREADS(0,1).
  bool splits(const schedule::Kernel& k) const;
  Scratch scratch(const schedule::Kernel& k) const;
  /// The row count a launch passes after the kernel's buffers (one more `bufs` slot, a pointer to
  /// an int64_t holding it), or -1 when the kernel has none: a tiled product over row blocks (no
  /// batch axes, no split-K, no column blocks) reads its row count at run time, so that products
  /// that differ only in it (a policy on a whole epoch and on a minibatch) are one function.
  int64_t runtime_rows(const schedule::Kernel& k) const;
};

/// A neighbour: the action that changes the plan, and the plan it gives.
struct Move {
  Action action;
  KernelPlan plan;
};

/// How a kernel runs in a dialect with work-items (OpenCL, CUDA: dialect.h; gpu_plan.cpp): which
/// loop axes are global (across work-groups), local (across a group's work-items) and unrolled
/// (a work-item's register tile). A launch is `groups` work-groups of `local` work-items.
enum class GpuKind {
  /// One work-item per output element (output axes global, flattened), in groups of `local`; the
  /// reduce axes, if any, a loop in each work-item.
  Items,
  /// One work-group per output element: the reduce axes, flattened, local (each work-item sums
  /// every local-th term), combined by a tree in local memory; work-item 0 stores.
  GroupReduce,
  /// A product (tile_operands.h): each work-group computes a tile_m x tile_n tile of (row, col) of
  /// one batch index, staging panels of tile_k along the reduce axis of the row and column
  /// operands in local memory; each work-item holds a reg_m x reg_n register tile (rows and
  /// columns local / reg apart).
  TiledProduct
};

struct GpuPlan {
  GpuKind kind = GpuKind::Items;
  int64_t groups = 0, local = 1;
  int64_t tile_m = 1, tile_n = 1, tile_k = 1, reg_m = 1, reg_n = 1;  // TiledProduct
  /// Bytes of local memory a work-group's panels take (TiledProduct; 0 otherwise).
  int64_t local_bytes = 0;
  /// DEBUG=3's words, e.g. "gpu tiled_product: GROUPS(1250) LOCAL(256) TILE(32,32,16) REG(2,2)".
  std::string str() const;
};

/// The local (shared) memory a work-group may take where the device allows more: CUDA's limit
/// on a block's static __shared__ arrays (48 KiB; more needs dynamic shared memory and an opt-in).
/// The opencl device takes the smaller of this and its own CL_DEVICE_LOCAL_MEM_SIZE, so that its
/// plans, tested on PoCL, are the ones cuda runs.
constexpr int64_t kGpuLocalBytes = 48 * 1024;

/// The plan of `k` in a dialect with work-items: a product (without nests or further outputs) as
/// a tiled product, another reduce over more than one term as a group reduce, anything else as
/// items. A tiled product whose panels (one per row and column operand: TileOperands) would take
/// more than `local_bytes` of local memory gets shallower panels (tile_k halved, down to 1), and
/// where even those do not fit, the plan of a reduce that is no product.
GpuPlan gpu_plan(const schedule::Kernel& k, int64_t local_bytes = kGpuLocalBytes);

/// The kernel's plain loops (no upcast, no unroll), and its nests' likewise.
LoopPlan plain_loop_plan(const schedule::Kernel& k);

/// The heuristic's plan for a (simplified) kernel on `target` (plan_heuristic.cpp): its vector
/// width, register count and cache sizes decide the tiles. Always legal.
KernelPlan plan(const schedule::Kernel& k, const Target& target);

}  // namespace ember::codegen

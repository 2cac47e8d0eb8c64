// The heuristic (docs/design.md principle 4): one plan per kernel, from its shape, its operands and
// the target's vector width, register count and cache sizes (kernel_plan.h's plan()).
#include "codegen/plan_heuristic.h"

#include <algorithm>
#include <cstdlib>

#include "codegen/loop_shapes.h"

namespace ember::codegen {

using schedule::Expr;
using schedule::Kernel;

namespace {

// What the product heuristics read of a product kernel and its target.
struct Product {
  const Kernel& k;
  const TileOperands& p;
  const Target& t;
  int64_t w, es, regs, n, m, kk, batch, ncols;
};

Product product(const Kernel& k, const TileOperands& p, const Target& t) {
  Product f{k, p, t, t.lanes(p.reduce->dtype), static_cast<int64_t>(element_size(p.reduce->dtype)),
            // Registers the tile may take: all but one (two with 32) for addresses and spills.
            t.vector_registers - (t.vector_registers >= 32 ? 2 : 1), k.full_shape[p.row],
            k.full_shape[p.col], k.full_shape[p.red], 1, static_cast<int64_t>(p.cols.size())};
  for (int d = 0; d < p.row; d++) f.batch *= k.full_shape[d];
  return f;
}

// The tiled reduce's choices so far (tile_plan's steps fill it in order).
struct TileDraft {
  int64_t tn = 1, nv = 1;  // register tile: rows x vectors
  bool bcast = false, wide_rows = false, pack = false;
  bool tile_panel = false;  // packed per column tile, columns outside (col_tile_panel)
  int64_t tm = 1, mpad = 1, tiles = 1;
  int64_t kc = 1;       // reduce block (kk: one block)
  int64_t per = 1;      // row tiles per unit of work
  int64_t cblocks = 1;  // column blocks
  bool split = false;
  bool short_cols = false;  // a short reduce's column blocks, rows outside (short_reduce_columns)
  bool rows_outer = false;  // an expansion's rows outside the columns (expansion_rows_outer)
};

// Register tile TN rows x NV vectors: one reduce step costs about max(FMAs, loads) / 2 + 1 cycles
// (two FMA and two load pipes, loop overhead); only real rows and columns count as work. TN*NV
// accumulators + NV column vectors + a broadcast must fit the vector registers (with slack), and
// TN <= 8 keeps the row pointers in general registers: e.g. 6x4 vectors of 16 floats in
// AVX-512's 32 registers, 6x2 of 8 floats in AVX2's 16 (BLIS's 6x16).
void register_tile(const Product& f, TileDraft& d) {
  double best = -1;
  for (int64_t r = 1; r <= 8; r++)
    for (int64_t v = 1; v <= 4; v++) {
      if (r * v + v + 1 > f.regs) continue;
      double rows = static_cast<double>(f.n) / static_cast<double>((f.n + r - 1) / r * r);
      double cols =
          static_cast<double>(f.m) / static_cast<double>((f.m + v * f.w - 1) / (v * f.w) * v * f.w);
      double score = rows * cols * static_cast<double>(r * v) /
                     (static_cast<double>(std::max(r * v, r + v)) / 2 + 1);
      if (!f.p.direct || f.m % (v * f.w)) score *= 0.97;  // packing costs a pass over the operand
      // Ties at a small batch go to more rows: each row tile reads the whole column operand.
      // Other ties go to more accumulators: the step's fixed costs (the loop, the prefetches)
      // spread over more multiply-adds. The weight gradient dz^T h (128 rows: 5 and 6 rows tie,
      // 130 against 132 padded), bench_panel_plans, 7 paired rounds, medians of B/A at avx512:
      // 6x4 0.95x the time of 5x4 at 1 thread, 0.96x at 2.
      const bool tie = score > best - 1e-9;
      if (score > best + 1e-9 || (tie && (f.n <= 64 ? r > d.tn : r * v > d.tn * d.nv)))
        best = score, d.tn = r, d.nv = v;
    }
}

// Without FMA (SSE2), a multiply-add is a multiply into a temporary and an add, and a row's
// broadcast a load and a shuffle: the model above does not describe that code. Measured there
// (Zen 3, kernel CPU time, one thread, against the 6x2 the model picks; both study shapes):
// 4 rows x 3 vectors 0.93-0.96x, 3x4 0.95-0.99x, 5x2 1.01-1.04x, 3x3 1.01-1.15x, 2x4 1.02-1.06x.
// 4x3 leaves no register for its third column vector, which GCC re-reads from L1 (the
// accumulators stay in registers). It wins with its columns padded and packed (128 -> 132), so
// it is taken where rows and columns fill it to within 5%, and where at least 128 rows amortise
// that pack (a small batch reads the columns in place: latency-bound); float only (double
// unmeasured).
// Only for a bare product (the value is the sum, stored as is; row sums beside it are fine): with
// an epilogue, the strips of 12 columns cost more than the tile saves (thread CPU time,
// bench_step_products: tanh(x W^T + b) 1.01x, (dz W)(1 - h^2) 1.07x the time of 6x2).
// Both give way to a broadcast panel (Pack(row, W): TileRowPanel) where the broadcast is not a
// plain load: the 6x2 tile then multiplies by row vectors loaded from the panel, no shuffle in
// the k loop (12 multiplies, 12 adds and 8 vector loads a step; SSE2's two-operand forms leave
// the registers for that in 6x2, not in 4x3). Generated kernels against the 4x3 and 6x2 above,
// kernel CPU time, one thread, alternated in one process (Zen 3, SSE2; the same sums in the same
// order, bit-identical results): (10000x128)@(128x128) 0.88-0.985x, x W^T 0.93x, tanh(x W^T + b)
// 0.92-0.95x, (dz W)(1 - h^2) 0.92x, the first layer's tanh (K = 8) 0.96x, the weight gradient
// (128x10000)^T @ (10000x128) 0.86x, with its bias sums 0.97x. The panel costs a shuffle and a
// store per element and row tile, paid back by every column tile after the first: so at least
// two column tiles, at any batch (64 rows x W^T: 1.27x -> 1.08x oneDNN's time; 4 rows x W in
// place: 0.69x -> 0.61x; kernel alone, one thread, paired); float only (double unmeasured).
void no_fma_tile(const Product& f, TileDraft& d) {
  const bool f32 = f.p.reduce->dtype == kFloat32;
  d.bcast = !f.t.broadcast_load && f.w > 1 && f32 && f.m >= 4 * f.w && !f.p.rows.empty();
  if (d.bcast || f.t.fma || f.w == 1 || !f32 || &*f.k.value != f.p.reduce || f.n < 128) return;
  double fill = static_cast<double>(f.n) / static_cast<double>((f.n + 3) / 4 * 4) *
                static_cast<double>(f.m) /
                static_cast<double>((f.m + 3 * f.w - 1) / (3 * f.w) * 3 * f.w);
  if (fill >= 0.95 && 4 * 3 + 2 <= f.regs) d.tn = 4, d.nv = 3, d.wide_rows = true;
}

// Lines of column tile `tm` (bytes) of every column operand read in place over `kc` steps of k
// that fall into the fullest set of L1: its index is the line's address bits below the 4 KiB
// page (virtually indexed, physically tagged: 64 sets of 64-byte lines, l1d / 4 KiB ways).
int64_t fullest_l1_set(const Product& f, int64_t kc, int64_t tm) {
  std::vector<int64_t> sets(64, 0);
  for (const Expr* e : f.p.cols) {
    const int64_t step = std::abs(e->view.strides[f.p.red]) * f.es;
    for (int64_t k = 0; k < kc; k++)
      for (int64_t b = k * step / 64; b <= (k * step + tm * f.es - 1) / 64; b++) sets[b % 64]++;
  }
  return *std::max_element(sets.begin(), sets.end());
}

// The column operand packed one column tile at a time, tile-major, the column tiles outside the
// row tiles (TileColPanel's per_tile; col_panel_per_tile): the tile's panel, K x TM contiguous,
// stays in L1 while the block's row tiles sweep past it (BLIS's packed B micro-panel), and each
// tile's pack prefetches the next (tile_prefetch.cpp). Where the operand read in place would not
// stay there: each step along k a page of its own (the panel spans K pages, past the L1 TLB's
// reach) and the tile's lines crowding some L1 sets past half their ways (the rest hold the row
// operand's and the output's lines), as a 1x1 convolution's pixels do (3136 columns, 12544-byte
// steps: 256 steps of a tile fall into 16 of the 64 sets, 16 lines each against 8 ways); or where
// the columns are packed anyway (a column count the tile does not divide) and the whole panel
// would leave L1. ResNet-50's r_64_3136_256 (1x1, 256 -> 64 at 56x56), bench_conv_paired, AVX2,
// 1 thread, Zen 3 loaded (load 6-15), alternating old/new: 0.90-0.94x the time (1.15-1.20x ->
// 1.10-1.15x oneDNN's). Not for shorter strides: the PPO step's dz W (512-byte steps, crowding 8
// sets) packed per tile ran 0.99-1.25x its in-place time in the same conditions.
// Only where K x TM fits half of L1 (one reduce block: with blocks of 256, 512 -> 128 at 28x28 ran
// 1.07x and the 7x7 ones 1.15x the time), with vectors, the tile's own rows to sweep (two row
// tiles or more), no broadcast panel nor no-FMA 4x3 tile (their panels are the block's rows,
// which columns outside re-read per column tile).
void col_tile_panel(const Product& f, TileDraft& d) {
  if (!f.p.direct || f.w == 1 || d.bcast || d.wide_rows || d.tiles < 2 ||
      f.kk * d.tm * f.es * f.ncols > f.t.l1d / 2)
    return;
  const int64_t ways = f.t.l1d / 4096;
  int64_t step = 0;  // the widest stride along k of a column operand, bytes
  for (const Expr* e : f.p.cols) step = std::max(step, std::abs(e->view.strides[f.p.red]) * f.es);
  const bool whole_out = f.kk * d.mpad * f.es * f.ncols > f.t.l1d / 2;
  if ((d.pack && whole_out) || (step >= 4096 && fullest_l1_set(f, f.kk, d.tm) > ways / 2))
    d.tile_panel = d.pack = true;
}

// Whether rows outside would stream the column tiles from L2 faster than it delivers: each k step
// reads a column tile (TM floats per column operand) for TN x NV multiply-adds at two a cycle, and
// more than 16 bytes a cycle of that comes from L2 at less than the FMAs' pace. AVX-512's 6x4 tile
// needs 21 (256 bytes a step, 12 cycles); AVX2's 6x2 needs 11 and SSE2's 6x2 8, so they keep the
// rules below as measured there.
bool streams_columns(const Product& f, const TileDraft& d) {
  return f.t.fma && f.w > 1 && !d.bcast && d.tm * f.es * f.ncols * 2 > 16 * d.tn * d.nv;
}

// Where the column tiles would outrun L2 (streams_columns) and the reduce is blocked already, the
// blocks shrink (a power of two, 32 to 256) until one packed column tile's panel fits half of L1,
// and the column tiles go outside (cols_outer): each tile's panel is then read from L1 by every row
// tile of the block, and only the row tiles' few values per k step come from L2. Intel Xeon with
// AMX (AVX-512, 48 KiB L1, 2 MiB L2), bench_panel_plans, kernel CPU time at 1 thread / least wall
// time at 2, 7 paired rounds, medians of B/A against 256-deep blocks with the rows outside:
// ResNet's 3x3 convolutions at batch 1 cols^T W^T 196 x 256 x 2304 0.79x / 0.73x (with
// column_units' blocks below), 49 x 512 x 4608 0.87x / 0.87x, 784 x 128 x 1152 0.94x / 0.95x, at
// batch 8 392 x 512 x 4608 0.87x / 0.86x; the weight gradient dz^T h 129 x 127 x 10001 0.96x /
// 0.95x. The schedule search (BEAM=2) had found such plans in ResNet-50 (196 x 256 x 2304:
// 128-deep, columns outside, 1.28x the heuristic's speed). A reduce that is one block (the study's
// K = 128) keeps it: with 64-deep blocks there, training 80,000 transitions took 1.04x and 1.06x
// the wall time (two alternated pairs).
void tile_panel_block(const Product& f, TileDraft& d) {
  if (!streams_columns(f, d) || !d.pack || d.kc == f.kk || d.mpad < 2 * d.tm) return;
  const int64_t fit = f.t.l1d / 2 / (d.tm * f.es * f.ncols);
  int64_t b = 256;
  while (b > 32 && b > fit) b /= 2;
  if (f.kk > b) d.kc = std::min(d.kc, b);
}

// One reduce block when the whole reduce fits; otherwise blocks whose panels stay in a quarter of
// L2.
// Read in place, the columns of a reduce block are re-read by every row tile (rows outside): the
// block shrinks (a power of two, 32 to 256) until that panel fits two thirds of L1, so the
// re-reads hit L1 instead of L2. The accumulators' reload per block (2 TN NV memory operations)
// stays small against KC steps of TN NV multiply-adds. The (128x10000)^T @ (10000x128) weight
// gradient with its bias row sums, 48 KiB L1: 64 instead of 256, 0.93-0.97x the kernel's time on
// AVX-512 and AVX2, 0.95-0.98x on SSE2 (paired, one thread). The block partials are added in a
// different grouping, so the sums change in their last bits.
// The no-FMA 4x3 tile's packed panel too: the weight gradient at SSE2 with the pack's 248-deep
// blocks ran 1.09x the time of 6x2, with 32-deep ones 0.94-0.96x.
void reduce_block(const Product& f, TileDraft& d) {
  if (d.tile_panel) {  // one block (col_tile_panel)
    d.kc = f.kk;
    return;
  }
  int64_t cap = d.pack ? std::max<int64_t>(16, f.t.l2 / 4 / (d.mpad * f.es * f.ncols)) : 512;
  d.kc = f.kk <= cap ? f.kk : std::min<int64_t>(cap, 256);
  if ((!d.pack || d.wide_rows) && d.kc < f.kk && d.tiles > 1) {
    int64_t fit_l1 = f.t.l1d * 2 / 3 / (d.mpad * f.es * f.ncols), b = 256;
    while (b > 32 && b > fit_l1) b /= 2;
    d.kc = std::min(d.kc, b);
  }
  tile_panel_block(f, d);
}

// Units of work for a product of `work` multiply-adds cut to feed the pool: a power of two up to
// 8 (for two or four threads), each of at least 2^19.
int64_t fan_out(int64_t work) {
  int64_t u = 1;
  while (u < 8 && (2 * u) << 19 <= work) u *= 2;
  return u;
}

// Row blocks (the thread pool's unit). Blocked reduce: few, large blocks (each re-reads the column
// operand), accumulators within an eighth of L2. Single block: ~16 tiles per unit of work.
// A product of a few row blocks (e.g. 64 rows: one block of 11 tiles) gives the pool too few
// units, so it is cut into 2, 4 or 8 (a power of two, for two or four threads) of at least 2^19
// multiply-adds, twice the runtime's minimum parallel work: the units share one packed copy of the
// columns where every unit reads the same panel (kernel_plan.cpp's col_panel_shared), else each
// packs its own. (64x128) @ W^T at AVX2, 2 threads, paired (bench_matmul_paired 2 5 1000): one unit
// 1.65-2.09x oneDNN's time, two units 1.09-1.31x.
// The units are row blocks or column blocks, whichever leaves the largest unit least work: its
// tiles, and with a packed column operand its share of the pack (each unit packs the columns it
// reads; ~8 multiply-adds' time an element, measured: 3 us of the 26 us of the 64-row x W^T at
// AVX2, one thread). 64 rows x W^T (11 row tiles, 8 column tiles): row blocks of 6 and 5 tiles
// each pack all of W^T; column blocks of 4 tiles each pack half of it.
void units_of_work(const Product& f, TileDraft& d) {
  int64_t fit = std::max<int64_t>(1, f.t.l2 / 8 / (d.tn * d.mpad * f.es));
  d.per = d.kc < f.kk ? std::min<int64_t>((d.tiles + 1) / 2, fit) : std::min<int64_t>(d.tiles, 16);
  const int64_t work = f.batch * f.n * f.m * f.kk, blocks = (d.tiles + d.per - 1) / d.per;
  const int64_t ctiles = d.mpad / d.tm;
  if (d.kc != f.kk || f.batch * blocks >= 8 || work < (int64_t{1} << 20)) return;
  const int64_t u = fan_out(work);
  const int64_t b = std::max(blocks, (u + f.batch - 1) / f.batch);  // units per batch index
  auto cost = [&](int64_t rb, int64_t cb) {
    const int64_t ct = (ctiles + cb - 1) / cb;
    return (d.tiles + rb - 1) / rb * ct * d.tn * d.tm * f.kk + (d.pack ? 8 * f.kk * ct * d.tm : 0);
  };
  int64_t best_rb = std::min(d.tiles, b), best_cb = 1;
  for (int64_t cb = 2; cb * blocks <= b && cb <= ctiles && f.p.sums.empty(); cb *= 2) {
    const int64_t rb = std::min(d.tiles, b / cb);
    if (cost(rb, cb) < cost(best_rb, best_cb)) best_rb = rb, best_cb = cb;
  }
  d.per = (d.tiles + best_rb - 1) / best_rb;  // as many tiles or fewer, in even blocks
  d.cblocks = best_cb;
}

// Split-K for tall-skinny products (a weight gradient: 128x128 outputs, K = 10,000): when the row
// blocks give the pool fewer than 8 units, slices of the reduce axis (of equal depth, at least
// 1024) make up the rest. The slice count depends on the shape only, never on the threads, so the
// sum's order does not either. Small products stay whole. The slices then give the parallelism,
// so the rows are one block where its accumulators, a row panel and a column panel fit a quarter
// of L2: every row block re-reads the whole column operand, from memory when K is long (two
// blocks cost the 128x128 weight gradient ~20% with cold caches). 128x128 at AVX2 takes ~100 KiB;
// Zen 3's 512 KiB L2 split it in two under the rule before (the accumulators alone within an
// eighth of L2), at 1.1-1.5x the CPU time of one block (1 thread, cold).
void split_k_rows(const Product& f, TileDraft& d) {
  d.split = d.kc < f.kk && f.batch * ((d.tiles + d.per - 1) / d.per) < 8 &&
            f.n * f.m * f.kk >= (int64_t{1} << 21) && f.kk / 1024 >= 2;
  if (d.split &&
      (d.tiles * d.tn * d.mpad + d.tiles * d.tn * d.kc + d.kc * d.mpad) * f.es <= f.t.l2 / 4)
    d.per = d.tiles;
}

RowPanel row_panel(const Product& f, const TileDraft& d);
bool cols_outer(const Product& f, const TileDraft& d);

// A blocked reduce that the rules above cut into rb row blocks, each packing the whole column
// operand, where cb column blocks would re-read less of the row operand, per k step
// (cb - 1) n < (rb - 1) m: a deep layer's convolution at batch 1 (ResNet-18's 7x7 maps: 49 rows x
// 512 columns, K = 4608, a 9.4 MB weight, in 2 row blocks x 4 split-K slices). The rows become one
// block and the units column blocks (up to 4, of at least 2^19 multiply-adds: a power of two, for
// two or four threads; more where a block's accumulators would not fit a quarter of L2), each
// packing its share of the columns once; no split-K. The sums and their order are those of one
// block. cols^T W^T at AVX2, the heuristic's plans before and after (bench_panel_plans, Zen 3 at
// load 8-10, 21 paired rounds; 1 thread CPU time, 2 threads least wall time, medians): 49 x 512 x
// 4608 0.79x (1 thread), 0.67x (2 threads); 49 x 512 x 2304 0.87x, 0.84x; 196 x 256 x 2304 (4
// row blocks x 2 slices) 0.91x, 0.90x; 196 x 256 x 1152 (4 row blocks) 1.00x, 0.93x; at batch 8
// 392 x 512 x 4608 (14 row blocks of 30) 0.76x, 0.81x. Two or eight column blocks ran within the
// noise of four (0.99-1.07x), as did one row block in split-K slices. Packed column operands
// only: read in place, the row blocks pack nothing (BERT-mini's x W at batch 1, 64 x 256 x 1024 in
// 2 row blocks: 4 column blocks ran 1.09x the time at 1 thread, 1.05x at 2). Not with SSE2's
// broadcast panel, which sizes the row blocks itself (unmeasured there).
// Where tile_panel_block's shallow blocks let split-K keep the rows in one block, the split-K
// slices give way to column blocks too (no partials to sum; unpacked rows only, which no column
// block packs again): Xeon with AMX, AVX-512, 64-deep blocks, columns outside, against split-K
// (bench_panel_plans, 7 rounds, 1 / 2 threads): 49 x 512 x 4608 0.92x / 0.91x, 49 x 512 x 2304
// 0.94x / 0.97x, 196 x 256 x 2304 0.99x / 0.98x; a computed row operand ((2 dz - 1)^T h) ran
// 1.12x / 1.14x the time, its row panel packed again in each column block.
void column_units(const Product& f, TileDraft& d) {
  const int64_t ctiles = d.mpad / d.tm, npad = d.tiles * d.tn;
  const int64_t rb = (d.tiles + d.per - 1) / d.per;
  const bool split_block = rb == 1 && d.split && streams_columns(f, d) && ctiles > 1 &&
                           row_panel(f, d) == RowPanel::None;
  if (!d.pack || d.kc == f.kk || (rb < 2 && !split_block) || !f.p.sums.empty() || d.bcast) return;
  auto block_bytes = [&](int64_t cb) { return npad * ((ctiles + cb - 1) / cb) * d.tm * f.es; };
  int64_t cb = 1;
  while (cb < 4 && 2 * cb <= ctiles && f.n * f.m * f.kk / (2 * cb) >= (int64_t{1} << 19)) cb *= 2;
  while (cb < ctiles && block_bytes(cb) > f.t.l2 / 4) cb *= 2;
  cb = (ctiles + (ctiles + cb - 1) / cb - 1) / ((ctiles + cb - 1) / cb);  // blocks of whole tiles
  if (block_bytes(cb) > f.t.l2 / 4 || (!split_block && (cb - 1) * f.n >= (rb - 1) * f.m)) return;
  d.per = d.tiles, d.cblocks = cb, d.split = false;
}

// A short reduce (K up to 32 over one float column operand) over many columns: column blocks whose
// panel (K x block) fits half of L1, the rows outside within a block. Columns outside over the
// whole row range (cols_outer) wrote each column tile's 64 bytes into every output row, one line
// in each of 96 rows 50 KB apart (MobileNetV2's 16 -> 96 pointwise at 112x112): more streams
// than the prefetchers follow, each line's write-allocate a demand miss. In a block, each row
// tile writes runs of the block's width (512 B or more) and the block stays in L1 for every row.
// AVX2, Zen 3, one thread, kernel CPU time, bench_panel_plans (7-11 rounds, 5 runs, paired,
// loaded): 16 -> 96 at 112x112 batch 8 0.64-0.78x the time (11 -> 7.4-8.5 ms), batch 1 0.47-0.97x;
// 24 -> 144 at 56x56 batch 8 0.70-0.84x; MobileNetV3's 16 -> 72 at 56x56 batch 8 0.87-1.00x. Not
// with the column panel per tile (col_tile_panel: K = 27 over 12544 columns, L1 sets crowded):
// blocks read in place ran 1.06-1.12x its time, packed per block 1.16x.
// Column blocks that units_of_work cut for the threads stay where they are the finer ones (a 48 KiB
// L1 fits 4 column tiles of 48 at K = 27 where units_of_work cut 4 blocks of 22).
void short_reduce_columns(const Product& f, TileDraft& d) {
  if (d.tile_panel || d.bcast || d.split || d.kc != f.kk || !f.p.sums.empty()) return;
  const int64_t ctiles = d.mpad / d.tm;
  const int64_t fit = f.t.l1d / 2 / (f.kk * d.tm * f.es * f.ncols);  // tiles whose panel fits
  if (fit * d.tm * f.es < 512 || ctiles <= fit) return;
  d.cblocks = std::max(d.cblocks, (ctiles + fit - 1) / fit);
  d.per = d.tiles, d.short_cols = true;
}

// Rows outside for an expansion (a pointwise convolution to at least twice its input channels,
// ResNet's bottleneck conv3: 64 -> 256 at 56x56, 256 -> 1024 at 14x14) where columns outside
// (cols_outer) would write each column tile's 64 bytes into every row of the block, and the
// epilogue read its residual likewise: 66-96 streams, each line's write-allocate a demand miss,
// over an output 4x the input. Rows outside write (and read) runs of the block's width; the
// block's column panel is re-read by each row tile, so the blocks keep it within a quarter of L2.
// Needs 8 column tiles or more (shorter rows are one run either way) and the row operand (the
// weight) read in place along k: a transposed one (x^T W^T) keeps its row panel. Packed columns
// (a column count the tile does not divide) are packed per block, not per column tile. AVX2,
// Zen 3, one thread, kernel CPU time with the bias, residual and ReLU epilogue, bench_panel_plans
// (9-15 rounds, least of 7 launches, loaded at 3-5), per-process medians of B/A: 256x3136x64
// 0.73-0.89x, batch 8 0.74-0.86x; 1024x196x256 0.66-0.98x, batch 8 0.69-0.77x. 64 -> 64 at
// 56x56 ran within the noise. bench_conv_paired (bias only, CPU time, load 12-13), ember / oneDNN
// before -> after: 64 -> 256 at 56x56 1.65-1.74 -> 1.64-1.69, batch 8 1.60-1.62 -> 1.53-1.57;
// 256 -> 1024 at 14x14 1.84-2.08 -> 1.69-1.80, batch 8 1.79-2.35 -> 1.36-1.40.
void expansion_rows_outer(const Product& f, TileDraft& d) {
  const int64_t ctiles = d.mpad / d.tm;
  const int64_t per_tile = f.kk * d.tm * f.es * f.ncols;  // one column tile's panel
  bool rows_along_k = f.p.rows_direct;
  for (const Expr* r : f.p.rows)
    rows_along_k = rows_along_k && r->kind == Expr::Kind::Load && r->view.strides[f.p.red] == 1;
  if (!rows_along_k || d.bcast || d.split || d.short_cols || d.kc != f.kk || !f.p.sums.empty() ||
      f.n < 2 * f.kk || ctiles < 8 || per_tile > f.t.l1d / 2 || per_tile * ctiles <= f.t.l1d / 2)
    return;
  d.rows_outer = true, d.tile_panel = false;
  const int64_t fit = std::max<int64_t>(1, f.t.l2 / 4 / per_tile);
  d.cblocks = std::max(d.cblocks, (ctiles + fit - 1) / fit);
}

// The split-K slice depth (a whole number of reduce blocks) once the row blocks are known, or 0.
int64_t split_k_depth(const Product& f, const TileDraft& d, int64_t nc) {
  if (!d.split) return 0;
  const int64_t units = f.batch * ((f.n + nc - 1) / nc);
  const int64_t s = std::min((8 + units - 1) / units, f.kk / 1024);
  if (s < 2) return 0;
  const int64_t ks = ((f.kk + s - 1) / s + d.kc - 1) / d.kc * d.kc;
  return ks < f.kk ? ks : 0;
}

// The broadcast panel holds a row tile (or, for transposed rows, packed in their memory order,
// the block's row tiles) within a quarter of L2.
// For transposed rows, where fitting it would cut the row block to less than half, the reduce block
// halves first (down to 32): each smaller row block re-reads the columns, and packs them again
// where they are packed, where a shallower reduce block adds only the accumulators' reload. A
// milder cut stays (x^T W^T at 10001 x 128 x 128: 96-row blocks of the whole K = 128 cut to 60
// rows, against 64-deep blocks of 96 rows 0.99-1.10x; the 7x7 stem's 147 likewise). SSE2, kernel
// CPU time, one thread, paired (bench_panel_plans, 9 rounds, two runs, loaded), against 256-deep
// blocks cut to 30 rows: a 3x3 convolution's cols^T W^T (3136 rows, 64 columns, K = 576)
// 0.74-0.80x in 126-row blocks 64 deep, 0.81-0.82x at batch 8; 784 x 128 x 1152 0.87-0.92x; the
// weight gradient dz^T h at 129 x 127 x 10001 (h packed) 0.86-0.95x in 60-row blocks 128 deep.
void broadcast_panel(const Product& f, TileDraft& d) {
  if (!d.bcast) return;
  auto panel = [&] { return d.tn * d.kc * f.w * f.es * static_cast<int64_t>(f.p.rows.size()); };
  if (panel() > f.t.l2 / 4) {
    d.bcast = false;
    return;
  }
  if (!tile_rows_kmajor(f.p)) return;
  while (d.kc > 32 && 2 * (f.t.l2 / 4 / panel()) < d.per)
    d.kc = std::max<int64_t>(32, (d.kc + 1) / 2);
  d.per = std::min(d.per, f.t.l2 / 4 / panel());
}

// Row operands are packed when they are computed (e.g. a fused tanh or its derivative: once per
// element instead of once per column tile, in a vectorisable loop) or when their rows lie 2 KiB or
// more apart along the reduce axis: a page or more, TLB misses; at 2 KiB, a transposed operand's
// tile-major panel (TileRowPanel) keeps a tile's run along k in L1 where in place each step reads
// another line (ResNet's 28x28x128 3x3 convolution at batch 1, cols^T W^T with 3136-byte steps:
// 0.89x the kernel's time, AVX2, one thread, paired in bench_panel_plans). The PPO step's weight
// gradients (dz^T h, 512-byte steps) still read in place.
// Under AVX-512's column tiles outside a blocked reduce (tile_panel_block), rows less than a page
// apart are read in place: each column pass visits all the block's row tiles, so the panel kept
// nothing in L1 and cost a pass. bench_panel_plans, 5 rounds, 1 / 2 threads: 784 x 128 x 1152
// (3136-byte steps) 0.89x / 0.94x; at batch 8 (25 KiB steps) 1.08x / 0.99x; avx2 1.12x / 1.14x.
RowPanel row_panel(const Product& f, const TileDraft& d) {
  if (d.bcast) return RowPanel::Broadcast;
  bool far = false, page = false;
  for (auto* r : f.p.rows)
    if (r->kind == Expr::Kind::Load && std::abs(r->view.strides[f.p.red]) * f.es >= 2048) {
      far = true;
      page = page || std::abs(r->view.strides[f.p.red]) * f.es >= 4096;
    }
  if (far && !page && streams_columns(f, d) && d.kc < f.kk && cols_outer(f, d)) far = false;
  return (!f.p.rows_direct || far) && !f.p.rows.empty() ? RowPanel::Scalar : RowPanel::None;
}

// Column tiles outside when the whole reduce is one block and a column tile's panel (K x TM) fits
// half of L1 (e.g. 128 x 16 floats on AVX2: 8 KiB): it is then read from L1 by every row tile of
// the block instead of from L2.
// Not when the whole column operand fits there too (a short reduce: the first layer's K = 8): it
// stays in L1 either way, and rows outside write the output (and read the epilogue's operands) a
// whole row at a time instead of in strips of TM columns. The first layer's r_10000_128_8 at AVX2
// without its tanh: 0.77-0.79x the time (paired, one thread).
// Not with a broadcast panel: rows outside keep a row tile's panel in L1, where columns outside
// read the block's (96 rows, 192 KiB at SSE2) from L2 in every column tile: the forward product
// at 1.01-1.03x the 4x3 tile's time, against 0.88-0.95x with the rows outside.
// Where rows outside would stream the column tiles from L2 (streams_columns: AVX-512's 64-column
// tiles), also blocks' tiles that outgrow half of L1: read in place over one reduce block, each
// tile's lines are then re-read by the block's row tiles from L1 or L2, where rows outside read
// the whole block's columns per row tile. Xeon with AMX, bench_panel_plans, 7 paired rounds, 1 / 2
// threads, medians of B/A: W x at batch 1 with K = 256 (ResNet-50's 1x1 reductions at 56x56), 64
// rows 0.82x / 0.86x, 128 rows 0.96x / 0.98x, 64 rows at batch 8 0.50x / 0.59x; the 7x7 stem's W
// cols (K = 147) 0.79x / 0.82x. Short reduces keep their rows outside (K = 16 to 24 ran 1.17-1.41x
// the time with columns outside, ResNet's 64 -> 256 expansion 1.04x, 1.64x at batch 8).
// There a packed panel may fill 2/3 of L1: the study's x W^T (K = 128, 32 KiB panels) on a 48
// KiB L1 reads each from L1 for the block's row tiles, where rows outside alternated two from L2
// (bench_step_products, avx512: x W^T 2.06-2.11 -> 2.05 ms at 1 thread, 1.06 -> 1.03 ms at 2;
// tanh(x W^T + b) 2.51-2.58 -> 2.46 ms, 1.31 -> 1.23 ms). A 32 KiB L1 keeps rows outside.
bool cols_outer(const Product& f, const TileDraft& d) {
  if (d.tile_panel) return true;
  const bool streams = streams_columns(f, d);
  if (d.bcast || d.short_cols || d.rows_outer || d.kc * d.mpad * f.es * f.ncols <= f.t.l1d / 2)
    return false;
  if (streams && !d.pack && d.kc == f.kk) return true;
  const int64_t room = streams ? f.t.l1d * 2 / 3 : f.t.l1d / 2;
  return (d.kc == f.kk || (streams && d.pack)) && d.kc * d.tm * f.es * f.ncols <= room;
}

// The column vectors held in registers where the accumulators, they and a broadcast (and without
// FMA the product's temporary) fit. GCC 12 folded the 4x2 tile's two column loads into all eight
// FMAs at AVX2 (12 loads a step for 8 FMAs): (4x128)@(128x128)'s kernel took 0.67x the time held
// (one thread, the generated code alone, alternated), 0.68-0.70x against 0.84x oneDNN's time in
// bench_matmul_paired; the other study shapes and the step's products at AVX2 and SSE2 ran as
// before (paired, one thread). At AVX-512 (Zen 4, 4x4-vector tile) the kernel took 0.75x the time
// (1.6 -> 1.2 us); the 6x4-vector tiles of the step's products ran within 0.95-1.03x of their time
// without it (paired medians, one thread).
bool hold_columns(const Product& f, const TileDraft& d) {
  return f.w > 1 && d.tn * d.nv + d.nv * f.ncols + (f.t.fma ? 1 : 2) <= f.regs;
}

// A tile whose local buffers would not fit a thread's stack (KernelPlan::illegal; the panels are
// sized to the caches, not to the stack: a huge column count, or many rows of few columns beside
// a large L2): its row blocks halve, then its reduce blocks, until they fit. False where they
// never do.
bool fit_stack(const Kernel& k, const Target& t, TilePlan& tp) {
  const int64_t kk = k.full_shape[tp.red];
  while (!KernelPlan{tp}.legal(k, t)) {
    const int64_t kc = tp.block_k ? tp.block_k : kk;
    if (tp.block_rows > tp.tile_rows)
      tp.block_rows = std::max(tp.tile_rows, tp.block_rows / tp.tile_rows / 2 * tp.tile_rows);
    else if (kc > 16 && !tp.block_cols)
      tp.block_k = kc / 2;
    else
      return false;
  }
  return true;
}

// A dot product whose batch is one row block (a classifier head at batch 8: 8 x 1000 x 1280) ran on
// one thread: its units are then column blocks of whole tiles, as many as units_of_work gives that
// work (fan_out). Each column's sum is the same in any block. A block's share of the weight stays
// in L2 for the row tiles after the first, so one thread gains too: MobileNetV2's and V3's heads
// at batch 8, kernel time, AVX2, Zen 3 at load 7-10, 3 alternating pairs: 0.69-0.90x on 1 thread,
// 0.72-0.86x on 2.
int64_t dot_column_blocks(const Product& f, int64_t tc, int64_t block_rows) {
  const int64_t work = f.batch * f.n * f.m * f.kk;
  if (f.batch * ((f.n + block_rows - 1) / block_rows) > 1 || work < (int64_t{1} << 20)) return 0;
  const int64_t u = fan_out(work);
  const int64_t cols = ((f.m + u - 1) / u + tc - 1) / tc * tc;
  return cols < f.m ? cols : 0;
}

}  // namespace

// The register-tiled reduce (matrix products): a TN x TM accumulator tile of the target's vectors
// sized to its register file, packing when the column operand is not contiguous or the tile does
// not divide the columns, reduce-axis blocks that keep operands in L2, and row blocks that give
// the thread pool enough, but not too small, pieces of work.
TilePlan tile_plan(const Kernel& k, const TileOperands& p, const Target& t) {
  const Product f = product(k, p, t);
  TileDraft d;
  register_tile(f, d);
  no_fma_tile(f, d);
  d.pack = !p.direct || f.m % (d.nv * f.w) != 0;
  d.tm = d.nv * f.w, d.mpad = (f.m + d.tm - 1) / d.tm * d.tm, d.tiles = (f.n + d.tn - 1) / d.tn;
  col_tile_panel(f, d);
  reduce_block(f, d);
  units_of_work(f, d);
  split_k_rows(f, d);
  column_units(f, d);
  broadcast_panel(f, d);
  short_reduce_columns(f, d);
  expansion_rows_outer(f, d);
  TilePlan tp;
  tp.row = p.row, tp.col = p.col, tp.red = p.red;
  tp.lanes = f.w, tp.tile_rows = d.tn, tp.tile_cols = d.tm;
  tp.pack_cols = d.pack;
  tp.row_panel = row_panel(f, d);
  tp.block_k = d.kc < f.kk ? d.kc : 0;
  tp.block_rows = d.tn * std::max<int64_t>(1, d.per);
  if (d.cblocks > 1) tp.block_cols = (d.mpad / d.tm + d.cblocks - 1) / d.cblocks * d.tm;
  tp.split_k = split_k_depth(f, d, tp.block_rows);
  tp.cols_outer = cols_outer(f, d);
  tp.hold = hold_columns(f, d);
  return tp;
}

// Small products (a batch of up to 32 rows, or fewer output columns than a vector has lanes)
// whose operands are contiguous along the reduce axis: nn::Linear's x @ W^T. The tiled reduce
// would pack W^T at every launch, a pass over the whole weight for a few rows of work; the
// dot-product kernel (render_dot.cpp) reads both operands in place, as vectors along the reduce
// axis, into a TN x TC tile of accumulators. A step costs about max(FMAs, loads) / 2 + 1 cycles;
// the lane sums of each group of `lanes` accumulators about 1.5 (lanes - 1). TN*TC accumulators, TN
// row vectors and a column vector fit the registers; larger TN first (each row tile reads the
// weight once).
std::optional<DotPlan> dot_plan(const Kernel& k, const TileOperands& p, const Target& t,
                                bool small_only) {
  // Where the packed tile overtakes it, x @ W^T with 128x128 W (kernel time, dot / tile): at 12
  // and 16 rows 0.6-0.9x, 24-32 rows 0.85-1.3x, 48 rows 1.3-1.6x, 64 rows 1.4-1.6x (AVX2, AVX-512).
  constexpr int64_t kSmallRows = 32;
  const Product f = product(k, p, t);
  const int64_t w = f.w, n = f.n, m = f.m, kk = f.kk;
  // Few output columns (a policy or value head: 2 outputs at any batch) leave most lanes of the
  // tiled reduce's column vectors idle; along the reduce axis they are all busy.
  const bool narrow = m < w;
  if ((small_only && ((n > kSmallRows && !narrow) || kk < w)) || !dot_fits(p) || !p.sums.empty())
    return std::nullopt;
  double steps = static_cast<double>(kk / w);
  int64_t tn = 1, tc = 1;
  double best = -1;
  for (int64_t r = std::min<int64_t>(8, n); r >= 1; r--)
    for (int64_t c = 1; c <= std::min<int64_t>(8, m); c++) {
      if (r * c + r + 1 > f.regs) continue;
      double rows = static_cast<double>(n) / static_cast<double>((n + r - 1) / r * r);
      double cols = static_cast<double>(m) / static_cast<double>((m + c - 1) / c * c);
      double sums = w > 1 ? static_cast<double>((r * c + w - 1) / w) * 1.5 * (w - 1) : 0;
      double cost = steps * (static_cast<double>(std::max(r * c, r + c)) / 2 + 1) + sums;
      double score = rows * cols * static_cast<double>(r * c) * steps / cost;
      if (score > best + 1e-9) best = score, tn = r, tc = c;
    }
  DotPlan d{p.row, p.col, p.red, w, tn, tc, 0, false};
  // A small batch is one row block (column blocks where its work is large: dot_column_blocks);
  // many rows of a narrow product split into blocks of at least 2^18 multiply-adds (the
  // runtime's minimum parallel work).
  d.block_rows = (n + tn - 1) / tn * tn;
  if (n > kSmallRows)
    d.block_rows =
        std::min(d.block_rows, tn * std::max<int64_t>(1, (int64_t{1} << 18) / (tn * m * kk)));
  d.block_cols = dot_column_blocks(f, tc, d.block_rows);
  // The step's row and column vectors held in registers where they fit beside the accumulators
  // (tile_plan's hold): GCC 12 re-read both operands of every FMA of the 4x2 dot tile at AVX2 (16
  // loads a step for 8 FMAs); held, x @ W^T at batch 4 took 0.77x the kernel's time (one thread,
  // the generated code alone, alternated); at AVX-512 (Zen 4) 0.8x (1.7 -> 1.35 us).
  const int64_t nr = static_cast<int64_t>(p.rows.size());
  d.hold = w > 1 && tn * tc + tn * nr + tc * f.ncols <= f.regs;
  return d;
}

KernelPlan plan(const Kernel& k, const Target& t) {
  const size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  if (k.reduce_axes.empty()) {  // elementwise: a plain inner loop
    LoopPlan l = plain_loops(k, t);
    cat_axis(k, l);
    return {l};
  }
  // A short reduce as an elementwise kernel (short_reduce, loop_shapes.h) where its vector loop has
  // at least a vector's worth of outputs. r_10000_128_2 (dz @ W (1 - h^2), K = 2) at AVX2, one
  // thread: 0.65-0.8x the register tile's time, the same sums in the same order.
  if (short_reduce(k) && k.full_shape[nglob - 1] >= t.lanes(k.value->dtype))
    return {plain_loops(k, t)};
  if (auto p = tile_operands(k)) {
    if (auto d = dot_plan(k, *p, t); d && KernelPlan{*d}.legal(k, t)) return {*d};
    if (TilePlan tp = tile_plan(k, *p, t); fit_stack(k, t, tp)) return {tp};
  }
  // Up to 256 columns over many rows: one unit of all the columns, the rows in slices
  // (column_split.h). r_128_10000 at AVX2, 2 threads: 0.63x the time of 2 units of 64.
  if (nglob == 1 && out_vector_axis(k))
    if (auto c = column_split_plan(k)) return {*c};
  return {loop_plan(k, t)};
}

}  // namespace ember::codegen

// The register-tiled reduce renderer: matrix products (and any float SUM reduce whose term combines
// a row-only part and a column-only part with + - *) as an explicit-SIMD micro-kernel with
// accumulators in registers, optional packing, reduce-axis cache blocking and row blocks for the
// thread pool, as a TilePlan (kernel_plan.h) lays it out. Internal to codegen.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c_expr.h"
#include "codegen/kernel_plan.h"
#include "codegen/render_c.h"
#include "codegen/tile_operands.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// Terms per accumulator before a floating sum's partial is set aside, in the generated reduce
/// kernels' blocked pairwise summation (render_c.cpp) and in the tiled products alike, so that
/// Tensor::sum's stated error bound covers matrix products too.
inline constexpr int64_t kSumBlock = 256;

/// The kernel for `plan` and the kernel's operands `p` (the plan's legality checked by the
/// caller: KernelPlan::illegal).
std::string render_tile(const schedule::Kernel& k, const TilePlan& plan, const TileOperands& p,
                        const std::string& fn);

/// What the row sums and the panels (below) read: the product's operands, their base pointers, the
/// element type and the target's vector of it.
class TileOperandTypes {
 protected:
  TileOperandTypes(const TileOperands& p, std::vector<std::string> base, const char* type,
                   const char* vector_type)
      : p_(p), base_(std::move(base)), T_(type), VT_(vector_type) {}
  const TileOperands& p_;
  std::vector<std::string> base_;
  const char* T_;
  const char* VT_;  // the target's vector of T_
};

/// The tiled reduce's row sums (TileOperands::sums; tile_row_sums.cpp), emitted into its code: per
/// unit of work, sums over the unit's reduce range for the rows of its block, each kSumBlock run
/// from zero and added in order; stored, or under split-K (`slices` > 1) left in the scratch
/// after the partial tiles ([sum][batch][slice][row]) and summed in slice order by the unit that
/// finishes the block. `vector_type` (`lanes` wide) holds strips of rows in registers.
class TileRowSums : TileOperandTypes {
 public:
  TileRowSums(const schedule::Kernel& k, const TileOperands& p, std::vector<std::string> base,
              const char* type, int64_t block_rows, int64_t slices, int64_t padded_rows,
              int64_t padded_cols, int64_t sum_block, const char* vector_type, int64_t lanes)
      : TileOperandTypes(p, std::move(base), type, vector_type),
        k_(k),
        W_(lanes),
        nc_(block_rows),
        s_(slices),
        npad_(padded_rows),
        mpad_(padded_cols),
        block_(sum_block) {}
  void declare(std::ostringstream& s) const;                      // the function's locals
  void zero(std::ostringstream& s) const;                         // at the start of a unit
  void accumulate(std::ostringstream& s, ExprEmitter& em) const;  // for k in [kc, ke)
  void store(std::ostringstream& s) const;                        // after the unit's reduce range
  void finish(std::ostringstream& s) const;  // split-K: the unit that completes the block

 private:
  std::string part(size_t j, const std::string& slice) const;
  bool vector_rows(const schedule::Expr& e) const;
  std::string out(size_t j) const;
  const schedule::Kernel& k_;
  int64_t W_;  // lanes of VT_
  int64_t nc_, s_, npad_, mpad_, block_;
};
/// The tiled reduce's row-operand panels (Pack on the row axis; tile_row_panel.cpp), apk{j}, for
/// k in [kc, ke). Pack(row, 1): every row operand evaluated once into a scalar panel of the
/// block's rows (computed operands: once per element instead of once per column tile; far-apart
/// rows). Pack(row, W), `broadcast`: each value stored as a whole vector (W copies), [row tile][k]
/// [row in the tile][lane], so that the micro-kernel multiplies by a vector loaded from the panel
/// instead of a scalar load and a shuffle per row and step (a target without a broadcast load):
/// the shuffle is paid once per element instead of once per column tile. `per_tile`: the panel
/// holds the current row tile, packed in the row loop (rows outside, read along k: it stays in L1
/// while the tile's columns sweep past); else the block's row tiles, packed before the tile loops.
class TileRowPanel : TileOperandTypes {
 public:
  struct Shape {
    int64_t tile_rows, block_rows, block_k, lanes;
    bool kmajor, broadcast, per_tile;
  };
  TileRowPanel(const schedule::Kernel& k, const TileOperands& p, std::vector<std::string> base,
               const char* type, const char* vector_type, Shape g)
      : TileOperandTypes(p, std::move(base), type, vector_type), k_(k), g_(g) {}
  void declare(std::ostringstream& s) const;                     // the function's locals
  void pack(std::ostringstream& s, ExprEmitter& em) const;       // in the kc loop, before tiles
  void pack_tile(std::ostringstream& s, ExprEmitter& em) const;  // in the row loop (per_tile)
  void tile_pointers(std::ostringstream& s, const std::string& ind) const;  // before the k loop
  /// The declaration of a{j}_{i}: row operand j at tile row i and k (a scalar, or a vector).
  std::string load(size_t j, int64_t i) const;

 private:
  std::string index(const std::string& n, const std::string& k) const;
  std::string tile_index(const std::string& n0, const std::string& i, const std::string& k) const;
  void copy(std::ostringstream& s, ExprEmitter& em, const std::string& ind,
            const std::string& at) const;
  void pack_tiles(std::ostringstream& s, ExprEmitter& em) const;
  void broadcast(std::ostringstream& s, ExprEmitter& em, bool tile) const;
  const schedule::Kernel& k_;
  Shape g_;
};

/// The tiled reduce's column-operand panels (Pack on the column axis; tile_col_panel.cpp), pk{j},
/// every column operand for k in [kc, ke), tile-major: each column tile's [block_k][tile_cols]
/// block contiguous (column m at k: pk{j}[m / TM * block_k * TM + (k - kc) * TM + m % TM]), so
/// that the micro-kernel's panel is one run of memory that stays in L1 while the row tiles sweep
/// past it (whatever the operand's stride along k), zero past the last column. The panel holds
/// the unit's columns [col_lo, col_hi) (all of them, padded to whole tiles, without column
/// blocks), packed before the tiles; with the reduce in one block (block_k == k) a call packs it
/// once per batch index and column block and reuses it in the call's later units (pk_t).
/// `per_tile` (col_panel_per_tile): the panel holds the current column tile only, packed in the
/// column loop (pack_tile; the columns outside, the row tiles inside). `blocks` > 1
/// (col_panel_whole_range): the panel holds every reduce block of the unit's range, block after
/// block, packed by the first of consecutive units with the same `key` (batch index, column
/// block, split-K slice) and reused by the others: the row blocks of a product share one pack of
/// its weights instead of one each.
class TileColPanel : TileOperandTypes {
 public:
  struct Shape {
    int64_t cols, padded_cols, block_k, k, lanes, col_blocks, tile_cols;
    std::string col_lo, col_hi;  // numbers without column blocks, else the unit's variables
    bool per_tile;
    int64_t blocks = 1;                 // reduce blocks the panel holds
    std::string k_lo = "0", k_hi, key;  // the unit's reduce range and its panel's key (code)
    std::string shared;                 // the launch's panel's scratch (col_panel_shared), or ""
  };
  TileColPanel(const TileOperands& p, std::vector<std::string> base, const char* type,
               const char* vector_type, Shape g)
      : TileOperandTypes(p, std::move(base), type, vector_type), g_(std::move(g)) {}
  void declare(std::ostringstream& s) const;                     // the function's locals
  void pack(std::ostringstream& s, ExprEmitter& em) const;       // in the kc loop, before tiles
  void pack_tile(std::ostringstream& s, ExprEmitter& em) const;  // in the column loop (per_tile)
  /// The address of column operand j's vector v of the tile at column m0, step k of the block kc.
  std::string load(size_t j, int64_t v) const;

 private:
  bool transposable() const;
  void transpose(std::ostringstream& s) const;
  void fill(std::ostringstream& s, ExprEmitter& em) const;
  void fill_shared(std::ostringstream& s, ExprEmitter& em) const;
  bool reused() const;
  std::string name(size_t j) const;
  std::string k_from() const;
  std::string k_to() const;
  std::string lo() const;
  std::string hi() const;
  std::string column(const std::string& m) const;
  std::string at(const std::string& m, const std::string& k) const;
  std::string lesser(const std::string& a, int64_t b) const;
  std::string greater(const std::string& a, int64_t b) const;
  Shape g_;
};

/// The tiled reduce's software prefetches (tile_prefetch.cpp), where a tile's next operands are
/// contiguous ranges that the hardware prefetcher does not fetch ahead: across reduce-axis cache
/// blocks, the next block's panels of the operands read in place (into L2); with the reduce in one
/// block, the next row tile's rows of the row operand, the output and the epilogue's operands (into
/// L1); with the columns outside, of the row operand, and the next tile's own lines of the
/// epilogue's operands; with a per-tile column panel, the next column tile's lines (into L2). One
/// line per stream per step of the k loop. A column operand packed block by block from a
/// transposed operand: each tile, before its k loop, its share of the next block's columns.
class TilePrefetch {
 public:
  struct Shape {
    int64_t tile_rows, tile_cols, block_k, k, slices;
    std::string k_end;  // the unit's reduce end (a variable or a number)
    bool pack_cols, pack_rows, cols_outer;
    std::string col_lo;  // the unit's first column (a variable or a number)
    bool col_tile;       // a per-tile column panel (TileColPanel's per_tile)
    std::string col_hi;  // the unit's padded column end (a variable or a number)
    bool whole;          // the column panel of the unit's whole range (col_panel_whole_range)
    int64_t block_rows;  // rows per unit of work
  };
  TilePrefetch(const schedule::Kernel& k, const TileOperands& p, std::vector<std::string> base,
               Shape g)
      : k_(k), p_(p), base_(std::move(base)), g_(std::move(g)) {}
  void blocks(std::ostringstream& s);                              // in the kc loop, after ke
  void tile(std::ostringstream& s, const std::string& ind);        // before a tile's accumulators
  void step(std::ostringstream& s, const std::string& ind) const;  // in the k loop

 private:
  void next_col_tile(std::ostringstream& s, const std::string& ind);
  void next_block_cols(std::ostringstream& s);
  void block_cols_share(std::ostringstream& s, const std::string& ind) const;
  struct Stream {
    const schedule::Expr* e;  // nullptr: the output
    bool write;
    int64_t bytes;
  };
  struct ColStream {  // with the columns outside: a tile's lines of each of its rows
    const schedule::Expr* e;
    int64_t row_bytes, lines;
  };
  const schedule::Kernel& k_;
  const TileOperands& p_;
  std::vector<std::string> base_;
  Shape g_;
  std::vector<const schedule::Expr*> panels_;
  std::vector<Stream> rows_;
  std::vector<ColStream> cols_;
  std::vector<std::pair<std::string, int64_t>> next_;  // the next column tile's row at k, bytes
  std::vector<const schedule::Expr*> packed_;          // next_block_cols' operands, pc{j}
};

/// Whether the tiled reduce's column panel (TileColPanel) holds the unit's whole reduce range
/// (or split-K slice) in reduce blocks, shared by the row blocks that run one after another: a
/// packed panel (not per tile, no column blocks) of more than one reduce block, more than one row
/// block, and local buffers that still fit the stack (kernel_plan.cpp).
bool col_panel_whole_range(const schedule::Kernel& k, const TilePlan& t, const TileOperands& p);

/// The elements of each column operand's panel where it is the launch's (in scratch after a
/// 64-byte state word, KernelPlan::scratch), else 0: a panel that every unit reads alike (one
/// reduce block, or col_panel_whole_range) in a product whose row count is read at run time (one
/// batch index, no column blocks, no split-K: KernelPlan::runtime_rows). The first unit to come
/// packs it for all; a unit that comes while it is being packed packs its own copy on its stack
/// (no thread waits). Before, each call packed its own, and at 2 threads the pool's ~10 calls of
/// ResNet-18's 3136 x 64 x 576 repacked the 64 x 576 weight ~10 times instead of once.
int64_t col_panel_shared(const schedule::Kernel& k, const TilePlan& t, const TileOperands& p);

/// What the tiled and the dot renderers (render_tile.cpp, render_dot.cpp) both read of a product:
/// its extents along row, col and red, its element type and the target's vector of it, and the
/// index expressions of the loop axes (x0, x1, ... for the batch axes, "0" for the rest).
class ProductRenderer {
 protected:
  ProductRenderer(const schedule::Kernel& k, const TileOperands& p);
  int64_t N_, M_, K_;
  bool f32_;
  const char* T_;
  const char* VT_;
  std::vector<std::string> base_;
};

/// The generated function's head: signature, typed buffer pointers (b0 the output), and a
/// compile-time check that `vector_type` is `vector_bytes` wide (`what` names the renderer).
void render_kernel_head(std::ostringstream& s, const std::string& fn, const schedule::Kernel& k,
                        const char* vector_type, int64_t vector_bytes, const char* what);
/// The batch axes' indices x0 .. x{p.row - 1} of the unit's batch number `bt` (a variable of the
/// generated code), row-major; nothing when the product has no batch axes.
void render_batch_index(std::ostringstream& s, const schedule::Kernel& k, const TileOperands& p);
/// The scalar store after a tile of sums (the tiled and the dot renderers): for each row i below
/// `rows` with n0 + i < n_hi and each column j < mv (variables of the generated code), the sum at
/// tl[i * stride + j] goes through the kernel's ops after the reduce into b0.
void render_scalar_store(std::ostringstream& s, const std::string& ind, const schedule::Kernel& k,
                         const TileOperands& p, ExprEmitter& em,
                         const std::vector<std::string>& base, const char* type, int64_t rows,
                         int64_t stride);

}  // namespace ember::codegen

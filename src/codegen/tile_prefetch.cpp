// The tiled reduce's software prefetches (render_tile.h's TilePrefetch). Measured with the
// generated kernels alone (1 thread, thread CPU time, in-process alternation with the kernel
// without them): the hardware prefetcher left the tiles waiting on L3 at each new panel or row
// tile.
#include <algorithm>
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Expr;

namespace {

// The loads of the ops after the reduce, once each.
void epilogue_loads(const Expr& e, const Expr* reduce, std::vector<const Expr*>& out) {
  if (&e == reduce) return;
  if (e.kind == Expr::Kind::Load) {
    if (std::find(out.begin(), out.end(), &e) == out.end()) out.push_back(&e);
    return;
  }
  for (auto& src : e.src) epilogue_loads(*src, reduce, out);
}

}  // namespace

// The operands read in place whose cache-block panel is one contiguous range of memory: rows of
// k, each `shape` elements long along the row or column axis (unit stride), k-stride equal to
// it (the weight gradient's dZ and X, K = 10,000). While a block's tiles run, their k loops
// prefetch the next block's panels into L2, one line per stream per step: without it every
// block's first tiles wait for its panels from L3 (which the hardware prefetcher, seeing
// 4-line runs 512 bytes apart, does not fetch ahead). The (128x10000)^T @ (10000x128) weight
// gradient with its bias row sums at avx512: 0.86-0.90x the kernel's time (paired, 1 thread).
void TilePrefetch::blocks(std::ostringstream& s) {
  panels_.clear();
  if (g_.block_k >= g_.k) return;
  std::vector<const Expr*> ops;
  if (!g_.pack_cols) ops.insert(ops.end(), p_.cols.begin(), p_.cols.end());
  if (!g_.pack_rows) ops.insert(ops.end(), p_.rows.begin(), p_.rows.end());
  for (const Expr* e : ops) {
    if (e->kind != Expr::Kind::Load || e->view.has_mask()) continue;
    const int axis =
        std::find(p_.cols.begin(), p_.cols.end(), e) != p_.cols.end() ? p_.col : p_.row;
    const auto& v = e->view;
    if (v.strides[axis] != 1 || v.strides[p_.red] != v.shape[axis] || v.shape[axis] < 2) continue;
    bool dup = false;
    for (const Expr* q : panels_)
      dup |= q->buf == e->buf && q->view.offset == v.offset && q->view.strides == v.strides;
    if (!dup) panels_.push_back(e);
  }
  const std::string next = "(ke + " + std::to_string(g_.block_k) + " < " + g_.k_end + " ? ke + " +
                           std::to_string(g_.block_k) + " : " + g_.k_end + ")";
  for (size_t j = 0; j < panels_.size(); j++) {
    const Expr& e = *panels_[j];
    std::vector<std::string> idx = base_;
    idx[p_.red] = "ke";
    const int64_t es = static_cast<int64_t>(element_size(e.dtype));
    s << "      const char* pf" << j << " = (const char*)(b" << e.buf << " + "
      << ExprEmitter::index(e.view, idx) << ");\n";
    s << "      const int64_t pfn" << j << " = (" << next << " - ke) * "
      << e.view.strides[p_.red] * es << ";\n";
  }
  if (!panels_.empty()) s << "      int64_t pfo = 0;\n";
  next_block_cols(s);
}

// A column operand packed block by block (not per tile, not the unit's whole range) from a
// transposed operand, each column a run along k (a convolution's weight [OC, C K] as W^T): the
// pack of each block read the unit's columns' runs of the next block_k elements (256 bytes at
// 64 deep), one run per column and page, which the hardware prefetcher does not fetch ahead, and
// waited on memory for each (the 9.4 MB weight of ResNet's 512x7x7 3x3 convolution, 49 x 512 x
// 4608: the block's pack 1.1 of 3.7 ms). Each tile of a block, before its k loop, prefetches its
// share of the next block's columns, so that they all arrive during the block: that kernel alone
// 0.83-0.87x the time; the convolution against oneDNN 1.25-1.29x -> 1.01-1.12x, the 256x14x14 one
// 1.16-1.25x -> 1.11-1.19x (bench_conv_paired, batch 1; avx2, 1 thread, CPU time, alternated,
// machine loaded). At batch 8 the weight's pack is amortised over 8x the rows: no change measured.
void TilePrefetch::next_block_cols(std::ostringstream& s) {
  packed_.clear();
  if (!g_.pack_cols || g_.col_tile || g_.whole || g_.block_k >= g_.k) return;
  for (const Expr* e : p_.cols) {
    const auto& v = e->view;
    if (e->kind != Expr::Kind::Load || v.has_mask() || v.strides[p_.red] != 1 ||
        v.strides[p_.col] == 0 || v.shape[p_.red] < 2)
      continue;
    bool dup = false;
    for (const Expr* q : packed_)
      dup |= q->buf == e->buf && q->view.offset == v.offset && q->view.strides == v.strides;
    if (!dup) packed_.push_back(e);
  }
  if (packed_.empty()) return;
  for (size_t j = 0; j < packed_.size(); j++) {
    std::vector<std::string> idx = base_;
    idx[p_.col] = g_.col_lo;
    idx[p_.red] = "ke";
    s << "      const char* pc" << j << " = (const char*)(b" << packed_[j]->buf << " + "
      << ExprEmitter::index(packed_[j]->view, idx) << ");\n";
  }
  const std::string m = std::to_string(k_.full_shape[p_.col]);
  s << "      const int64_t pcn = ke < " << g_.k_end << " ? (" << g_.col_hi << " < " << m << " ? "
    << g_.col_hi << " : " << m << ") - " << g_.col_lo << " : 0;\n";
  s << "      int64_t pci = 0;\n";
}

// The tile's share of next_block_cols' columns: the unit's tile_cols columns spread over its
// row tiles.
void TilePrefetch::block_cols_share(std::ostringstream& s, const std::string& ind) const {
  if (packed_.empty()) return;
  const int64_t row_tiles = (g_.block_rows + g_.tile_rows - 1) / g_.tile_rows;
  const int64_t share = (g_.tile_cols + row_tiles - 1) / row_tiles;
  s << ind << "for (int64_t c = 0; c < " << share << " && pci < pcn; c++, pci++) {\n";
  for (size_t j = 0; j < packed_.size(); j++) {
    const Expr& e = *packed_[j];
    const int64_t es = static_cast<int64_t>(element_size(e.dtype));
    const int64_t bytes = g_.block_k * es, stride = e.view.strides[p_.col] * es;
    for (int64_t b = 0; b < bytes + 63; b += 64)  // each line of the run, aligned or not
      s << ind << "  __builtin_prefetch(pc" << j << " + pci * " << stride << " + "
        << std::min(b, bytes - 1) << ", 0, 3);\n";
  }
  s << ind << "}\n";
}

// Products whose reduce is one block (nn::Linear's forward and input gradient): the row operand
// and the output (and the epilogue's operands laid out like it) have their rows one after the
// other, and a tile's rows are one contiguous range of each. The tile's k loop prefetches the
// next row tile's ranges, one line per stream per step, into L1 (for writing, the output): the
// rows arrive from L3 while the tile computes, instead of at its first k steps. With the rows
// outside, only the first column tile of a row tile prefetches. The generated kernels alone at
// avx512 (1 thread, paired, load 2.7-3.8): (10000x128)@(128x128) 0.95x the time (oneDNN's sgemm
// 0.91x; the kernel with its rows and output always hot in L1: 0.85x), the input gradient
// (dZ W)(1 - h^2) 0.94x, the forward tanh(x W^T + b) 0.98x. With the columns outside (avx2,
// sse2), the epilogue's operands: the input gradient's h, 1.20-1.29x the bare product's time
// before, 1.14x after (avx2, bench_step_products 1 thread, CPU time, load 6).
// A per-tile column panel (TileColPanel's per_tile) is packed from the operand in place, one line
// per k step at a stride along k (a 1x1 convolution's 12544 bytes): the pack waited on L3 for
// each line. The first row tile's k loop prefetches the next column tile's lines into L2, one row
// of it per step.
void TilePrefetch::next_col_tile(std::ostringstream& s, const std::string& ind) {
  next_.clear();
  if (!g_.col_tile) return;
  const int64_t m = k_.full_shape[p_.col];
  for (const Expr* e : p_.cols) {
    const int64_t es = static_cast<int64_t>(element_size(e->dtype));
    std::vector<std::string> idx = base_;
    idx[p_.col] = "(m0 + " + std::to_string(g_.tile_cols) + ")";
    idx[p_.red] = "k";
    next_.push_back({"(const char*)(b" + std::to_string(e->buf) + " + " +
                         ExprEmitter::index(e->view, idx) + ")",
                     g_.tile_cols * es});
  }
  s << ind << "const int pnx = n0 == n_lo && m0 + " << g_.tile_cols << " < " << m << ";\n";
}

void TilePrefetch::tile(std::ostringstream& s, const std::string& ind) {
  rows_.clear();
  cols_.clear();
  block_cols_share(s, ind);
  next_col_tile(s, ind);
  if (g_.block_k < g_.k || g_.slices > 1) return;
  // All rows in one tile (a batch of 4): there is no next tile, and the prefetch would take a
  // load slot at every step. (4x128)@(128x128), the kernel alone against oneDNN, 1 thread,
  // paired: avx2 1.16x -> 1.04x (medians of 7 runs), sse2 0.70x -> 0.67x.
  if (k_.full_shape[p_.row] <= g_.tile_rows) return;
  std::vector<std::pair<const Expr*, bool>> cand;  // (load or nullptr for the output, write)
  if (!g_.pack_rows)
    for (const Expr* e : p_.rows) cand.push_back({e, false});
  // With the columns outside, the output's lines are not prefetched: fetching the next tile's
  // lines of it (for writing: prefetcht0, as -march=x86-64-v3 has no prefetchw) made the avx2
  // products 1-4% slower (the generated kernels alone, paired, 1 thread).
  // Two column tiles at most (AVX-512's 64-column tiles over 128 columns) are prefetched as with
  // the rows outside: the first column tile's pass fetches the next row tile's whole rows, the
  // output's included, and the second pass finds them in L2. The study's forward x W^T with its
  // columns outside, the generated kernel alone (avx512, 1 thread, 8 alternated runs, medians):
  // 0.97x the time of the next tile's own lines in every pass without the output's.
  const bool whole_rows = !g_.cols_outer || k_.full_shape[p_.col] <= 2 * g_.tile_cols;
  if (whole_rows) cand.push_back({nullptr, true});
  std::vector<const Expr*> epi;
  epilogue_loads(*k_.value, p_.reduce, epi);
  for (const Expr* e : epi) cand.push_back({e, false});
  int64_t bytes = 0;
  std::ostringstream ptrs;
  auto same = [](const Expr* a, const Expr* b) {
    return a && b && a->buf == b->buf && a->view.offset == b->view.offset &&
           a->view.strides == b->view.strides;
  };
  for (auto [e, write] : cand) {
    if (e && e->kind != Expr::Kind::Load) continue;
    const ir::View& v = e ? e->view : k_.out_view;
    if (v.has_mask()) continue;
    // A tile's rows: contiguous along k (the row operand) or the columns, one after another.
    const bool row_op = std::find(p_.rows.begin(), p_.rows.end(), e) != p_.rows.end();
    const int inner = row_op ? p_.red : p_.col;
    if (v.strides[inner] != 1 || v.strides[p_.row] != v.shape[inner] || v.shape[inner] < 2)
      continue;
    const int64_t es = static_cast<int64_t>(element_size(e ? e->dtype : k_.buffers[0].dtype));
    bool dup = false;
    for (auto& q : rows_) dup |= same(q.e, e);
    for (auto& q : cols_) dup |= same(q.e, e);
    if (dup) continue;
    std::vector<std::string> idx = base_;
    idx[p_.row] = "pr_";
    const std::string type = write ? "char* " : "const char* ";
    const std::string cast = write ? "(char*)(b0" : "(const char*)(b" + std::to_string(e->buf);
    if (!whole_rows && !row_op) {
      // With the columns outside, a tile covers a few of its rows' columns: the epilogue
      // operands' other lines would be fetched once per column tile. Only the next tile's own
      // lines, one row per step.
      idx[p_.col] = "m0";
      ptrs << ind << type << "pw" << cols_.size() << " = " << cast << " + "
           << ExprEmitter::index(v, idx) << ");\n";
      cols_.push_back({e, v.strides[p_.row] * es, (g_.tile_cols * es + 63) / 64});
      continue;
    }
    ptrs << ind << type << "pq" << rows_.size() << " = " << cast << " + "
         << ExprEmitter::index(v, idx) << ");\n";
    rows_.push_back({e, write, g_.tile_rows * v.shape[inner] * es});
    bytes = std::max(bytes, g_.tile_rows * v.shape[inner] * es);
  }
  if (rows_.empty() && cols_.empty()) return;
  s << ind << "const int64_t pr_ = n0 + " << g_.tile_rows << " < n_hi ? n0 + " << g_.tile_rows
    << " : n0;\n";
  s << ptrs.str();
  if (!rows_.empty())
    s << ind << "int64_t pqo = "
      << (whole_rows ? "m0 == " + g_.col_lo + " ? 0 : " + std::to_string(bytes) : "0") << ";\n";
  if (!cols_.empty()) s << ind << "int64_t pwi = 0;\n";
}

void TilePrefetch::step(std::ostringstream& s, const std::string& ind) const {
  if (!next_.empty()) {
    s << ind << "if (pnx) {\n";
    for (const auto& [at, bytes] : next_)
      for (int64_t b = 0; b < bytes + 63; b += 64)  // each line of the row, aligned or not
        s << ind << "  __builtin_prefetch(" << at << " + " << std::min(b, bytes - 1)
          << ", 0, 2);\n";
    s << ind << "}\n";
  }
  for (size_t j = 0; j < panels_.size(); j++)
    s << ind << "if (pfo < pfn" << j << ") __builtin_prefetch(pf" << j << " + pfo, 0, 2);\n";
  if (!panels_.empty()) s << ind << "pfo += 64;\n";
  for (size_t j = 0; j < rows_.size(); j++)
    s << ind << "if (pqo < " << rows_[j].bytes << ") __builtin_prefetch(pq" << j << " + pqo, "
      << (rows_[j].write ? 1 : 0) << ", 3);\n";
  if (!rows_.empty()) s << ind << "pqo += 64;\n";
  if (cols_.empty()) return;
  s << ind << "if (pwi < " << g_.tile_rows << ") {\n";
  for (size_t j = 0; j < cols_.size(); j++)
    for (int64_t l = 0; l < cols_[j].lines; l++)
      s << ind << "  __builtin_prefetch(pw" << j << " + pwi * " << cols_[j].row_bytes << " + "
        << l * 64 << ", 0, 3);\n";
  s << ind << "}\n" << ind << "pwi++;\n";
}

}  // namespace ember::codegen

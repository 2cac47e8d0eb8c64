// The tiled reduce's row-operand panels (TileRowPanel in render_tile.h): Pack on the row axis.
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

void TileRowPanel::declare(std::ostringstream& s) const {
  const int64_t rows = g_.broadcast ? (g_.per_tile ? g_.tile_rows : g_.block_rows) : g_.block_rows;
  for (size_t j = 0; j < p_.rows.size(); j++)
    s << "  " << T_ << " apk" << j << "[" << rows * g_.block_k * (g_.broadcast ? g_.lanes : 1)
      << "] __attribute__((aligned(64)));\n";
}

// The scalar panel of a row operand contiguous along the rows (transposed: a convolution's
// channel-major columns) is [row tile][k][row in the tile], so that a tile's k loop reads one
// contiguous run of 4 * tile_rows bytes a step; the operand's own order [k][n] put each step on
// another line (4 * block_rows bytes on), and a tile's lines did not stay in L1 across its column
// tiles. Else [n][k].
std::string TileRowPanel::index(const std::string& n, const std::string& k) const {
  if (!g_.kmajor)
    return "(" + n + " - n_lo) * " + std::to_string(g_.block_k) + " + (" + k + " - kc)";
  const std::string tn = std::to_string(g_.tile_rows), r = "(" + n + " - n_lo)";
  return r + " / " + tn + " * " + std::to_string(g_.tile_rows * g_.block_k) + " + (" + k +
         " - kc) * " + tn + " + " + r + " % " + tn;
}

// Row n0 + i of a tile (n0 - n_lo a multiple of tile_rows) at k.
std::string TileRowPanel::tile_index(const std::string& n0, const std::string& i,
                                     const std::string& k) const {
  if (!g_.kmajor) return index("(" + n0 + " + " + i + ")", k);
  return "(" + n0 + " - n_lo) * " + std::to_string(g_.block_k) + " + (" + k + " - kc) * " +
         std::to_string(g_.tile_rows) + " + " + i;
}

// apk{j}[at] = row operand j at (n, k), for each j: the body of a pack loop.
void TileRowPanel::copy(std::ostringstream& s, ExprEmitter& em, const std::string& ind,
                        const std::string& at) const {
  std::vector<std::string> idx = base_;
  idx[p_.row] = "n";
  idx[p_.red] = "k";
  ExprEmitter::Memo memo;
  for (size_t j = 0; j < p_.rows.size(); j++) {
    std::string v = em.emit(*p_.rows[j], s, ind, memo, idx);
    s << ind << "apk" << j << "[" << at << "] = " << v << ";\n";
  }
}

// The tile-major panel of a transposed operand, whole tiles in steps of 8 k: each step reads 8
// runs of a tile's rows and writes 8 * tile_rows contiguous values (fixed trip counts, which GCC
// unrolls). Step by step, k outside and the tiles inside, the copy ran at a third of the speed of
// a plain [k][n] copy (one 4 * tile_rows-byte store stream per tile); in steps of 8 as fast (a
// 252 x 256 block of a 3x3 convolution's columns, Zen 3, AVX2).
void TileRowPanel::pack_tiles(std::ostringstream& s, ExprEmitter& em) const {
  const std::string tn = std::to_string(g_.tile_rows);
  s << "      const int64_t n_full = n_lo + (n_hi - n_lo) / " << tn << " * " << tn
    << ", k8 = kc + (ke - kc) / 8 * 8;\n";
  const std::string at = tile_index("n0", "i", "k");
  for (int pass = 0; pass < 2; pass++) {
    s << (pass == 0 ? "      for (int64_t kb = kc; kb < k8; kb += 8)\n"
                    : "      for (int64_t kb = k8; kb < ke; kb += 8)\n");
    s << "        for (int64_t n0 = n_lo; n0 < n_full; n0 += " << tn << ")\n";
    s << (pass == 0 ? "        for (int64_t k = kb; k < kb + 8; k++)\n"
                    : "        for (int64_t k = kb; k < ke; k++)\n");
    s << "        for (int64_t i = 0; i < " << tn << "; i++) {\n";
    s << "          const int64_t n = n0 + i;\n";
    copy(s, em, "          ", at);
    s << "        }\n";
  }
  s << "      for (int64_t n = n_full; n < n_hi; n++)\n";
  s << "        for (int64_t k = kc; k < ke; k++) {\n";
  copy(s, em, "          ", index("n", "k"));
  s << "        }\n";
}

void TileRowPanel::pack(std::ostringstream& s, ExprEmitter& em) const {
  if (g_.broadcast) {
    if (!g_.per_tile) broadcast(s, em, false);
    return;
  }
  // Rows of the last tile past n_hi are zero.
  const std::string tn = std::to_string(g_.tile_rows);
  const std::string n_end =
      "n_lo + (n_hi - n_lo + " + std::to_string(g_.tile_rows - 1) + ") / " + tn + " * " + tn;
  if (g_.kmajor) {
    pack_tiles(s, em);
  } else {
    s << "      for (int64_t n = n_lo; n < n_hi; n++)\n";
    s << "        for (int64_t k = kc; k < ke; k++) {\n";
    copy(s, em, "          ", index("n", "k"));
    s << "        }\n";
  }
  s << "      for (int64_t n = n_hi; n < " << n_end << "; n++)\n";
  s << "        for (int64_t k = kc; k < ke; k++) {\n";
  for (size_t j = 0; j < p_.rows.size(); j++)
    s << "          apk" << j << "[" << index("n", "k") << "] = 0;\n";
  s << "        }\n";
}

void TileRowPanel::pack_tile(std::ostringstream& s, ExprEmitter& em) const {
  if (g_.broadcast && g_.per_tile) broadcast(s, em, true);
}

// The broadcast panel: [row tile][k][row in the tile][lane]. A transposed operand (rows
// contiguous) is walked k outside, in its memory order. The last tile's rows past n_hi repeat row
// n_hi - 1 (as the tile's r{i} do; never stored).
void TileRowPanel::broadcast(std::ostringstream& s, ExprEmitter& em, bool tile) const {
  const int64_t tn = g_.tile_rows, w = g_.lanes;
  const std::string tiles =
      "for (int64_t n0 = n_lo; n0 < n_hi; n0 += " + std::to_string(tn) + ") {\n";
  if (!tile) s << "      " << (g_.kmajor ? "for (int64_t k = kc; k < ke; k++) {\n" : tiles);
  if (!tile && g_.kmajor) s << "      " << tiles;
  for (int64_t i = 0; i < tn; i++)
    s << "        const int64_t r" << i << " = n0 + " << i << " < n_hi ? n0 + " << i
      << " : n_hi - 1;\n";
  s << "        const int64_t ao = "
    << (tile ? "0" : "(n0 - n_lo) * " + std::to_string(g_.block_k * w)) << ";\n";
  if (tile || !g_.kmajor) s << "        for (int64_t k = kc; k < ke; k++) {\n";
  const std::string ind = "          ";
  const char* store = std::string(T_) == "float" ? "ember_stf(" : "ember_std(";
  for (int64_t i = 0; i < tn; i++) {
    std::vector<std::string> idx = base_;
    idx[p_.row] = "r" + std::to_string(i);
    idx[p_.red] = "k";
    ExprEmitter::Memo memo;
    for (size_t j = 0; j < p_.rows.size(); j++) {
      std::string v = em.emit(*p_.rows[j], s, ind, memo, idx), lanes;
      for (int64_t l = 0; l < w; l++) lanes += (l ? ", " : "") + v;
      s << ind << store << "apk" << j << " + ao + (k - kc) * " << tn * w << " + " << i * w << ", ("
        << VT_ << "){" << lanes << "});\n";
    }
  }
  s << (tile ? "        }\n" : "        }\n      }\n");
}

void TileRowPanel::tile_pointers(std::ostringstream& s, const std::string& ind) const {
  if (!g_.broadcast) return;
  for (size_t j = 0; j < p_.rows.size(); j++)
    s << ind << "const " << T_ << "* restrict at" << j << " = apk" << j
      << (g_.per_tile ? "" : " + (n0 - n_lo) * " + std::to_string(g_.block_k * g_.lanes)) << ";\n";
}

std::string TileRowPanel::load(size_t j, int64_t i) const {
  const std::string name = "a" + std::to_string(j) + "_" + std::to_string(i);
  if (g_.broadcast)
    return "const " + std::string(VT_) + " " + name + " = " +
           (std::string(T_) == "float" ? "ember_ldf(" : "ember_ldd(") + "at" + std::to_string(j) +
           " + (k - kc) * " + std::to_string(g_.tile_rows * g_.lanes) + " + " +
           std::to_string(i * g_.lanes) + ");\n";
  return "const " + std::string(T_) + " " + name + " = apk" + std::to_string(j) + "[" +
         tile_index("n0", std::to_string(i), "k") + "];\n";
}

}  // namespace ember::codegen

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

// The scalar panel follows the operand's memory order: [k][n] when it is contiguous along the
// rows (a transposed operand), else [n][k].
std::string TileRowPanel::index(const std::string& n, const std::string& k) const {
  if (g_.kmajor)
    return "(" + k + " - kc) * " + std::to_string(g_.block_rows) + " + (" + n + " - n_lo)";
  return "(" + n + " - n_lo) * " + std::to_string(g_.block_k) + " + (" + k + " - kc)";
}

void TileRowPanel::pack(std::ostringstream& s, ExprEmitter& em) const {
  if (g_.broadcast) {
    if (!g_.per_tile) broadcast(s, em, false);
    return;
  }
  // Rows of the last tile past n_hi are zero; the loop walks the panel in order.
  const std::string tn = std::to_string(g_.tile_rows);
  const std::string n_end =
      "n_lo + (n_hi - n_lo + " + std::to_string(g_.tile_rows - 1) + ") / " + tn + " * " + tn;
  std::string outer = g_.kmajor ? "k = kc; k < ke; k++" : "n = n_lo; n < n_hi; n++";
  std::string inner = g_.kmajor ? "n = n_lo; n < n_hi; n++" : "k = kc; k < ke; k++";
  s << "      for (int64_t " << outer << ")\n        for (int64_t " << inner << ") {\n";
  std::vector<std::string> idx = base_;
  idx[p_.row] = "n";
  idx[p_.red] = "k";
  ExprEmitter::Memo memo;
  for (size_t j = 0; j < p_.rows.size(); j++) {
    std::string v = em.emit(*p_.rows[j], s, "          ", memo, idx);
    s << "          apk" << j << "[" << index("n", "k") << "] = " << v << ";\n";
  }
  s << "        }\n";
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
         index("(n0 + " + std::to_string(i) + ")", "k") + "];\n";
}

}  // namespace ember::codegen

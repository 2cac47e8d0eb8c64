// What the tiled and the dot renderers (render_tile.cpp, render_dot.cpp) share: the members they
// read of a product, and the code they both emit (the function head, the batch index and the
// scalar store of a tile's sums).
#include <sstream>

#include "codegen/c_expr.h"
#include "codegen/render_tile.h"

namespace ember::codegen {

using schedule::Kernel;

ProductRenderer::ProductRenderer(const Kernel& k, const TileOperands& p)
    : N_(k.full_shape[p.row]),
      M_(k.full_shape[p.col]),
      K_(k.full_shape[p.red]),
      f32_(p.reduce->dtype == kFloat32),
      T_(ctype(p.reduce->dtype)),
      VT_(f32_ ? "ember_vf" : "ember_vd") {
  for (int d = 0; d < p.row; d++) base_.push_back("x" + std::to_string(d));
  base_.resize(k.full_shape.size(), "0");
}

void render_kernel_head(std::ostringstream& s, const std::string& fn, const Kernel& k,
                        const char* vector_type, int64_t vector_bytes, const char* what) {
  c_dialect().signature(s, fn, k);
  // The lanes were chosen for the prelude's target: a mismatch is a compile error, not wrong data.
  s << "  _Static_assert(sizeof(" << vector_type << ") == " << vector_bytes << ", \"" << what
    << " lanes differ from the prelude's vector width\");\n";
}

void render_batch_index(std::ostringstream& s, const Kernel& k, const TileOperands& p) {
  if (p.row == 0) return;
  s << "    int64_t t_ = bt;\n";
  for (int d = p.row - 1; d >= 0; d--)
    s << "    const int64_t x" << d << " = t_ % " << k.full_shape[d]
      << "; t_ /= " << k.full_shape[d] << ";\n";
}

void render_scalar_store(std::ostringstream& s, const std::string& ind, const Kernel& k,
                         const TileOperands& p, ExprEmitter& em,
                         const std::vector<std::string>& base, const char* type, int64_t rows,
                         int64_t stride) {
  s << ind << "for (int64_t i = 0; i < " << rows << " && n0 + i < n_hi; i++) {\n";
  s << ind << "  #pragma GCC ivdep\n";
  s << ind << "  for (int64_t j = 0; j < mv; j++) {\n";
  const std::string in = ind + "    ";
  s << in << type << " red = tl[i * " << stride << " + j];\n";
  std::vector<std::string> idx = base;
  idx[p.row] = "(n0 + i)";
  idx[p.col] = "(m0 + j)";
  ExprEmitter::Memo memo;
  memo[p.reduce] = "red";
  const std::string out = em.emit(*k.value, s, in, memo, idx);
  s << in << "b0[" << ExprEmitter::index(k.out_view, idx) << "] = " << out << ";\n";
  s << ind << "  }\n" << ind << "}\n";
}

}  // namespace ember::codegen

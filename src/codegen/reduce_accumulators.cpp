#include "codegen/reduce_accumulators.h"

#include <cmath>

#include "codegen/c_expr.h"

namespace ember::codegen {

using ir::Op;

Accumulators::Accumulators(const schedule::Expr& r, int64_t slots, const Dialect& d)
    : red(r), n(slots) {
  // 1-byte (bool/uint8) accumulators are widened: GCC 12's SLP vectoriser (AVX2/AVX-512)
  // miscompiles a uint8 max over comparison results (it keeps the -1 mask instead of 1).
  T = element_size(red.dtype) == 1 ? "int32_t" : ctype(red.dtype);
  // A float max runs on order-preserving integer keys (ember_fkey) plus a max of magnitude bits
  // that flags NaN: integer max reductions vectorise, a NaN-propagating float compare does not
  // (without -ffast-math).
  keyed = red.op == Op::RMAX && is_floating_point(red.dtype);
  fx = red.dtype == kFloat32 ? "ember_f" : "ember_d";
  if (keyed) T = red.dtype == kFloat32 ? "int32_t" : "int64_t";
  init = keyed ? fx + "key(" + literal(-INFINITY, red.dtype, d) + ")"
               : reduce_init(red.op, red.dtype, d);
  arrays = {"acc"};
  if (keyed) arrays.push_back("nan");
}

std::string Accumulators::update(const std::string& acc, const std::string& v) const {
  if (!keyed) return reduce_update(red.op, red.dtype, acc, v);
  return "(" + v + " > " + acc + " ? " + v + " : " + acc + ")";
}

std::string Accumulators::slot(const std::string& x, const std::string& i) const {
  return n == 1 ? x + "0" : x + "[" + i + "]";
}

void Accumulators::declare(std::ostringstream& s, const std::string& ind) const {
  for (auto& x : arrays) {
    std::string i0 = x == "acc" ? init : "0";
    if (n == 1) {
      s << ind << T << " " << x << "0 = " << i0 << ";\n";
    } else {
      s << ind << T << " " << x << "[" << n << "];\n";
      s << ind << "for (int i = 0; i < " << n << "; i++) " << x << "[i] = " << i0 << ";\n";
    }
  }
}

}  // namespace ember::codegen

// Scalar C for kernel expressions, shared by the loop renderer (render_c.cpp) and the
// register-tiled reduce renderer (render_tile.cpp). Internal to codegen. Where a dialect spells
// something its own way (dialect.h), the functions take it; C is the default.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/dialect.h"
#include "schedule/kernel.h"

namespace ember::codegen {

const char* ctype(ScalarType t);
/// A C literal of type t (NaN and infinities included).
std::string literal(double v, ScalarType t, const Dialect& d = c_dialect());
/// A C literal of integer (or bool) type t holding v exactly.
std::string int_literal(int64_t v, ScalarType t, const Dialect& d = c_dialect());
std::string reduce_init(ir::Op op, ScalarType t, const Dialect& d = c_dialect());
/// An ALU op's C expression from its template in ops.def (the float, integer or bool column by
/// t, the result's dtype) with operands `a`. Throws ember::Error for an op without a template.
std::string render_op(ir::Op op, ScalarType t, const std::vector<std::string>& a,
                      const Dialect& d = c_dialect());
/// A CAST of x from one dtype to another (float16 and bfloat16 through float32).
std::string render_cast(ScalarType from, ScalarType to, const std::string& x,
                        const Dialect& d = c_dialect());
/// A C template of ops.def ($0..$2 operands, $f float32 suffix, $T C type, $I one) expanded.
std::string render_template(const char* tmpl, ScalarType t, const std::vector<std::string>& a,
                            const Dialect& d = c_dialect());
/// The reduce step `acc (op) v` as a C expression (NaN-propagating max, bool or/and).
std::string reduce_update(ir::Op op, ScalarType t, const std::string& acc, const std::string& v);

/// Emits one `T vN = ...;` statement per expression node, memoised per node. Index expressions come
/// from `idx`: idx[d] is the C expression of loop-space axis d's index.
class ExprEmitter {
 public:
  using Memo = std::unordered_map<const schedule::Expr*, std::string>;
  explicit ExprEmitter(const Dialect& d = c_dialect()) : d_(&d) {}
  /// Returns the C variable (or memoised name) holding e's value.
  std::string emit(const schedule::Expr& e, std::ostringstream& s, const std::string& ind,
                   Memo& memo, const std::vector<std::string>& idx);
  /// Buffer offset of a view's element (axes of size 1 or stride 0 contribute nothing).
  static std::string index(const ir::View& v, const std::vector<std::string>& idx);
  /// From now on, index_here() (the loads emit() renders) writes the strides along loop axis
  /// `axis` that opaque_stride (loop_shapes.h) picks as the variables stride_var names, which
  /// the caller declares with values the compiler cannot see (declare_strides).
  void hide_strides(size_t axis) { hidden_axis_ = axis; }
  /// index(), with the strides hide_strides() names as variables.
  std::string index_here(const ir::View& v, const std::vector<std::string>& idx) const;
  /// The variable of a hidden stride ("s64_", "sm64_" for -64).
  static std::string stride_var(int64_t stride);
  /// C statements declaring each stride's variable, hidden from GCC by an empty asm statement
  /// (it can no longer take the stride for a constant): `ind` is their indentation.
  static void declare_strides(std::ostringstream& s, const std::string& ind,
                              const std::vector<int64_t>& strides);
  /// The view's validity condition ("" when unmasked, "0" when empty). `known`, where given,
  /// holds a range [lo, hi) per axis that its index is known to lie in: a mask that covers it
  /// needs no test.
  static std::string valid(const ir::View& v, const std::vector<std::string>& idx,
                           const std::vector<std::pair<int64_t, int64_t>>* known = nullptr);
  /// Axis `d`'s index lies in [lo, hi) in what emit() renders next (until forget()).
  void assume(size_t d, int64_t lo, int64_t hi);
  void forget() { known_.clear(); }

 private:
  std::string valid_here(const ir::View& v, const std::vector<std::string>& idx) const {
    return valid(v, idx, known_.empty() ? nullptr : &known_);
  }
  const Dialect* d_;
  int next_ = 0;
  std::vector<std::pair<int64_t, int64_t>> known_;  // per axis; empty: nothing assumed
  size_t hidden_axis_ = SIZE_MAX;                   // hide_strides' axis; SIZE_MAX: none
};

}  // namespace ember::codegen

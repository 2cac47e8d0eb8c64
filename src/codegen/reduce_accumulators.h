// A loop-rendered reduce's accumulators (render_c.cpp's render_reduce): their C type, initial
// value, update and declaration. Internal to codegen.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// `n` accumulator slots (the register tile times the unrolled reduce) of the reduce `red`. A
/// float max runs on order-preserving integer keys (`keyed`) plus a NaN flag array.
struct Accumulators {
  const schedule::Expr& red;
  int64_t n;
  const char* T;
  bool keyed;
  std::string fx, init;
  std::vector<std::string> arrays;  // "acc", and "nan" for a keyed max

  Accumulators(const schedule::Expr& r, int64_t slots, const Dialect& d);
  /// The updated value of accumulator `acc` with the term `v`.
  std::string update(const std::string& acc, const std::string& v) const;
  /// Slot `i` of array `x` (one accumulator is a scalar: GCC vectorises reductions into scalars,
  /// not array elements).
  std::string slot(const std::string& x, const std::string& i) const;
  /// The arrays' declarations and initial values, indented by `ind`.
  void declare(std::ostringstream& s, const std::string& ind) const;
};

}  // namespace ember::codegen

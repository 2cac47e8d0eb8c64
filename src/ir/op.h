// Op enum, names and categories, generated from ops.def.
#pragma once
#include <cstdint>

namespace ember::ir {

enum class Op : uint8_t {
#define EMBER_OP(name, cat, arity) name,
#include "ops.def"
#undef EMBER_OP
};

enum class OpCategory : uint8_t { Buffer, Unary, Binary, Ternary, Reduce, Movement };

const char* op_name(Op op);
OpCategory op_category(Op op);
int op_arity(Op op);

inline bool is_elementwise(Op op) {
  auto c = op_category(op);
  return c == OpCategory::Unary || c == OpCategory::Binary || c == OpCategory::Ternary;
}
inline bool is_reduce(Op op) { return op_category(op) == OpCategory::Reduce; }
inline bool is_movement(Op op) { return op_category(op) == OpCategory::Movement; }
/// Comparisons produce bool from non-bool sources.
inline bool is_comparison(Op op) { return op == Op::CMPLT || op == Op::CMPEQ; }

}  // namespace ember::ir

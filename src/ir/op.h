// Op enum, names, categories and per-op properties, generated from the table in ops.def.
#pragma once
#include <cstdint>

namespace ember::ir {

enum class Op : uint8_t {
#define EMBER_OP(name, cat, arity, flags, cost, c_float, c_int, c_bool) name,
#include "ops.def"
#undef EMBER_OP
};

/// The number of primitive ops (rows of ops.def).
inline constexpr int kNumOps = 0
#define EMBER_OP(name, cat, arity, flags, cost, c_float, c_int, c_bool) +1
#include "ops.def"
#undef EMBER_OP
    ;

enum class OpCategory : uint8_t { Buffer, Unary, Binary, Ternary, Reduce, Movement };

/// Properties of an op (the flags column of ops.def).
enum OpFlag : uint32_t {
  /// f(0, ..., 0) == +0: the zero fill of a PAD above the op may be pushed below it.
  ZeroPreserving = 1u << 0,
  /// The frontend promotes integer and bool inputs to the default float type (torch.exp(int)).
  FloatOnly = 1u << 1,
  /// c_float calls a libm function that glibc's libmvec has SIMD variants of (the C prelude
  /// declares them, so loops calling it vectorise without -ffast-math).
  SimdLibm = 1u << 2,
  /// Has a vector form (its c_float template on vector operands) inside a register tile's term.
  TileTerm = 1u << 3,
  /// Has a vector form in a register tile's epilogue.
  TileEpilogue = 1u << 4,
  /// No gradient flows through it (its gradient rule is the explicit "not differentiable" one).
  NoGrad = 1u << 5,
  /// Operands and result are bool.
  BoolOperands = 1u << 6,
  /// The result is bool, the operands are not (comparisons).
  BoolResult = 1u << 7,
};

/// Work per element, in cheap-ALU-op units: the scheduler materialises a value below a broadcast
/// when recomputing it would cost more (schedule.cpp, materialise_if_expensive).
enum OpCost : uint8_t { kFree = 0, kCheap = 1, kCostly = 8 };

struct OpInfo {
  const char* name;
  OpCategory category;
  int arity;
  uint32_t flags;
  OpCost cost;
  /// C templates (see ops.def) for float, integer and bool results; "" for non-ALU ops.
  const char* c_float;
  const char* c_int;
  const char* c_bool;
};

const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
inline OpCategory op_category(Op op) { return op_info(op).category; }
inline bool op_has(Op op, OpFlag f) { return (op_info(op).flags & f) != 0; }

inline bool is_elementwise(Op op) {
  auto c = op_category(op);
  return c == OpCategory::Unary || c == OpCategory::Binary || c == OpCategory::Ternary;
}
inline bool is_reduce(Op op) { return op_category(op) == OpCategory::Reduce; }
inline bool is_movement(Op op) { return op_category(op) == OpCategory::Movement; }

}  // namespace ember::ir

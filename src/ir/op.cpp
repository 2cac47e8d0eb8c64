#include "ir/op.h"

namespace ember::ir {

namespace {
// Empty template columns fall back to the previous column (ops.def).
constexpr const char* or_else(const char* s, const char* fallback) { return *s ? s : fallback; }

constexpr OpInfo kOps[] = {
#define EMBER_OP(name, cat, arity, flags, cost, c_float, c_int, c_bool) \
  {#name,                                                               \
   OpCategory::cat,                                                     \
   arity,                                                               \
   static_cast<uint32_t>(flags),                                        \
   cost,                                                                \
   c_float,                                                             \
   or_else(c_int, c_float),                                             \
   or_else(c_bool, or_else(c_int, c_float))},
#include "ops.def"
#undef EMBER_OP
};
static_assert(sizeof kOps / sizeof kOps[0] == kNumOps);
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }

}  // namespace ember::ir

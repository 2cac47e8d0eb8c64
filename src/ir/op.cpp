#include "ir/op.h"

namespace ember::ir {

namespace {
struct OpInfo {
  const char* name;
  OpCategory category;
  int arity;
};
constexpr OpInfo kOps[] = {
#define EMBER_OP(name, cat, arity) {#name, OpCategory::cat, arity},
#include "ops.def"
#undef EMBER_OP
};
}  // namespace

const char* op_name(Op op) { return kOps[static_cast<int>(op)].name; }
OpCategory op_category(Op op) { return kOps[static_cast<int>(op)].category; }
int op_arity(Op op) { return kOps[static_cast<int>(op)].arity; }

}  // namespace ember::ir

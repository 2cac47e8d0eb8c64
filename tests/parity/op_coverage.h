// Which parity case exercises each primitive op of src/ir/ops.def. The registry has one home,
// parity_op_coverage.cpp: a line PARITY_COVERS(OP, Suite, name) per op names its case; an op that
// cannot have a libtorch case (its values differ by design) says why with
// PARITY_EXEMPT(OP, "reason"). OpTable.EveryOpHasAParityCase (there) checks the registry against
// ops.def and gtest's list of cases.
#pragma once
#include <string>
#include <vector>

namespace parity {

struct OpCover {
  std::string op;
  std::string suite, name;  // empty suite: exempt, `name` is the reason
};

inline std::vector<OpCover>& op_covers() {
  static std::vector<OpCover> v;
  return v;
}

struct RegisterOpCover {
  RegisterOpCover(const char* op, const char* suite, const char* name) {
    op_covers().push_back({op, suite, name});
  }
};

}  // namespace parity

#define PARITY_COVERS(OP, suite, name) \
  static const parity::RegisterOpCover parity_covers_##OP##_##suite##_##name(#OP, #suite, #name)
#define PARITY_EXEMPT(OP, reason) \
  static const parity::RegisterOpCover parity_exempt_##OP(#OP, "", reason)

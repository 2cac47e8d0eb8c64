// Every primitive op of src/ir/ops.def has a parity case (op_coverage.h). This file is the one
// home of the registrations: a new op adds its line here, naming its case.
#include <gtest/gtest.h>

#include <set>

#include "ir/op.h"
#include "op_coverage.h"

PARITY_COVERS(BUFFER, Binary, add_same_shape);
PARITY_COVERS(CONST, Scalar, float_tensor_ops);
PARITY_EXEMPT(RAND,
              "counter-based stream, not libtorch's: checked against the interp device by "
              "codegen_fuzz_tests and for its distribution by tests/core");
PARITY_COVERS(CONTIGUOUS, Convert, contiguous_of_views);
PARITY_COVERS(DETACH, GradApi, detach_and_no_grad_stop_gradients);
PARITY_COVERS(NEG, Unary, neg);
PARITY_COVERS(EXP, Unary, exp);
PARITY_COVERS(LOG, Unary, log);
PARITY_COVERS(SIN, Unary, sin);
PARITY_COVERS(COS, Unary, cos);
PARITY_COVERS(SQRT, Unary, sqrt);
PARITY_COVERS(RECIP, Unary, square_and_reciprocal);
PARITY_COVERS(TANH, Unary, tanh);
PARITY_COVERS(NOT, Logical, bool_ops);
PARITY_COVERS(CAST, Convert, float_to_int_truncates);
PARITY_COVERS(ADD, Binary, add_same_shape);
PARITY_COVERS(SUB, Binary, sub_with_alpha);
PARITY_COVERS(MUL, Binary, mul_broadcast);
PARITY_COVERS(DIV, Binary, div);
PARITY_COVERS(MAX, MaxMin, maximum_minimum_broadcast);
PARITY_COVERS(POW, Pow, fractional_exponent);
PARITY_COVERS(CMPLT, Compare, operators);
PARITY_COVERS(CMPEQ, Compare, operators);
PARITY_COVERS(AND, Logical, bool_ops);
PARITY_COVERS(OR, Logical, bool_ops);
PARITY_COVERS(XOR, Logical, bool_ops);
PARITY_COVERS(WHERE, GradWhere, tensors);
PARITY_COVERS(SUM, GradSum, dim);
PARITY_COVERS(RMAX, GradMax, amax_with_ties);
PARITY_COVERS(PROD, GradProd, all_and_dim);
PARITY_COVERS(RESHAPE, GradReshape, infer_dim);
PARITY_COVERS(PERMUTE, GradPermute, three_d);
PARITY_COVERS(EXPAND, GradExpand, size1_dims);
PARITY_COVERS(PAD, GradPad, last_dim);
PARITY_COVERS(SHRINK, GradSlice, narrow);
PARITY_COVERS(FLIP, GradFlip, dims);
PARITY_COVERS(FLOOR, GradUnary, floor);

TEST(OpTable, EveryOpHasAParityCase) {
  std::set<std::string> cases;
  auto* u = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < u->total_test_suite_count(); i++) {
    const auto* s = u->GetTestSuite(i);
    for (int j = 0; j < s->total_test_count(); j++)
      cases.insert(std::string(s->name()) + "." + s->GetTestInfo(j)->name());
  }
  std::set<std::string> ops;
  for (int i = 0; i < ember::ir::kNumOps; i++) {
    std::string op = ember::ir::op_name(static_cast<ember::ir::Op>(i));
    ops.insert(op);
    bool covered = false;
    for (const auto& c : parity::op_covers()) {
      if (c.op != op) continue;
      if (c.suite.empty()) {
        EXPECT_FALSE(c.name.empty()) << op << ": an exemption needs a reason";
        covered = true;
        continue;
      }
      std::string full = c.suite + "." + c.name;
      EXPECT_TRUE(cases.count(full))
          << op << ": the registered parity case " << full << " does not exist";
      covered = covered || cases.count(full) > 0;
    }
    EXPECT_TRUE(covered) << op << " (ops.def) has no parity case: register one with "
                         << "PARITY_COVERS next to it (tests/parity/op_coverage.h)";
  }
  for (const auto& c : parity::op_covers())
    EXPECT_TRUE(ops.count(c.op)) << "registered op " << c.op << " is not in ops.def";
}

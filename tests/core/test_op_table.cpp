// The op table (src/ir/ops.def) against the rules each op needs: every ALU and reduce op has a C
// template that the cpu device compiles and an interpreter rule that agrees with it; every op not
// marked NoGrad passes a gradient to its floating sources, every NoGrad op passes none. (The
// rules are exhaustive switches under -Werror=switch; this checks what a switch cannot: that the
// rule and the table agree. The parity case per op: tests/parity/parity_op_coverage.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_set>

#include "ember/ember.h"
#include "ir/node.h"
#include "ir/op.h"
#include "tensor/backward.h"
#include "tensor/tensor_impl.h"

namespace {

using ember::Tensor;
using ember::ir::Op;
using ember::ir::OpCategory;
namespace ir = ember::ir;

using ember::DeviceGuard;

bool alu_or_reduce(Op op) { return ir::is_elementwise(op) || ir::is_reduce(op); }

int expected_arity(OpCategory c) {
  switch (c) {
    case OpCategory::Unary:
    case OpCategory::Reduce:
    case OpCategory::Movement:
      return 1;
    case OpCategory::Binary:
      return 2;
    case OpCategory::Ternary:
      return 3;
    case OpCategory::Buffer:
      return -1;  // 0 (leaves) or 1
  }
  return -2;
}

// Operand i of op: bool where the op (or WHERE's condition) takes bools, else float32 in
// [0.5, 2.5) (inside every float op's domain), one per row of a 3x4 tensor.
Tensor operand(Op op, size_t i) {
  bool boolean = ir::op_has(op, ir::BoolOperands) || (op == Op::WHERE && i == 0);
  std::vector<float> v;
  for (int k = 0; k < 12; k++) v.push_back(0.5f + static_cast<float>((k * 7 + 3 * i) % 12) / 6);
  Tensor t = ember::from_vector(v, ember::IntList{3, 4});
  if (boolean) return t > 1.5;
  return t.requires_grad_(true);
}

// Every operand of op.
std::vector<Tensor> operands(Op op) {
  std::vector<Tensor> in;
  for (int k = 0; k < ir::op_info(op).arity; k++) in.push_back(operand(op, static_cast<size_t>(k)));
  return in;
}

// op applied to its operands as a bare graph node (no frontend in between).
Tensor apply_op(Op op, const std::vector<Tensor>& in) {
  const ir::OpInfo& info = ir::op_info(op);
  std::vector<ir::NodeRef> src;
  for (auto& t : in) src.push_back(ember::detail::node_of(t));
  ember::ScalarType t = ir::op_has(op, ir::BoolOperands) || ir::op_has(op, ir::BoolResult)
                            ? ember::kBool
                            : src.back()->dtype;
  ir::Arg arg;
  if (info.category == OpCategory::Reduce) arg.ints = {1};
  auto node = ir::make_node(op, t, src, arg);
  if (in.size() == 1) return ember::detail::make_tensor(node, {&in[0]});
  if (in.size() == 2) return ember::detail::make_tensor(node, {&in[0], &in[1]});
  return ember::detail::make_tensor(node, {&in[0], &in[1], &in[2]});
}

TEST(OpTable, RowsAreConsistent) {
  for (int i = 0; i < ir::kNumOps; i++) {
    Op op = static_cast<Op>(i);
    const ir::OpInfo& info = ir::op_info(op);
    SCOPED_TRACE(info.name);
    int arity = expected_arity(info.category);
    if (arity >= 0) {
      EXPECT_EQ(info.arity, arity);
    }
    bool has_c = *info.c_float != 0;
    EXPECT_EQ(has_c, alu_or_reduce(op)) << "a C template exactly for the ALU and reduce ops";
    EXPECT_EQ(*info.c_int != 0, has_c) << "empty columns fall back to the previous one";
    EXPECT_EQ(*info.c_bool != 0, has_c) << "empty columns fall back to the previous one";
    if (info.flags & ir::SimdLibm) {
      EXPECT_NE(std::string(info.c_float).find("$f("), std::string::npos)
          << "a SimdLibm op's c_float is a libm call";
    }
    if (info.flags & (ir::TileTerm | ir::TileEpilogue)) {
      EXPECT_TRUE(ir::is_elementwise(op));
    }
    if (!alu_or_reduce(op)) {
      EXPECT_EQ(info.flags & ~uint32_t{ir::NoGrad}, 0u) << "ALU flags on a non-ALU op";
    }
  }
}

TEST(OpTable, EveryAluAndReduceOpRendersAndInterpretsAlike) {
  ember::NoGradGuard no_grad;
  for (int i = 0; i < ir::kNumOps; i++) {
    Op op = static_cast<Op>(i);
    if (!alu_or_reduce(op)) continue;
    SCOPED_TRACE(ir::op_name(op));
    const std::vector<Tensor> in = operands(op);
    std::vector<double> cpu, interp;
    {
      DeviceGuard d("cpu");
      ASSERT_NO_THROW(cpu = apply_op(op, in).to_vector<double>());
    }
    {
      DeviceGuard d("interp");
      ASSERT_NO_THROW(interp = apply_op(op, in).to_vector<double>());
    }
    ASSERT_EQ(cpu.size(), interp.size());
    ASSERT_EQ(cpu.size(), ir::is_reduce(op) ? 3u : 12u);
    for (size_t k = 0; k < cpu.size(); k++)
      EXPECT_NEAR(cpu[k], interp[k], 1e-5 * std::abs(interp[k])) << "element " << k;
  }
}

TEST(OpTable, GradientRulesMatchTheNogradFlag) {
  for (int i = 0; i < ir::kNumOps; i++) {
    Op op = static_cast<Op>(i);
    if (!alu_or_reduce(op)) continue;
    SCOPED_TRACE(ir::op_name(op));
    const std::vector<Tensor> in = operands(op);
    Tensor y = apply_op(op, in);
    std::unordered_set<const ir::Node*> targets;
    for (auto& t : in) targets.insert(ember::detail::node_of(t).get());
    auto root = ember::detail::node_of(y);
    auto seed =
        ir::make_node(ir::Op::EXPAND, root->dtype,
                      {ir::make_node(Op::RESHAPE, root->dtype, {ir::make_const(1, root->dtype)},
                                     ir::Arg{.ints = ir::Shape(root->shape.size(), 1)})},
                      ir::Arg{.ints = root->shape});
    auto grads = ember::detail::backward_graph(root, seed, targets);
    for (auto& t : in) {
      if (!t.is_floating_point()) continue;
      bool got = grads.count(ember::detail::node_of(t).get()) > 0;
      EXPECT_EQ(got, !ir::op_has(op, ir::NoGrad)) << "operand gradient";
    }
  }
}

}  // namespace

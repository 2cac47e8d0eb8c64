// Lowerings the ONNX ops pick when an input is one of the model's constants (OpContext::
// is_constant): Gather of a finite constant table as a one-hot product, Pow by a constant 2 as a
// square. Each checked against values written out here, and against the same graph with the
// constant given as a graph input (the generic lowering).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;

constexpr float kInf = std::numeric_limits<float>::infinity();

// z = Gather(table [4, 3], ids [2, 2]) along axis 0; the table an initializer, so a constant
// unless the caller gives it as an input.
ModelBuilder gather_model(const std::vector<float>& table) {
  ModelBuilder b;
  b.input({"ids", kI64, {2, 2}}).input({"table", kF32, {4, 3}}).output({"z", kF32, {2, 2, 3}});
  b.node("Gather", {"table", "ids"}, {"z"});
  b.initializer("table", table, {4, 3});
  return b;
}

std::vector<float> gathered(const eo::Model& m, const std::vector<int64_t>& ids) {
  Tensor out = m.run({{"ids", from_vector<int64_t>(ids, Shape{2, 2})}})[0].second;
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 2, 3}));
  return out.to_vector<float>();
}

TEST(OnnxConstantInputs, GatherOfAConstantTablePicksItsRowsExactly) {
  const std::vector<float> table = {1.5f, -2, 3e38f, 4, 5e-30f, -6, 7, 8, 9, -10, 11, 12.25f};
  eo::Model m = eo::load_from_bytes(gather_model(table).bytes());
  // Rows 3, 0 / 1, -1 (= 3): negative indices count from the end.
  const std::vector<float> want = {-10, 11,     12.25f, 1.5f, -2, 3e38f,
                                   4,   5e-30f, -6,     -10,  11, 12.25f};
  EXPECT_EQ(gathered(m, {3, 0, 1, -1}), want);
  // The same table given as a graph input takes the generic lowering: the same values.
  Tensor given = from_vector<float>(table, Shape{4, 3});
  Tensor out =
      m.run({{"ids", from_vector<int64_t>({3, 0, 1, -1}, Shape{2, 2})}, {"table", given}})[0]
          .second;
  EXPECT_EQ(out.to_vector<float>(), want);
}

TEST(OnnxConstantInputs, GatherOfATableWithInfAndNaNKeepsTheOtherRowsFinite) {
  // A product with one-hot rows would give 0 * inf = NaN in every output: such a table takes the
  // one-hot reduction, where the rows not picked are never multiplied.
  const float nan = std::nanf("");
  const std::vector<float> table = {1, 2, 3, kInf, -kInf, 0, nan, 5, 6, 7, 8, 9};
  eo::Model m = eo::load_from_bytes(gather_model(table).bytes());
  std::vector<float> got = gathered(m, {0, 3, 1, 2});
  const std::vector<float> finite = {1, 2, 3, 7, 8, 9};
  for (size_t i = 0; i < 6; i++) EXPECT_EQ(got[i], finite[i]) << i;
  EXPECT_EQ(got[6], kInf);
  EXPECT_EQ(got[7], -kInf);
  EXPECT_EQ(got[8], 0.0f);
  EXPECT_TRUE(std::isnan(got[9]));
  EXPECT_EQ(got[10], 5.0f);
  EXPECT_EQ(got[11], 6.0f);
}

// z = Pow(x, e) with e a Constant node's output.
eo::Model pow_model(float e) {
  ModelBuilder b;
  b.input({"x", kF32, {4}}).output({"z", kF32, {4}});
  auto& c = b.node("Constant", {}, {"e"});
  auto* a = c.add_attribute();
  a->set_name("value_float");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(e);
  b.node("Pow", {"x", "e"}, {"z"});
  return eo::load_from_bytes(b.bytes());
}

TEST(OnnxConstantInputs, PowByAConstantTwoSquaresNegativeBasesToo) {
  Tensor x = from_vector<float>({-3, 0.5f, -kInf, 1e20f});
  EXPECT_EQ(pow_model(2)({x})[0].to_vector<float>(), (std::vector<float>{9, 0.25f, kInf, kInf}));
  EXPECT_EQ(pow_model(3)({x})[0].to_vector<float>(),
            (std::vector<float>{-27, 0.125f, -kInf, kInf}));
}

}  // namespace

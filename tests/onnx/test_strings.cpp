// ONNX string tensors (tensor(string), held on the host as StringTensor): Cast and CastLike to and
// from strings, StringNormalizer, Identity, string initializers, input checks and the errors of
// ops that do not take strings. Expected values are worked by hand from ONNX's operator spec
// (Cast-13, StringNormalizer-10) and numpy's str() of floats (what ONNX's test data hold).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "../support/error_message.h"
#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;
using ember_test::message_of;

#define EXPECT_CONTAINS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

eo::Value strings(std::vector<std::string> s, Shape shape) {
  return eo::Value::strings(eo::StringTensor{std::move(shape), std::move(s)});
}

// A model of one node `op` from x (type in_t, shape dims) to y (type out_t, shape out_dims, dims
// when empty).
eo::Model one_node(const std::string& op, int in_t, int out_t, std::vector<int64_t> dims,
                   const std::function<void(::onnx::NodeProto&)>& attrs = {},
                   std::vector<int64_t> out_dims = {}) {
  ModelBuilder b;
  b.input({"x", in_t, dims}).output({"y", out_t, out_dims.empty() ? dims : out_dims});
  auto& n = b.node(op, {"x"}, {"y"}, "n");
  if (attrs) attrs(n);
  return eo::load_from_bytes(b.bytes());
}

eo::Model cast_to(int in_t, int to, std::vector<int64_t> dims) {
  return one_node("Cast", in_t, to, dims,
                  [to](::onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", to); });
}

eo::Value run1(const eo::Model& m, const eo::Value& x) {
  return m.run_values({{"x", x}})[0].second;
}

TEST(OnnxStrings, CastFloatToStringPrintsAsNumpyStr) {
  Tensor x = from_vector<float>({1.0f, 0.1f, -2.5f, 1e-5f, 100000.0f, 1.5e16f, -NAN, -INFINITY},
                                Shape{2, 4});
  eo::Value y = run1(cast_to(kF32, kStr, {2, 4}), x);
  ASSERT_TRUE(y.is_strings());
  EXPECT_EQ(y.strings().shape, (Shape{2, 4}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"1.0", "0.1", "-2.5", "1e-05", "100000.0",
                                                        "1.5e+16", "nan", "-inf"}));
}

TEST(OnnxStrings, CastFloat16AndIntegersToString) {
  // float16 0.1 is 0.0999755859375 and 65504 its largest value: the fewest digits that round to
  // the same float16 are "0.1" and "65500.0" (numpy prints them so).
  Tensor h = from_vector<float>({0.1f, 65504.0f, -3.0f}).to(kFloat16);
  EXPECT_EQ(run1(cast_to(kF16, kStr, {3}), h).strings().data,
            (std::vector<std::string>{"0.1", "65500.0", "-3.0"}));
  Tensor i = from_vector<int64_t>({-3, 0, INT64_MAX});
  EXPECT_EQ(run1(cast_to(kI64, kStr, {3}), i).strings().data,
            (std::vector<std::string>{"-3", "0", "9223372036854775807"}));
}

TEST(OnnxStrings, CastStringToNumbers) {
  eo::Value s = strings({" 1.5", "+INF", "-inf", "NaN", "1E3", "-2.5e-1", "1e50"}, {7});
  Tensor f = run1(cast_to(kStr, kF32, {7}), s).tensor();
  ASSERT_EQ(f.dtype(), kFloat32);
  std::vector<float> v = f.to_vector<float>();
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], -INFINITY);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], 1000.0f);
  EXPECT_EQ(v[5], -0.25f);
  EXPECT_EQ(v[6], INFINITY);  // beyond float's range
  // "0.47892547" is the float nearest to it, read directly (not through double).
  EXPECT_EQ(run1(cast_to(kStr, kF32, {1}), strings({"0.47892547"}, {1})).tensor().item<float>(),
            0.47892547f);
  // To integers: integers exactly, other numbers truncated toward zero.
  Tensor i =
      run1(cast_to(kStr, kI64, {5}), strings({"42", "-7", "2.9", "1e3", "+5"}, {5})).tensor();
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{42, -7, 2, 1000, 5}));
  Tensor u = run1(cast_to(kStr, kU8, {2}), strings({"255", "3"}, {2})).tensor();
  ASSERT_EQ(u.dtype(), kUInt8);
  EXPECT_EQ(u.to_vector<int64_t>(), (std::vector<int64_t>{255, 3}));
}

TEST(OnnxStrings, CastStringToStringKeepsTheStrings) {
  eo::Value y = run1(cast_to(kStr, kStr, {2}), strings({"a", "1.50"}, {2}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"a", "1.50"}));
}

TEST(OnnxStrings, CastRejectsANonNumberAndBool) {
  eo::Model m = cast_to(kStr, kF32, {3});
  const std::string msg = message_of<ValueError>([&] { run1(m, strings({"1", "2", "abc"}, {3})); });
  EXPECT_CONTAINS(msg, "node 0 'n' (Cast-13)");
  EXPECT_CONTAINS(msg, "\"abc\" at flat index 2 is not a number");
  const std::string b = message_of<eo::UnsupportedError>(
      [] { run1(cast_to(::onnx::TensorProto::BOOL, kStr, {1}), from_vector<bool>({true})); });
  EXPECT_CONTAINS(b, "Cast from bool to string is not supported");
}

TEST(OnnxStrings, CastLikeTakesTheTypeOfAStringOrATensor) {
  ModelBuilder b(15);  // CastLike is new in opset 15
  b.input({"x", kF32, {2}}).input({"like", kStr, {1}}).output({"y", kStr, {2}});
  b.node("CastLike", {"x", "like"}, {"y"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  eo::Value y =
      m.run_values({{"x", from_vector<float>({0.5f, 2.0f})}, {"like", strings({"x"}, {1})}})[0]
          .second;
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"0.5", "2.0"}));

  ModelBuilder b2(15);
  b2.input({"x", kStr, {2}}).input({"like", kI64, {1}}).output({"y", kI64, {2}});
  b2.node("CastLike", {"x", "like"}, {"y"});
  eo::Model m2 = eo::load_from_bytes(b2.bytes());
  eo::Value y2 =
      m2.run_values({{"x", strings({"3", "-4"}, {2})}, {"like", from_vector<int64_t>({0})}})[0]
          .second;
  EXPECT_EQ(y2.tensor().to_vector<int64_t>(), (std::vector<int64_t>{3, -4}));
}

eo::Model normalizer(std::vector<int64_t> dims, const std::string& action, int64_t sensitive,
                     std::vector<std::string> stopwords) {
  return one_node(
      "StringNormalizer", kStr, kStr, dims,
      [&](::onnx::NodeProto& n) {
        if (!action.empty()) ModelBuilder::attr_string(n, "case_change_action", action);
        ModelBuilder::attr_int(n, "is_case_sensitive", sensitive);
        if (stopwords.empty()) return;  // the checker rejects an empty STRINGS attribute
        auto* a = n.add_attribute();
        a->set_name("stopwords");
        a->set_type(::onnx::AttributeProto::STRINGS);
        for (const auto& w : stopwords) a->add_strings(w);
      },
      dims.size() == 2 ? std::vector<int64_t>{1, -2} : std::vector<int64_t>{-2});
}

TEST(OnnxStrings, StringNormalizerDropsStopwordsThenChangesCase) {
  // Case-insensitive: "Monday" and "MONDAY" match the stopword "monday".
  eo::Value y = run1(normalizer({5}, "LOWER", 0, {"monday"}),
                     strings({"Monday", "TUEsday", "MONDAY", "x1-Y", ""}, {5}));
  EXPECT_EQ(y.strings().shape, (Shape{3}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"tuesday", "x1-y", ""}));
  // Case-sensitive: only "monday" itself is dropped.
  y = run1(normalizer({3}, "UPPER", 1, {"monday"}), strings({"monday", "Monday", "b"}, {3}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"MONDAY", "B"}));
  // [1, C] stays two-dimensional.
  y = run1(normalizer({1, 3}, "NONE", 1, {"b"}), strings({"a", "b", "Cc"}, {1, 3}));
  EXPECT_EQ(y.strings().shape, (Shape{1, 2}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"a", "Cc"}));
}

TEST(OnnxStrings, StringNormalizerWithEveryStringDroppedGivesOneEmptyString) {
  eo::Value y = run1(normalizer({2}, "UPPER", 1, {"monday"}), strings({"monday", "monday"}, {2}));
  EXPECT_EQ(y.strings().shape, (Shape{1}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{""}));
  y = run1(normalizer({1, 1}, "", 0, {"A"}), strings({"a"}, {1, 1}));
  EXPECT_EQ(y.strings().shape, (Shape{1, 1}));
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{""}));
}

TEST(OnnxStrings, StringNormalizerErrors) {
  EXPECT_CONTAINS(message_of<ShapeError>([] {
                    run1(normalizer({2, 2}, "NONE", 1, {}), strings({"a", "b", "c", "d"}, {2, 2}));
                  }),
                  "must be [C] or [1, C], got [2, 2]");
  EXPECT_CONTAINS(
      message_of<ValueError>([] { run1(normalizer({1}, "TITLE", 1, {}), strings({"a"}, {1})); }),
      "case_change_action is 'TITLE'");
  // Non-ASCII text passes through where no case mapping applies, and is refused where one would.
  EXPECT_EQ(run1(normalizer({1}, "NONE", 1, {}), strings({"caf\xc3\xa9"}, {1})).strings().data,
            (std::vector<std::string>{"caf\xc3\xa9"}));
  EXPECT_CONTAINS(message_of<eo::UnsupportedError>(
                      [] { run1(normalizer({1}, "UPPER", 1, {}), strings({"caf\xc3\xa9"}, {1})); }),
                  "is not ASCII");
}

TEST(OnnxStrings, IdentityAndInitializersCarryStrings) {
  ModelBuilder b;
  b.output({"y", kStr, {2}});
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(kStr);
  t->add_dims(2);
  t->add_string_data("hello");
  t->add_string_data("");
  b.node("Identity", {"w"}, {"y"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  eo::Value y = m.run_values({})[0].second;
  EXPECT_EQ(y.strings().data, (std::vector<std::string>{"hello", ""}));
  EXPECT_CONTAINS(message_of<ValueError>([&] { m.run({}); }), "is a string tensor: use run_values");
}

TEST(OnnxStrings, OpsOnTensorsRejectStringsAndInputsAreChecked) {
  eo::Model relu = one_node("Relu", kStr, kStr, {1});
  EXPECT_CONTAINS(message_of<eo::UnsupportedError>([&] { run1(relu, strings({"1"}, {1})); }),
                  "input 0 is a string tensor; the op takes a tensor");
  eo::Model m = cast_to(kStr, kF32, {2});
  EXPECT_CONTAINS(message_of<DTypeError>([&] {
                    run1(m, from_vector<float>({1, 2}));
                  }),
                  "input 'x': expected tensor(string), got float32");
  EXPECT_CONTAINS(message_of<ShapeError>([&] { run1(m, strings({"1"}, {1})); }),
                  "input 'x': expected shape [2], got [1]");
  eo::Model f = cast_to(kF32, kStr, {1});
  EXPECT_CONTAINS(message_of<DTypeError>([&] { run1(f, strings({"1"}, {1})); }),
                  "input 'x': expected tensor(float), got a string tensor");
  EXPECT_CONTAINS(message_of<ValueError>([] { strings({"a"}, {2}); }),
                  "shape [2] holds 1 strings, not 2");
}

}  // namespace

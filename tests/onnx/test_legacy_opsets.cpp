// Old opsets' attribute forms (ONNX's Changelog.md: the signatures before an input replaced the
// attribute), each on a model built in code and checked against hand-computed values.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;

std::vector<float> run1(ModelBuilder& b, const Tensor& x) {
  return eo::load_from_bytes(b.bytes())({x})[0].to_vector<float>();
}

Tensor iota(Shape s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return arange(n).to(kFloat32).reshape(s);
}

TEST(OnnxLegacy, Reshape1TakesTheShapeAttribute) {
  ModelBuilder b(1);
  b.input({"x", kF32, {2, 3}}).output({"y", kF32, {3, 2}});
  auto& n = b.node("Reshape", {"x"}, {"y"});
  ModelBuilder::attr_ints(n, "shape", {3, -1});
  eo::Model m = eo::load_from_bytes(b.bytes());
  Tensor y = m({iota({2, 3})})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(OnnxLegacy, Slice1TakesStartsEndsAndAxesAttributes) {
  ModelBuilder b(1);
  b.input({"x", kF32, {3, 4}}).output({"y", kF32, {2, 2}});
  auto& n = b.node("Slice", {"x"}, {"y"});
  ModelBuilder::attr_ints(n, "starts", {1, -3});
  ModelBuilder::attr_ints(n, "ends", {1000, 3});
  ModelBuilder::attr_ints(n, "axes", {0, 1});
  EXPECT_EQ(run1(b, iota({3, 4})), (std::vector<float>{5, 6, 9, 10}));
}

TEST(OnnxLegacy, Pad2TakesPadsModeAndValueAttributes) {
  ModelBuilder b(2);
  b.input({"x", kF32, {1, 3}}).output({"y", kF32, {1, 6}});
  auto& n = b.node("Pad", {"x"}, {"y"});
  ModelBuilder::attr_ints(n, "pads", {0, 1, 0, 2});
  ModelBuilder::attr_string(n, "mode", "reflect");
  EXPECT_EQ(run1(b, iota({1, 3})), (std::vector<float>{1, 0, 1, 2, 1, 0}));
}

TEST(OnnxLegacy, Squeeze1AndUnsqueeze1TakeAxesAttributes) {
  ModelBuilder b(1);
  b.input({"x", kF32, {1, 3, 1}}).output({"y", kF32, {3, 1, 1}});
  auto& s = b.node("Squeeze", {"x"}, {"t"});
  ModelBuilder::attr_ints(s, "axes", {0, 2});
  auto& u = b.node("Unsqueeze", {"t"}, {"y"});
  ModelBuilder::attr_ints(u, "axes", {1, 2});
  Tensor y = eo::load_from_bytes(b.bytes())({iota({1, 3, 1})})[0];
  EXPECT_EQ(y.shape(), (Shape{3, 1, 1}));
}

TEST(OnnxLegacy, Split2TakesTheSplitAttribute) {
  ModelBuilder b(2);
  b.input({"x", kF32, {5}}).output({"a", kF32, {2}}).output({"c", kF32, {3}});
  auto& n = b.node("Split", {"x"}, {"a", "c"});
  ModelBuilder::attr_ints(n, "split", {2, 3});
  auto out = eo::load_from_bytes(b.bytes())({iota({5})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0, 1}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 3, 4}));
}

// BatchNormalization-6: is_test and spatial attributes, inference with the given statistics:
// (x - mean) / sqrt(var + eps) * scale + bias per channel. IR version 3 lists every initializer
// as a graph input too: the inputs take them as defaults.
TEST(OnnxLegacy, BatchNormalization6WithIsTestAndSpatial) {
  ModelBuilder b(6);
  b.input({"x", kF32, {1, 2, 2}}).output({"y", kF32, {1, 2, 2}});
  for (const char* name : {"scale", "bias", "mean", "var"}) b.input({name, kF32, {2}});
  b.initializer("scale", {2, 1}, {2});
  b.initializer("bias", {0, 10}, {2});
  b.initializer("mean", {1, 0}, {2});
  b.initializer("var", {4, 0.25f}, {2});
  auto& n = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  ModelBuilder::attr_int(n, "is_test", 1);
  ModelBuilder::attr_int(n, "spatial", 1);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(::onnx::AttributeProto::FLOAT);
  eps->set_f(0);
  // channel 0: (x - 1) / 2 * 2; channel 1: x / 0.5 + 10
  EXPECT_EQ(run1(b, iota({1, 2, 2})), (std::vector<float>{-1, 0, 14, 16}));
}

TEST(OnnxLegacy, Upsample7TakesTheScalesAttribute) {
  ModelBuilder b(7);
  b.input({"x", kF32, {1, 1, 1, 2}}).output({"y", kF32, {1, 1, 2, 4}});
  auto& n = b.node("Upsample", {"x"}, {"y"});
  auto* a = n.add_attribute();
  a->set_name("scales");
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float s : {1.0f, 1.0f, 2.0f, 2.0f}) a->add_floats(s);
  EXPECT_EQ(run1(b, iota({1, 1, 1, 2})), (std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1}));
}

// Clip-6: min and max are attributes; from opset 11 they are inputs.
TEST(OnnxLegacy, Clip6TakesMinAndMaxAttributes) {
  ModelBuilder b(6);
  b.input({"x", kF32, {4}}).output({"y", kF32, {4}});
  auto& n = b.node("Clip", {"x"}, {"y"});
  for (auto [name, v] : {std::pair{"min", 0.5f}, std::pair{"max", 2.0f}}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  EXPECT_EQ(run1(b, iota({4})), (std::vector<float>{0.5, 1, 2, 2}));
}

// Softmax-1: the input is coerced to 2-d at `axis` (default 1) and normalised over the rest.
TEST(OnnxLegacy, Softmax1NormalisesOverTheFlattenedTail) {
  ModelBuilder b(1);
  b.input({"x", kF32, {1, 2, 2}}).output({"y", kF32, {1, 2, 2}});
  b.node("Softmax", {"x"}, {"y"});
  auto y = run1(b, zeros({1, 2, 2}));
  EXPECT_EQ(y, std::vector<float>(4, 0.25f));
}

// An unknown attribute value is an UnsupportedError naming the node.
TEST(OnnxLegacy, UnsupportedAttributeValueNamesTheNode) {
  ModelBuilder b(2);
  b.input({"x", kF32, {1, 3}}).output({"y", kF32, {1, 6}});
  auto& n = b.node("Pad", {"x"}, {"y"}, "pad");
  ModelBuilder::attr_ints(n, "pads", {0, 1, 0, 2});
  ModelBuilder::attr_string(n, "mode", "wrap");
  eo::Model m = eo::load_from_bytes(b.bytes());
  try {
    m({iota({1, 3})});
    FAIL() << "no error";
  } catch (const eo::UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("node 0 'pad' (Pad-2): pad mode 'wrap' is not supported"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace

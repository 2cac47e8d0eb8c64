// ember::onnx::load and Model::run: models built in code (tests/onnx/model_builder.h) checked
// against hand-computed values, and one test per kind of bad input, each with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <malloc.h>
#include <unistd.h>

#include "../support/error_message.h"
#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;
namespace fs = std::filesystem;

using ember_test::message_of;

#define EXPECT_CONTAINS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

ModelBuilder add_model() {
  ModelBuilder b;
  b.input({"x", kF32, {2, 3}}).input({"y", kF32, {3}}).output({"z", kF32, {2, 3}});
  b.node("Add", {"x", "y"}, {"z"}, "add");
  return b;
}

TEST(OnnxLoader, RunsAGraphWithNamedInputsAndOutputs) {
  eo::Model m = eo::load_from_bytes(add_model().bytes());
  ASSERT_EQ(m.inputs().size(), 2u);
  EXPECT_EQ(m.inputs()[0].name, "x");
  EXPECT_EQ(m.inputs()[0].type, "tensor(float)");
  EXPECT_EQ(m.outputs()[0].name, "z");
  EXPECT_EQ(m.opsets(), (std::vector<std::pair<std::string, int64_t>>{{"ai.onnx", 13}}));
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor y = from_vector<float>({10, 20, 30});
  NamedTensors out = m.run({{"y", y}, {"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, "z");
  EXPECT_EQ(out[0].second.to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(m({x, y})[0].to_vector<float>(), out[0].second.to_vector<float>());
}

TEST(OnnxLoader, InitializerIsTheDefaultOfAGraphInput) {
  ModelBuilder b = add_model();
  b.initializer("y", {1, 2, 3}, {3});
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_TRUE(m.inputs()[1].has_default);
  Tensor x = zeros({2, 3});
  EXPECT_EQ(m.run({{"x", x}})[0].second.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  Tensor y = from_vector<float>({5, 5, 5});
  EXPECT_EQ(m.run({{"x", x}, {"y", y}})[0].second.to_vector<float>(), std::vector<float>(6, 5));
}

TEST(OnnxLoader, OpsetSixBroadcastAttribute) {  // Add-6: broadcast=1 with axis aligns b at axis
  ModelBuilder b(6);
  b.input({"x", kF32, {2, 3}}).input({"y", kF32, {2}}).output({"z", kF32, {2, 3}});
  auto& n = b.node("Add", {"x", "y"}, {"z"});
  ModelBuilder::attr_int(n, "broadcast", 1);
  ModelBuilder::attr_int(n, "axis", 0);
  eo::Model m = eo::load_from_bytes(b.bytes());
  Tensor out = m({zeros({2, 3}), from_vector<float>({1, 2})})[0];
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

TEST(OnnxLoader, ExternalData) {
  const fs::path dir = fs::temp_directory_path() / ("ember-onnx-ext-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<float> w = {7, 8, 9};
  std::ofstream(dir / "weights.bin", std::ios::binary)
      .write("pad!", 4)
      .write(reinterpret_cast<const char*>(w.data()), 12);
  auto external = [&](const std::string& location, const std::string& offset) {
    ModelBuilder b = add_model();
    auto& t = b.initializer("y", {}, {3});
    t.clear_raw_data();
    t.set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* kv = t.add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    kv = t.add_external_data();
    kv->set_key("offset");
    kv->set_value(offset);
    return b.bytes();
  };
  eo::Model m = eo::load_from_bytes(external("weights.bin", "4"), dir.string());
  EXPECT_EQ(m.run({{"x", zeros({2, 3})}})[0].second.to_vector<float>(),
            (std::vector<float>{7, 8, 9, 7, 8, 9}));
  EXPECT_CONTAINS(
      message_of<IOError>([&] { eo::load_from_bytes(external("weights.bin", "8"), dir.string()); }),
      "external data holds 8 bytes, the shape needs 12");
  EXPECT_CONTAINS(message_of<IOError>(
                      [&] { eo::load_from_bytes(external("../weights.bin", "4"), dir.string()); }),
                  "leaves the model's directory");
  EXPECT_CONTAINS(
      message_of<IOError>([&] { eo::load_from_bytes(external("absent.bin", "0"), dir.string()); }),
      "cannot open external data file");
  fs::remove_all(dir);
}

TEST(OnnxLoader, MissingTruncatedAndMalformedFiles) {
  EXPECT_CONTAINS(message_of<IOError>([] { eo::load("/nonexistent/model.onnx"); }), "cannot open");
  // A directory opens as a stream on Linux and reads as zero bytes: it must not pass as "empty".
  const std::string dir = fs::temp_directory_path().string();
  EXPECT_CONTAINS(message_of<IOError>([&] { eo::load(dir); }), "'" + dir + "': it is a directory");
  const std::string good = add_model().bytes();
  EXPECT_CONTAINS(
      message_of<IOError>([&] { eo::load_from_bytes(good.substr(0, good.size() / 2)); }),
      "truncated or malformed");
  EXPECT_CONTAINS(message_of<IOError>([] { eo::load_from_bytes(""); }), "empty file");
  EXPECT_CONTAINS(message_of<IOError>([] { eo::load_from_bytes("\xff\xff\xff\xff garbage"); }),
                  "truncated or malformed");
}

TEST(OnnxLoader, CheckerRejectsAnUndefinedInput) {
  ModelBuilder b = add_model();
  b.proto().mutable_graph()->mutable_node(0)->set_input(1, "nowhere");
  EXPECT_CONTAINS(message_of<IOError>([&] { eo::load_from_bytes(b.bytes()); }),
                  "the ONNX checker rejects the model");
}

// ReduceMean-18 takes its axes as an input; ONNX 1.12's checker knows ReduceMean up to 13, where
// they are an attribute, and rejects the node: the error says the model's opset is the reason.
TEST(OnnxLoader, ACheckerRejectionOfANewerOpsetSaysSo) {
  ModelBuilder b(18);
  b.input({"x", kF32, {2, 3}}).output({"y", kF32, {2}});
  auto& axes = b.initializer("axes", {}, {1});
  const int64_t axis = 1;
  axes.set_data_type(::onnx::TensorProto::INT64);
  axes.set_raw_data(std::string(reinterpret_cast<const char*>(&axis), sizeof axis));
  b.node("ReduceMean", {"x", "axes"}, {"y"});
  const std::string m = message_of<IOError>([&] { eo::load_from_bytes(b.bytes()); });
  EXPECT_CONTAINS(m, "the ONNX checker rejects the model");
  EXPECT_CONTAINS(m, "the model imports opset 18 of ai.onnx; ember knows opsets up to 17");
  // A rejection at a known opset has no such hint.
  ModelBuilder old = add_model();
  old.proto().mutable_graph()->mutable_node(0)->set_input(1, "nowhere");
  EXPECT_EQ(message_of<IOError>([&] { eo::load_from_bytes(old.bytes()); }).find("imports opset"),
            std::string::npos);
}

TEST(OnnxLoader, OpEmberLacksNamesTheNode) {
  ModelBuilder b(15);  // Bernoulli draws random values: ember does not offer it
  b.input({"x", kF32, {2, 2}}).output({"d", kF32, {2, 2}});
  b.node("Bernoulli", {"x"}, {"d"}, "coin");
  eo::Model m = eo::load_from_bytes(b.bytes());  // a valid model: loading works
  EXPECT_EQ(m.unsupported_ops(), std::vector<std::string>{"Bernoulli"});
  EXPECT_CONTAINS(message_of<eo::UnsupportedError>([&] {
                    m({zeros({2, 2})});
                  }),
                  "node 0 'coin' (Bernoulli-15): op Bernoulli is not supported");
}

TEST(OnnxLoader, UnsupportedElementTypeNamesTheNode) {  // complex: ember lacks it
  ModelBuilder b;
  b.output({"y", ::onnx::TensorProto::COMPLEX64, {1}});
  auto& w = b.initializer("w", {1, 2}, {1});
  w.set_data_type(::onnx::TensorProto::COMPLEX64);
  b.node("Identity", {"w"}, {"y"}, "pass");
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_CONTAINS(message_of<eo::UnsupportedError>([&] { m.run({}); }),
                  "node 0 'pass' (Identity-13): initializer 'w': element type complex64 is not "
                  "supported");
}

TEST(OnnxLoader, CastToFloat16RoundsToNearestEven) {
  ModelBuilder b;
  b.input({"x", kF32, {3}}).output({"y", ::onnx::TensorProto::FLOAT16, {3}});
  auto& n = b.node("Cast", {"x"}, {"y"}, "to_half");
  ModelBuilder::attr_int(n, "to", ::onnx::TensorProto::FLOAT16);
  eo::Model m = eo::load_from_bytes(b.bytes());
  // 1 + 2^-11 is a tie (to 1, even); 65520 is the midpoint above float16's largest (to inf).
  Tensor y = m({from_vector<float>({1.00048828125f, 65520.0f, -3.5f})}).at(0);
  EXPECT_EQ(y.dtype(), kFloat16);
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1.0, INFINITY, -3.5}));
}

TEST(OnnxLoader, WrongInputs) {
  eo::Model m = eo::load_from_bytes(add_model().bytes());
  Tensor x = zeros({2, 3}), y = zeros({3});
  EXPECT_CONTAINS(message_of<ValueError>([&] {
                    m.run({{"x", x}, {"y", y}, {"w", y}});
                  }),
                  "the model has no input 'w' (its inputs: x, y)");
  EXPECT_CONTAINS(message_of<ValueError>([&] {
                    m.run({{"x", x}});
                  }),
                  "input 'y' (tensor(float)) is required");
  EXPECT_CONTAINS(message_of<DTypeError>([&] {
                    m.run({{"x", x}, {"y", y.to(kInt64)}});
                  }),
                  "input 'y': expected tensor(float), got int64");
  EXPECT_CONTAINS(message_of<ShapeError>([&] {
                    m.run({{"x", zeros({3, 2})}, {"y", y}});
                  }),
                  "input 'x': expected shape [2, 3], got [3, 2]");
}

TEST(OnnxLoader, SymbolicDimsMustAgreeAcrossInputs) {
  ModelBuilder b;
  b.input({"x", kF32, {-1}}).input({"y", kF32, {-1}}).output({"z", kF32, {-1}});
  b.node("Add", {"x", "y"}, {"z"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_EQ(m({ones({4}), ones({4})})[0].to_vector<float>(), std::vector<float>(4, 2));
  EXPECT_CONTAINS(message_of<ShapeError>([&] {
                    m({ones({4}), ones({5})});
                  }),
                  "dimension 'N' is 5 here but 4 in an earlier input");
}

TEST(OnnxLoader, ErrorsWhileBuildingANodeNameIt) {
  ModelBuilder b;  // symbolic shapes: the checker cannot see the mismatch
  b.input({"x", kF32, {-2, -3}}).input({"y", kF32, {-4}}).output({"z", kF32, {-2, -3}});
  b.node("Add", {"x", "y"}, {"z"}, "bad_add");
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_CONTAINS(message_of<ShapeError>([&] {
                    m({zeros({2, 3}), zeros({4})});
                  }),
                  "node 0 'bad_add' (Add-13): ");
}

TEST(OnnxLoader, InfoListsOpCounts) {
  ModelBuilder b;
  b.input({"x", kI64, {2}}).output({"z", kI64, {2}});
  b.node("Add", {"x", "x"}, {"t"});
  b.node("Add", {"t", "x"}, {"u"});
  b.node("Mul", {"u", "x"}, {"z"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_EQ(m.op_counts(), (std::vector<std::pair<std::string, int64_t>>{{"Add", 2}, {"Mul", 1}}));
  EXPECT_EQ(m({from_vector<int64_t>({1, 2})})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{3, 12}));
}

}  // namespace

namespace {

// Sequences and optionals pass through run_values; run() refuses a non-tensor output.
TEST(OnnxLoader, SequencesAndOptionals) {
  ModelBuilder b(15);
  b.input({"x", kF32, {2}}).input({"y", kF32, {2}});
  auto* out = b.proto().mutable_graph()->add_output();
  out->set_name("s");
  out->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kF32);
  b.output({"n", kI64, {}});
  b.node("SequenceConstruct", {"x", "y"}, {"s"});
  b.node("SequenceLength", {"s"}, {"n"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_EQ(m.outputs()[0].type, "seq(tensor(float))");
  auto r = m.run_values({{"x", from_vector<float>({1, 2})}, {"y", from_vector<float>({3, 4})}});
  ASSERT_EQ(r[0].second.kind(), eo::Value::Kind::Sequence);
  EXPECT_EQ(r[0].second.items().at(1).to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(r[1].second.tensor().item<int64_t>(), 2);
  EXPECT_CONTAINS(message_of<ValueError>([&] {
                    m.run({{"x", zeros({2})}, {"y", zeros({2})}});
                  }),
                  "output 's' is a sequence: use run_values");
  EXPECT_CONTAINS(message_of<ValueError>([&] {
                    m.run_values({{"x", eo::Value::sequence({})}, {"y", zeros({2})}});
                  }),
                  "input 'x': expected a tensor(float) value, got a sequence");
  eo::Value none = eo::Value::none();
  EXPECT_FALSE(none.has_element());
  EXPECT_CONTAINS(message_of<ValueError>([&] { none.element(); }), "the optional is empty");
}

// The weights live once after a load: the tensors hold them, and the parsed message keeps no copy
// (clear_raw_data() kept each string's memory: the growth was the initializer's 16 MiB again;
// issue 42). glibc's count of the bytes malloc handed out stands for the message's memory and the
// tensor's (the tensor takes the message's string: the one copy malloc holds); the resident set
// also counts a copy in ember's own blocks.
TEST(OnnxLoader, ALoadedModelKeepsNoCopyOfItsWeights) {
  const int64_t n = int64_t{4} << 20;
  const fs::path file =
      fs::temp_directory_path() / ("ember-onnx-weights-" + std::to_string(::getpid()) + ".onnx");
  {
    ModelBuilder b;
    b.input({"x", kF32, {n}}).output({"y", kF32, {n}});
    std::vector<float> w(static_cast<size_t>(n));
    for (size_t i = 0; i < w.size(); i++) w[i] = float(i % 1000) * 0.5f;
    b.initializer("w", w, {n});
    b.node("Add", {"x", "w"}, {"y"});
    std::ofstream(file, std::ios::binary) << b.bytes();
  }
  auto malloc_bytes = [] {
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
  };
  auto resident_bytes = [] {
    size_t pages = 0, resident = 0;
    std::ifstream("/proc/self/statm") >> pages >> resident;
    return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  };
  const size_t one_copy = size_t(n) * sizeof(float) + (size_t{4} << 20);
  eo::load_from_bytes(add_model().bytes());  // the process's first load sets up ONNX's schemas
  const size_t before = malloc_bytes(), resident = resident_bytes();
  eo::Model m = eo::load(file.string());
  EXPECT_LT(malloc_bytes() - before, one_copy) << "the parsed model keeps its weights' bytes";
  EXPECT_LT(resident_bytes() - resident, one_copy) << "the weights live twice";
  Tensor y = m({full({n}, 2.0f)})[0];
  const std::vector<float> v = y.to_vector<float>();
  for (size_t i = 0; i < v.size(); i += 4099) ASSERT_EQ(v[i], float(i % 1000) * 0.5f + 2) << i;
  fs::remove(file);
}

}  // namespace

// `ember onnx run | test | info` (apps/cmd_onnx.cpp, apps/onnx_test.cpp), run as a process on a
// model and test folder built here: outputs, exit statuses and messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/ember.h"
#include "ember/io/npy.h"
#include "ember/support/process.h"
#include "model_builder.h"

namespace {

using namespace ember;
using onnx_test::ModelBuilder;
namespace fs = std::filesystem;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;

support::ProcessResult ember_cli(std::vector<std::string> args) {
  args.insert(args.begin(), EMBER_CLI_PATH);
  return support::run_process(args);
}

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string tensor_pb(const std::string& name, const std::vector<float>& v,
                      std::vector<int64_t> dims) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kFloat);
  for (auto d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t.SerializeAsString();
}

class OnnxCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ember-onnx-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir / "test_data_set_0");
    ModelBuilder b;
    b.input({"x", kFloat, {2, 2}}).input({"y", kFloat, {2, 2}}).output({"z", kFloat, {2, 2}});
    b.node("Mul", {"x", "y"}, {"z"});
    write(dir / "model.onnx", b.bytes());
    write(dir / "test_data_set_0" / "input_0.pb", tensor_pb("x", {1, 2, 3, 4}, {2, 2}));
    write(dir / "test_data_set_0" / "input_1.pb", tensor_pb("y", {2, 2, 2, 2}, {2, 2}));
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

TEST_F(OnnxCli, TestPassesOnAMatch) {
  write(dir / "test_data_set_0" / "output_0.pb", tensor_pb("z", {2, 4, 6, 8}, {2, 2}));
  for (const char* device : {"cpu", "interp"}) {
    auto r = ember_cli({"onnx", "test", dir.string(), "--device", device});
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("ok " + dir.string() + " (1 data set)"), std::string::npos) << r.output;
  }
}

TEST_F(OnnxCli, TestPrintsTheWorstElementOfAMismatch) {
  // 6.001 is within rtol 1e-3 of 6; 9 is not within it of 8.
  write(dir / "test_data_set_0" / "output_0.pb", tensor_pb("z", {2, 4, 6.001f, 9}, {2, 2}));
  auto r = ember_cli({"onnx", "test", dir.string()});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("mismatch: output 'z' (test_data_set_0): 1 of 4 elements differ; worst "
                          "at [1, 1]: got 8, expected 9"),
            std::string::npos)
      << r.output;
}

TEST_F(OnnxCli, TestReportsAWrongShapeAndAnUnsupportedModel) {
  write(dir / "test_data_set_0" / "output_0.pb", tensor_pb("z", {2, 4, 6, 8}, {4}));
  auto r = ember_cli({"onnx", "test", dir.string()});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("shape [2, 2], expected [4]"), std::string::npos) << r.output;
  ModelBuilder b(15);  // Bernoulli draws random values: ember does not offer it
  b.input({"x", kFloat, {2, 2}}).input({"y", kFloat, {2, 2}}).output({"z", kFloat, {2, 2}});
  b.node("Bernoulli", {"x"}, {"z"});
  write(dir / "model.onnx", b.bytes());
  r = ember_cli({"onnx", "test", dir.string()});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("unsupported: node 0 (Bernoulli-15): op Bernoulli is not supported"),
            std::string::npos)
      << r.output;
}

TEST_F(OnnxCli, RunWritesEachOutputAsNpy) {
  save_npy(from_vector<float>({1, 2, 3, 4}, Shape{2, 2}), (dir / "x.npy").string());
  save_npy(full({2, 2}, 3.0), (dir / "y.npy").string());
  auto r = ember_cli({"onnx", "run", (dir / "model.onnx").string(), "--input",
                      "x=" + (dir / "x.npy").string(), "--input", "y=" + (dir / "y.npy").string(),
                      "--output-dir", (dir / "out").string()});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(load_npy((dir / "out" / "z.npy").string()).to_vector<float>(),
            (std::vector<float>{3, 6, 9, 12}));
  r = ember_cli(
      {"onnx", "run", (dir / "model.onnx").string(), "--input", "w=" + (dir / "x.npy").string()});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("the model has no input 'w' (its inputs: x, y)"), std::string::npos)
      << r.output;
  write(dir / "bad.npy", "not numpy");
  r = ember_cli(
      {"onnx", "run", (dir / "model.onnx").string(), "--input", "x=" + (dir / "bad.npy").string()});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("not an .npy file"), std::string::npos) << r.output;
}

TEST_F(OnnxCli, InfoListsTheModel) {
  auto r = ember_cli({"onnx", "info", (dir / "model.onnx").string()});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("opsets: ai.onnx 13"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x: tensor(float) [2, 2]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ember has every op of the model"), std::string::npos) << r.output;
}

}  // namespace

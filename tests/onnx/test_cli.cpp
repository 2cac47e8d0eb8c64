// `ember onnx run | test | info` (apps/cmd_onnx.cpp, apps/onnx_test.cpp), run as a process on a
// model and test folder built here: outputs, exit statuses and messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "ember/ember.h"
#include "ember/io/npy.h"
#include "ember/support/process.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace fs = std::filesystem;

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
  t.set_data_type(kF32);
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
    b.input({"x", kF32, {2, 2}}).input({"y", kF32, {2, 2}}).output({"z", kF32, {2, 2}});
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
  b.input({"x", kF32, {2, 2}}).input({"y", kF32, {2, 2}}).output({"z", kF32, {2, 2}});
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

// --repeat: inputs not given are zeros of the declared shape (symbolic dimensions from --dim,
// else 1), said on stderr; the runs are jit replays; the last run's outputs are the model's.
TEST_F(OnnxCli, RunRepeatTimesTheModel) {
  auto r = ember_cli({"onnx", "run", (dir / "model.onnx").string(), "--repeat", "3"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("input 'x' not given: zeros of float32 [2, 2]"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("3 runs (ember::jit replays, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("median "), std::string::npos) << r.output;
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex("first outputs: [0-9.]+ ms after start "
                                             "\\(model load [0-9.]+ ms\\); [0-9]+ kernels")))
      << r.output;
  // Again in a new process: the same kernels come from the disk cache, none from the compiler.
  r = ember_cli({"onnx", "run", (dir / "model.onnx").string(), "--repeat", "1"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex("([0-9]+) kernels compiled \\(0 by the compiler, ([0-9]+) from the disk "
                 "cache\\) in [0-9.]+ ms, 0 compiler processes")))
      << r.output;
  EXPECT_EQ(m[1], m[2]) << r.output;
  EXPECT_GE(std::stoi(m[1]), 1) << r.output;
  EXPECT_FALSE(fs::exists(dir / "z.npy"));  // --repeat writes outputs only when asked
  save_npy(from_vector<float>({1, 2, 3, 4}, Shape{2, 2}), (dir / "x.npy").string());
  save_npy(full({2, 2}, 3.0), (dir / "y.npy").string());
  r = ember_cli({"onnx", "run", (dir / "model.onnx").string(), "--repeat", "2", "--threads", "1",
                 "--input", "x=" + (dir / "x.npy").string(), "--input",
                 "y=" + (dir / "y.npy").string(), "--output-dir", (dir / "out").string()});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 threads"), std::string::npos) << r.output;
  EXPECT_EQ(load_npy((dir / "out" / "z.npy").string()).to_vector<float>(),
            (std::vector<float>{3, 6, 9, 12}));

  ModelBuilder b;  // x: [N, 3], y: [N, 3] -> z = x + y
  b.input({"x", kF32, {-1, 3}}).input({"y", kF32, {-1, 3}}).output({"z", kF32, {-1, 3}});
  b.node("Add", {"x", "y"}, {"z"});
  write(dir / "dyn.onnx", b.bytes());
  r = ember_cli({"onnx", "run", (dir / "dyn.onnx").string(), "--repeat", "2", "--dim", "N=5",
                 "--output-dir", (dir / "dyn").string()});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("zeros of float32 [5, 3]"), std::string::npos) << r.output;
  EXPECT_EQ(load_npy((dir / "dyn" / "z.npy").string()).to_vector<float>(),
            std::vector<float>(15, 0.0f));
  r = ember_cli({"onnx", "run", (dir / "dyn.onnx").string(), "--repeat", "1"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("zeros of float32 [1, 3] (N = 1)"), std::string::npos) << r.output;

  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--repeat", "2", "--dim", "M=2"}, "the model has no dimension named 'M'"},
           {{"--repeat", "2", "--dim", "N=x"}, "the size must be a non-negative integer"},
           {{"--repeat", "2", "--dim", "N"}, "--dim expects NAME=SIZE, got 'N'"},
           {{"--dim", "N=2"}, "--dim sizes the zero inputs of --repeat"},
           {{"--repeat", "0"}, "--repeat"},
           {{"--repeat", "2", "--input", "w=" + (dir / "x.npy").string()},
            "the model has no input 'w'"}}) {
    std::vector<std::string> a = {"onnx", "run", (dir / "dyn.onnx").string()};
    a.insert(a.end(), args.begin(), args.end());
    r = ember_cli(a);
    EXPECT_NE(r.status, 0) << args[0];
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
}

TEST_F(OnnxCli, InfoListsTheModel) {
  auto r = ember_cli({"onnx", "info", (dir / "model.onnx").string()});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("opsets: ai.onnx 13"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x: tensor(float) [2, 2]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ember has every op of the model"), std::string::npos) << r.output;
}

}  // namespace

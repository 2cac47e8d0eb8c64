// safetensors checkpoints (include/ember/serialize.h): bit-exact round trips of a module's state
// dict and of Adam's state, in-place loads (buffers keep their storage), one test per kind of
// malformed file (each must leave the module unchanged), interop with Python's `safetensors`
// package in both directions, and the `ember inspect` command.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numbers>

#include "ember/ember.h"
#include "ember/serialize.h"
#include "ir/node.h"

namespace {

namespace fs = std::filesystem;
using namespace ember;

// A tensor's elements as the raw bytes of a realized row-major buffer.
std::string raw_bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  c.realize();
  if (t.numel() == 0) return {};
  return std::string(static_cast<const char*>(c.node()->storage->data()),
                     static_cast<size_t>(t.numel()) * element_size(t.dtype()));
}

struct Snap {
  ScalarType dtype;
  Shape shape;
  std::string bytes;
  const ir::Storage* storage;
  bool operator==(const Snap&) const = default;
};
std::map<std::string, Snap> snapshot(const nn::NamedTensors& ts) {
  std::map<std::string, Snap> s;
  for (auto& [n, t] : ts) s[n] = {t.dtype(), t.sizes(), raw_bytes(t), t.node()->storage.get()};
  return s;
}
// Values only (dtype, shape, bytes), to compare two different modules.
std::map<std::string, std::string> values(const nn::NamedTensors& ts) {
  std::map<std::string, std::string> v;
  for (auto& [n, t] : ts)
    v[n] = std::string(dtype_name(t.dtype())) + ir::shape_str(t.sizes()) + ":" + raw_bytes(t);
  return v;
}
// A module's state dict: parameters and buffers.
nn::NamedTensors state(const nn::Module& m) {
  nn::NamedTensors all = m.named_parameters();
  for (auto& b : m.named_buffers()) all.push_back(b);
  return all;
}

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A safetensors file from a header text and data bytes; `length` overrides the header length.
void write_raw(const fs::path& p, const std::string& header, const std::string& data,
               std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::ofstream f(p, std::ios::binary);
  for (int i = 0; i < 8; i++) f.put(static_cast<char>(n >> (8 * i)));
  f << header << data;
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The message of the IOError that f throws ("" when it throws none).
std::string io_error(const std::function<void()>& f) try {
  f();
  return "";
} catch (const IOError& e) {
  return e.what();
}

struct RunResult {
  int status;
  std::string output;  // stdout and stderr
};
RunResult run(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// An MLP with buffers of every dtype, including special float values (NaN payload, -0.0, inf,
// subnormals) and 0-d and empty tensors; `seed` changes every value.
struct Net : nn::Module {
  explicit Net(uint64_t seed) {
    manual_seed(seed);
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, 2));
    const float s = static_cast<float>(seed);
    register_buffer(
        "stats", from_vector<float>({s, seed % 2 ? -0.0f : 0.0f,
                                     std::bit_cast<float>(0x7fc01234u + uint32_t(seed)), 1e-40f * s,
                                     -std::numeric_limits<float>::infinity()}));
    register_buffer("var", full({}, 1.0 / (3.0 + s), kFloat64).clone());
    register_buffer("counts",
                    from_vector<int64_t>({int64_t(seed), -int64_t(seed),
                                          std::numeric_limits<int64_t>::max() - int64_t(seed)}));
    register_buffer("ids", from_vector<int32_t>({1, -2, 3, int32_t(seed)}, IntList{2, 2}));
    register_buffer("mask", from_vector<bool>({seed % 2 == 1, true, false, seed % 2 == 0, true}));
    register_buffer("bytes", from_vector<uint8_t>({uint8_t(seed), 0, 255}));
    register_buffer("empty", zeros({0, 2}));
  }
  Tensor forward(const Tensor& x) const { return fc2(fc1(x).tanh()); }
  nn::Linear fc1, fc2;
};

// The small module the malformed-file tests load into: w F32 [2, 3] and n I64 [2].
struct Small : nn::Module {
  Small() {
    register_parameter("w", from_vector<float>({-1, -2, -3, -4, -5, -6}, IntList{2, 3}));
    register_buffer("n", from_vector<int64_t>({-7, -8}));
  }
};
const std::string kWData = bytes_of(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
const std::string kNData = bytes_of(std::vector<int64_t>{70, 80});
const std::string kGoodHeader = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                                R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) /
          ("ember_ckpt_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A safetensors file from these parts must be rejected (expect_file_rejected).
  void expect_rejected(const std::string& header, const std::string& data,
                       const std::string& reason, std::optional<uint64_t> length = std::nullopt) {
    const fs::path file = dir / "bad.safetensors";
    write_raw(file, header, data, length);
    expect_file_rejected(file, reason);
  }
  // Loading `file` into a Small must throw IOError naming the file and containing `reason`, on
  // one line, and change nothing.
  void expect_file_rejected(const fs::path& file, const std::string& reason) {
    Small m;
    const auto before = snapshot(state(m));
    const std::string msg = io_error([&] { load(m, file.string()); });
    EXPECT_NE(msg.find("'" + file.string() + "': "), std::string::npos) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(snapshot(state(m)), before) << "a failed load changed the module";
  }

  fs::path dir;
};

// ---- round trips --------------------------------------------------------------------------------

TEST_F(Checkpoint, ModuleRoundTripIsBitExact) {
  Net a(1), b(2);
  ASSERT_NE(values(state(a)), values(state(b)));
  const std::string path = (dir / "net.safetensors").string();
  save(a, path);
  load(b, path);
  EXPECT_EQ(values(state(b)), values(state(a)));
  // The file holds the state dict under libtorch's names, in registration order.
  TensorFile f = load_file(path);
  EXPECT_EQ(f.tensors.front().first + " " + f.tensors.back().first, "fc1.weight empty");
  EXPECT_EQ(values(f.tensors), values(state(a)));
}

TEST_F(Checkpoint, ModuleHolderRoundTrip) {
  auto mlp = [](uint64_t seed) {
    manual_seed(seed);
    return nn::Sequential(nn::Linear(2, 3), nn::Tanh(), nn::Linear(3, 1));
  };
  nn::Sequential a = mlp(1), b = mlp(2);
  const std::string path = (dir / "seq.safetensors").string();
  save(a, path);
  load(b, path);
  EXPECT_EQ(values(state(*b)), values(state(*a)));
  EXPECT_EQ(load_file(path).tensors.at(2).first, "2.weight");
}

TEST_F(Checkpoint, LoadWritesInPlace) {
  Net a(1), b(2);
  const std::string path = (dir / "net.safetensors").string();
  save(a, path);
  const auto before = snapshot(state(b));
  Tensor w = b.fc1->weight;  // a second handle to the same parameter
  load(b, path);
  const auto after = snapshot(state(b));
  for (auto& [name, s] : before) {
    ASSERT_EQ(after.at(name).storage, s.storage) << name << " got a new buffer";
    if (!s.bytes.empty()) {
      EXPECT_NE(after.at(name).bytes, s.bytes) << name << " was not written";
    }
  }
  EXPECT_EQ(raw_bytes(w), raw_bytes(a.fc1->weight));
  EXPECT_TRUE(b.fc1->weight.requires_grad());
}

TEST_F(Checkpoint, LoadOverridesPendingInPlaceUpdate) {
  Net a(1), b(2);
  const std::string path = (dir / "net.safetensors").string();
  save(a, path);
  const ir::Storage* storage = b.fc2->bias.node()->storage.get();
  NoGradGuard g;
  b.fc2->bias.mul_(2.0);  // lazy, not yet realized
  load(b, path);
  EXPECT_EQ(b.fc2->bias.node()->storage.get(), storage);
  EXPECT_EQ(values(state(b)), values(state(a)));
}

TEST_F(Checkpoint, JitReplayReadsLoadedWeights) {  // the replay binds the buffers by identity
  Net a(1), b(2);
  const std::string path = (dir / "net.safetensors").string();
  save(a, path);
  auto f =
      jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{b.forward(in[0])}; });
  const Tensor x = from_vector<float>({0.5f, -1, 2, 0.25f, 1, 1, -3, 0}, IntList{2, 4});
  for (int i = 0; i < 3; i++) f({x});  // run, capture, replay
  ASSERT_EQ(f.replays(), 1);
  load(b, path);
  const Tensor y = f({x})[0];
  EXPECT_EQ(f.replays(), 2);
  EXPECT_EQ(y.to_vector<float>(), a.forward(x).to_vector<float>());
}

void train_step(Net& net, optim::Optimizer& opt, int k) {
  std::vector<float> xs(16 * 4), ys(16 * 2);
  for (size_t i = 0; i < xs.size(); i++) xs[i] = std::sin(0.37f * float(i) + float(k));
  for (size_t i = 0; i < ys.size(); i++) ys[i] = std::cos(0.21f * float(i) - float(k));
  opt.zero_grad();
  Tensor loss = nn::functional::mse_loss(net.forward(from_vector(xs, IntList{16, 4})),
                                         from_vector(ys, IntList{16, 2}));
  loss.backward();
  opt.step();
}

TEST_F(Checkpoint, AdamStateRoundTripResumesTrainingBitExactly) {
  Net a(1), b(2);
  optim::Adam opt_a(a.parameters(), optim::AdamOptions(0.0123));
  for (int k = 0; k < 3; k++) train_step(a, opt_a, k);
  const std::string model = (dir / "model.safetensors").string();
  const std::string adam_path = (dir / "adam.safetensors").string();
  save(a, model);
  save(opt_a, adam_path);

  optim::Adam opt_b(b.parameters(), optim::AdamOptions(0.5));
  const auto before = snapshot(opt_b.state());
  load(b, model);
  load(opt_b, adam_path);
  EXPECT_EQ(opt_b.lr(), 0.0123);
  EXPECT_EQ(values(opt_b.state()), values(opt_a.state()));
  const auto after = snapshot(opt_b.state());
  for (auto& [name, s] : before) EXPECT_EQ(after.at(name).storage, s.storage) << name;
  EXPECT_EQ(load_file(adam_path).metadata.at("lr"), "0.0123");

  // One more identical step on both: the same parameters, bit for bit.
  train_step(a, opt_a, 3);
  train_step(b, opt_b, 3);
  EXPECT_EQ(values(state(b)), values(state(a)));
  EXPECT_EQ(values(opt_b.state()), values(opt_a.state()));
}

TEST_F(Checkpoint, OptimizerOfAnotherKindIsRejectedUnchanged) {
  Net a(1);
  optim::Adam adam(a.parameters(), optim::AdamOptions(0.01));
  train_step(a, adam, 0);
  const std::string path = (dir / "adam.safetensors").string();
  save(adam, path);
  optim::SGDOptions so(0.1);
  so.momentum = 0.9;
  optim::SGD sgd(a.parameters(), so);
  const auto before = snapshot(sgd.state());
  const std::string msg = io_error([&] { load(sgd, path); });
  EXPECT_NE(msg.find("missing key(s) '0.momentum_buffer'"), std::string::npos) << msg;
  EXPECT_EQ(snapshot(sgd.state()), before);
  EXPECT_EQ(sgd.lr(), 0.1);
}

TEST_F(Checkpoint, OptimizerFileWithoutLrIsRejectedUnchanged) {
  Net a(1);
  optim::Adam adam(a.parameters(), optim::AdamOptions(0.01));
  const std::string path = (dir / "state.safetensors").string();
  nn::NamedTensors other;
  for (auto& [n, t] : adam.state()) other.emplace_back(n, full_like(t, 3.0).clone());
  const auto before = snapshot(adam.state());
  for (const Metadata& md : {Metadata{}, Metadata{{"lr", "-1"}}, Metadata{{"lr", "0.1x"}}}) {
    save(other, path, md);  // the right tensors, but no valid "lr"
    EXPECT_NE(io_error([&] { load(adam, path); }).find("\"lr\""), std::string::npos);
    EXPECT_EQ(snapshot(adam.state()), before);
  }
  EXPECT_EQ(adam.lr(), 0.01);
}

TEST_F(Checkpoint, GenericSaveAndLoadFile) {
  Tensor m = from_vector<float>({1, 2, 3, 4, 5, 6}, IntList{2, 3});
  nn::NamedTensors ts{{"transposed", m.t()},  // a view: saved in its own row-major order
                      {"lazy", m * 2.0},
                      {"scalar", full({}, int64_t{42}, kInt64)}};
  const std::string path = (dir / "t.safetensors").string();
  save(ts, path, {{"format", "ember"}, {"note", "x\"y\\z"}});
  TensorFile f = load_file(path);
  EXPECT_EQ(f.metadata, (Metadata{{"format", "ember"}, {"note", "x\"y\\z"}}));
  EXPECT_EQ(values(f.tensors),
            values({{"transposed", from_vector<float>({1, 4, 2, 5, 3, 6}, IntList{3, 2})},
                    {"lazy", from_vector<float>({2, 4, 6, 8, 10, 12}, IntList{2, 3})},
                    {"scalar", full({}, int64_t{42}, kInt64)}}));
  // The layout: header length, then a space-padded header that is a multiple of 8 bytes.
  const std::string bytes = read_all(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.size(), 8 + n + 6 * 4 * 2 + 8);
}

TEST_F(Checkpoint, SaveIsAtomicAndLeavesNoTemporaryFiles) {
  const fs::path path = dir / "t.safetensors";
  save(nn::NamedTensors{{"a", ones({3})}}, path.string());
  save(nn::NamedTensors{{"a", zeros({4})}}, path.string());  // replaces
  EXPECT_EQ(load_file(path.string()).tensors.at(0).second.sizes(), Shape{4});
  const std::string second = read_all(path);  // a failing save leaves it untouched
  EXPECT_THROW(save(nn::NamedTensors{{"a", ones({1})}, {"a", ones({1})}}, path.string()), IOError);
  EXPECT_THROW(save(nn::NamedTensors{{"__metadata__", ones({1})}}, path.string()), IOError);
  EXPECT_EQ(read_all(path), second);
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(dir)) entries += e.path() != path;
  EXPECT_EQ(entries, 0u) << "temporary files were left behind";
  // A directory that does not exist: IOError naming the file.
  const std::string nowhere = (dir / "no" / "such" / "dir.safetensors").string();
  const std::string msg = io_error([&] { save(nn::NamedTensors{{"a", ones({1})}}, nowhere); });
  EXPECT_NE(msg.find(nowhere), std::string::npos) << msg;
}

// ---- malformed files: one test per problem; each leaves the module unchanged --------------------

TEST_F(Checkpoint, CraftedGoodFileLoads) {  // the baseline every malformed case below mutates
  write_raw(dir / "good.safetensors", kGoodHeader, kWData + kNData);
  Small m;
  load(m, (dir / "good.safetensors").string());
  EXPECT_EQ(raw_bytes(m.named_parameters()[0].second), kWData);
  EXPECT_EQ(raw_bytes(m.named_buffers()[0].second), kNData);
}

TEST_F(Checkpoint, MissingFile) {
  Small m;
  const std::string path = (dir / "absent.safetensors").string();
  const std::string msg = io_error([&] { load(m, path); });
  EXPECT_NE(msg.find(path + "': cannot open"), std::string::npos) << msg;
}

TEST_F(Checkpoint, TruncatedBeforeHeaderLength) {
  const fs::path file = dir / "bad.safetensors";
  std::ofstream(file, std::ios::binary).write("\x10\0\0", 3);
  expect_file_rejected(file, "truncated: 3 bytes, shorter than the 8-byte header length");
}

TEST_F(Checkpoint, TruncatedData) {
  expect_rejected(kGoodHeader, (kWData + kNData).substr(0, 36), "run past the end of the data");
}

TEST_F(Checkpoint, HeaderLengthPastEndOfFile) {
  expect_rejected(kGoodHeader, kWData + kNData, "runs past the end of the file", 100000);
}

TEST_F(Checkpoint, BadJson) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],)", kWData + kNData, "not valid JSON");
  expect_rejected("", kWData + kNData, "not valid JSON");  // header length 0
}

TEST_F(Checkpoint, HeaderNotAnObject) {
  expect_rejected("[1, 2, 3]", kWData + kNData, "not a JSON object");
}

TEST_F(Checkpoint, OffsetsOutOfRange) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[32,48]}})",
                  kWData + kNData, "run past the end of the data (40 bytes");
}

TEST_F(Checkpoint, OffsetsOverlap) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[16,32]}})",
                  (kWData + kNData).substr(0, 32), "overlap");
}

TEST_F(Checkpoint, OffsetsLeaveAGap) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[32,48]}})",
                  kWData + std::string(8, '\0') + kNData, "belong to no tensor");
}

TEST_F(Checkpoint, OffsetsDoNotCoverTrailingData) {
  expect_rejected(kGoodHeader, kWData + kNData + std::string(8, '\0'), "cover only 40");
}

TEST_F(Checkpoint, OffsetsDisagreeWithShape) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[20,36]}})",
                  (kWData + kNData).substr(0, 36),
                  "hold 20 bytes but shape [2, 3] of F32 needs 24");
}

TEST_F(Checkpoint, OffsetsReversed) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[24,0]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "end before they begin");
}

TEST_F(Checkpoint, UnknownDtype) {
  expect_rejected(R"({"w":{"dtype":"F17","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "unknown dtype 'F17'");
}

TEST_F(Checkpoint, UnsupportedDtype) {
  expect_rejected(R"({"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[12,28]}})",
                  kWData.substr(0, 12) + kNData, "dtype F16 is not supported");
}

TEST_F(Checkpoint, MissingKey) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", kWData,
                  "missing key(s) 'n'");
}

TEST_F(Checkpoint, UnexpectedKey) {
  expect_rejected(kGoodHeader.substr(0, kGoodHeader.size() - 1) +
                      R"(,"extra":{"dtype":"U8","shape":[1],"data_offsets":[40,41]}})",
                  kWData + kNData + "x", "unexpected key(s) 'extra'");
}

TEST_F(Checkpoint, ShapeMismatch) {  // the first tensor is fine: nothing may be written
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[1,2],"data_offsets":[24,40]}})",
                  kWData + kNData, "'n': shape mismatch: file has [1, 2], the tensor is [2]");
}

TEST_F(Checkpoint, DtypeMismatch) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"F64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "'n': dtype mismatch: file has F64, the tensor is I64");
}

TEST_F(Checkpoint, DuplicateKey) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("w":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "'w' appears twice");
}

TEST_F(Checkpoint, MalformedEntries) {
  expect_rejected(R"({"w":{"dtype":"F32","data_offsets":[0,24]}})", kWData,
                  "missing field 'shape'");
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24],"x":1}})", kWData,
                  "unexpected field 'x'");
  expect_rejected(R"({"w":{"dtype":"F32","shape":[-2,3],"data_offsets":[0,24]}})", kWData,
                  "not a non-negative integer");
  expect_rejected(
      R"({"__metadata__":{"a":1},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", kWData,
      "value of 'a' is not a string");
}

// ---- interop with Python's safetensors ----------------------------------------------------------

// The SPEC format of scripts/safetensors_interop.py: each element's raw bits as an integer.
std::string spec_json(const nn::NamedTensors& ts, const Metadata& md) {
  std::string s = "{\"tensors\": {";
  for (size_t i = 0; i < ts.size(); i++) {
    const Tensor& t = ts[i].second;
    const std::string b = raw_bytes(t);
    const size_t w = element_size(t.dtype());
    s += (i ? ", \"" : "\"") + ts[i].first + "\": {\"dtype\": \"" + safetensors_dtype(t.dtype()) +
         "\", \"shape\": [";
    for (size_t d = 0; d < t.sizes().size(); d++) {
      if (d) s += ",";
      s += std::to_string(t.sizes()[d]);
    }
    s += "], \"bits\": [";
    for (size_t k = 0; k < b.size() / w; k++) {
      uint64_t v = 0;
      std::memcpy(&v, b.data() + k * w, w);
      if (k) s += ",";
      s += std::to_string(v);
    }
    s += "]}";
  }
  s += "}, \"metadata\": {";
  size_t i = 0;
  for (auto& [k, v] : md) s += (i++ ? ", \"" : "\"") + k + "\": \"" + v + "\"";
  return s + "}}";
}

class PythonInterop : public Checkpoint {
 protected:
  void SetUp() override {
    const char* env = std::getenv("EMBER_SOURCE_DIR");  // set by ctest; else the configure-time dir
    const std::string source_dir = env ? env : EMBER_SOURCE_DIR;
    python = source_dir + "/.venv/bin/python";
    if (!fs::exists(python))
      GTEST_SKIP() << python << " is missing: run `bash scripts/python-venv.sh` (make test does)";
    Checkpoint::SetUp();
    script = source_dir + "/scripts/safetensors_interop.py";
  }
  RunResult interop(const std::string& args) {
    return run("'" + python + "' '" + script + "' " + args);
  }
  std::string python, script;
};

nn::NamedTensors every_dtype() {
  nn::NamedTensors ts = state(Net(3));
  ts.emplace_back("f64_matrix",
                  from_vector<double>({-0.0, 1e-310, std::numbers::pi, -1e300}, IntList{2, 2}));
  return ts;
}

TEST_F(PythonInterop, EmberFileLoadsInPython) {
  const nn::NamedTensors ts = every_dtype();
  const Metadata md{{"format", "pt"}, {"written_by", "ember"}};
  const fs::path file = dir / "ember.safetensors", spec = dir / "spec.json";
  save(ts, file.string(), md);
  std::ofstream(spec) << spec_json(ts, md);
  RunResult r = interop("check '" + file.string() + "' '" + spec.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ok: 12 tensors match"), std::string::npos) << r.output;
}

TEST_F(PythonInterop, PythonFileLoadsInEmber) {
  const nn::NamedTensors ts = every_dtype();
  const Metadata md{{"source", "python"}};
  const fs::path file = dir / "python.safetensors", spec = dir / "spec.json";
  std::ofstream(spec) << spec_json(ts, md);
  RunResult r = interop("write '" + spec.string() + "' '" + file.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  TensorFile f = load_file(file.string());
  EXPECT_EQ(f.metadata, md);
  EXPECT_EQ(values(f.tensors), values(ts));
  // And into a module's existing buffers, in place.
  Net n(1), want(3);
  std::ofstream(spec) << spec_json(state(want), {});
  r = interop("write '" + spec.string() + "' '" + file.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto before = snapshot(state(n));
  load(n, file.string());
  EXPECT_EQ(values(state(n)), values(state(want)));
  for (auto& [name, s] : snapshot(state(n))) EXPECT_EQ(s.storage, before.at(name).storage) << name;
}

// ---- ember inspect ------------------------------------------------------------------------------

TEST_F(Checkpoint, InspectListsTensors) {
  const fs::path file = dir / "small.safetensors";
  save(nn::NamedTensors{{"w", from_vector<float>({-1.5f, 2, 0.5f, 1}, IntList{2, 2})},
                        {"n", from_vector<int64_t>({3, 7})},
                        {"empty", zeros({0})}},
       file.string(), {{"lr", "0.001"}});
  RunResult r = run(std::string("'") + EMBER_CLI_PATH + "' inspect '" + file.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("3 tensors, 6 elements, 32 data bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("metadata lr = 0.001"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NAME   DTYPE  SHAPE    MIN  MAX  MEAN"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("w      F32    [2, 2]  -1.5    2   0.5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("n      I64    [2]        3    7     5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("empty  F32    [0]        -    -     -"), std::string::npos) << r.output;
}

TEST_F(Checkpoint, InspectRejectsMalformedFile) {
  const fs::path file = dir / "bad.safetensors";
  write_raw(file, kGoodHeader, kWData);  // data truncated
  RunResult r = run(std::string("'") + EMBER_CLI_PATH + "' inspect '" + file.string() + "'");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.rfind("ember: error: safetensors file '" + file.string() + "': ", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find("run past the end of the data"), std::string::npos) << r.output;
}

}  // namespace

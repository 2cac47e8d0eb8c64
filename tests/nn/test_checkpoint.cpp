// safetensors checkpoints (include/ember/serialize.h): bit-exact round trips of a module's state
// dict and of Adam's state, in-place loads (buffers keep their storage) and the `ember inspect`
// command. Malformed files: test_checkpoint_malformed.cpp; Python interop:
// test_checkpoint_python.cpp.
#include "checkpoint_fixture.h"

namespace {

using namespace ember_checkpoint_test;
using namespace ember;
namespace fs = std::filesystem;

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

// Every dtype keeps its bytes, with safetensors' dtype names (the header's "dtype").
TEST_F(Checkpoint, EveryDtypeRoundTripsBitExactly) {
  const Tensor x = from_vector<double>({1.5, -2.0, 65504.0, 3e-8, 1e38});
  NamedTensors ts;
  for (ScalarType t : {kFloat16, kBFloat16, kInt8, kInt16, kUInt16, kUInt32, kUInt64})
    ts.push_back({safetensors_dtype(t), t == kUInt64 ? x.abs().to(t) - 1 : x.to(t)});
  const std::string path = (dir / "dtypes.safetensors").string();
  save(ts, path);
  TensorFile f = load_file(path);
  ASSERT_EQ(f.tensors.size(), ts.size());
  for (size_t i = 0; i < ts.size(); i++) {
    EXPECT_EQ(f.tensors[i].first, ts[i].first);
    EXPECT_EQ(f.tensors[i].second.dtype(), ts[i].second.dtype());
    EXPECT_EQ(raw_bytes(f.tensors[i].second), raw_bytes(ts[i].second)) << ts[i].first;
  }
  std::vector<std::string> names;
  for (auto& [n, t] : ts) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"F16", "BF16", "I8", "I16", "U16", "U32", "U64"}));
  // uint64 holds 0 - 1 as 2^64 - 1 (a wrap, not a float conversion).
  EXPECT_EQ(f.tensors[6].second.to_vector<uint64_t>()[1], uint64_t{1});
  EXPECT_EQ((zeros({1}, kUInt64) - 1).to_vector<uint64_t>()[0], UINT64_MAX);
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
  const void* storage = b.fc2->bias.storage_id();
  NoGradGuard g;
  b.fc2->bias.mul_(2.0);  // lazy, not yet realized
  load(b, path);
  EXPECT_EQ(b.fc2->bias.storage_id(), storage);
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

// Per-parameter step counts survive a save and load: fc2's parameters miss two of four steps.
TEST_F(Checkpoint, PerParameterStepsRoundTrip) {
  for (bool adam : {true, false}) {
    SCOPED_TRACE(adam ? "Adam" : "SGD");
    Net a(1), b(2);
    optim::SGDOptions so(0.05);
    so.momentum = 0.9;
    auto make = [&](Net& n) -> std::unique_ptr<optim::Optimizer> {
      if (adam) return std::make_unique<optim::Adam>(n.parameters(), optim::AdamOptions(0.01));
      return std::make_unique<optim::SGD>(n.parameters(), so);
    };
    auto opt_a = make(a), opt_b = make(b);
    for (int k = 0; k < 4; k++) {
      opt_a->zero_grad();
      Tensor x = full({3, 4}, 0.1 * (k + 1));
      Tensor loss = k % 2 ? a.forward(x).square().sum() : a.fc1(x).square().sum();
      loss.backward();
      opt_a->step();
    }
    EXPECT_EQ(opt_a->steps().to_vector<float>(), (std::vector<float>{4, 4, 2, 2}));
    const std::string path = (dir / "opt.safetensors").string(),
                      model = (dir / "m.safetensors").string();
    save(*opt_a, path);
    save(a, model);
    load(b, model);
    load(*opt_b, path);
    EXPECT_EQ(values(opt_b->state()), values(opt_a->state()));
    train_step(a, *opt_a, 5);
    train_step(b, *opt_b, 5);
    EXPECT_EQ(values(state(b)), values(state(a)));
  }
}

// The layout of a checkpoint written before the counts were per parameter: one 0-d count under
// the legacy name in place of "steps".
nn::NamedTensors legacy_layout(const optim::Optimizer& opt, float count) {
  nn::NamedTensors old;
  for (auto& [name, t] : opt.state())
    if (name != "steps") old.emplace_back(name, t);
  old.emplace_back(opt.legacy_step_name(), full({}, count, kFloat32));
  return old;
}

// Files from before per-parameter steps load: every parameter's count is the file's global one,
// and training resumes as it would have (Adam's "step" = 3 after three steps; SGD's
// "first_step" = 0 after its first, 1 before it).
TEST_F(Checkpoint, LegacyOptimizerFilesLoadWithTheGlobalStep) {
  const std::string path = (dir / "legacy.safetensors").string();
  {
    Net a(1), b(2);
    optim::Adam opt_a(a.parameters(), optim::AdamOptions(0.01)),
        opt_b(b.parameters(), optim::AdamOptions(0.5));
    for (int k = 0; k < 3; k++) train_step(a, opt_a, k);
    save(legacy_layout(opt_a, 3.0f), path, {{kOptimizerLrKey, "0.01"}});
    save(a, (dir / "m.safetensors").string());
    load(b, (dir / "m.safetensors").string());
    load(opt_b, path);
    EXPECT_EQ(opt_b.steps().to_vector<float>(), std::vector<float>(4, 3.0f));
    EXPECT_EQ(opt_b.lr(), 0.01);
    train_step(a, opt_a, 3);
    train_step(b, opt_b, 3);
    EXPECT_EQ(values(state(b)), values(state(a)));
  }
  for (int done : {0, 2}) {
    SCOPED_TRACE("SGD after " + std::to_string(done) + " steps");
    Net a(1), b(2);
    optim::SGDOptions so(0.05);
    so.momentum = 0.9;
    optim::SGD opt_a(a.parameters(), so), opt_b(b.parameters(), so);
    for (int k = 0; k < done; k++) train_step(a, opt_a, k);
    save(legacy_layout(opt_a, done ? 0.0f : 1.0f), path, {{kOptimizerLrKey, "0.05"}});
    save(a, (dir / "m.safetensors").string());
    load(b, (dir / "m.safetensors").string());
    load(opt_b, path);
    EXPECT_EQ(opt_b.steps().to_vector<float>(), std::vector<float>(4, done ? 1.0f : 0.0f));
    train_step(a, opt_a, 3);
    train_step(b, opt_b, 3);
    EXPECT_EQ(values(state(b)), values(state(a)));
  }
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

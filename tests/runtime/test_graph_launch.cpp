// Jit replays handed to a device as one sequence (engine/graph_launch.h, Device::launch_graph:
// cuda's CUDA graphs), checked without a GPU: "graph-check" is the opencl device's memory and
// programs (PoCL here) behind a device that runs each sequence it is handed in order and counts
// them. A jitted training step of a model that lives there must replay through it and match
// eager cpu. The CUDA graphs themselves run in scripts/gpu_check.sh (CudaGraph.*,
// tests/runtime/test_cuda.cpp). Skipped, with the reason, where opencl is unavailable.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "ember/error.h"
#include "runtime/device.h"

namespace ember::runtime {
namespace {

class GraphCheckDevice : public Device {
 public:
  std::string name() const override { return "graph-check"; }
  bool own_memory() const override { return true; }
  DeviceBuffer allocate(size_t bytes) override { return cl().allocate(bytes); }
  void free(DeviceBuffer b) override { cl().free(b); }
  void copy_in(DeviceBuffer dst, const void* src, size_t bytes) override {
    cl().copy_in(dst, src, bytes);
  }
  void copy_out(void* dst, DeviceBuffer src, size_t bytes) override {
    cl().copy_out(dst, src, bytes);
  }
  void copy(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    cl().copy(dst, src, bytes);
  }
  // opencl's programs, taking this device's buffers (the same cl_mem handles).
  std::vector<std::shared_ptr<Program>> prepare(
      const std::vector<const schedule::Kernel*>& kernels) override {
    auto programs = cl().prepare(kernels);
    for (auto& p : programs) p->memory = this;
    return programs;
  }
  void build(const std::vector<std::shared_ptr<Program>>& programs) override {
    cl().build(programs);
  }
  bool launch_graph(uint64_t key, const std::vector<SequenceStep>& steps) override {
    sequences++;
    keys.insert(key);
    for (const SequenceStep& s : steps) {
      if (s.program)
        s.program->launch(s.args.data());
      else
        copies++, copy({s.args[0], s.bytes}, {s.args[1], s.bytes}, s.bytes);
    }
    return true;
  }

  int sequences = 0, copies = 0;
  std::set<uint64_t> keys;

 private:
  static Device& cl() { return get_device("opencl"); }
};

GraphCheckDevice& graph_check() {
  static GraphCheckDevice d;
  return d;
}

class GraphLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      get_device("opencl");
    } catch (const ValueError& e) {
      GTEST_SKIP() << e.what();
    }
    register_device("graph-check", graph_check());
  }
};

// Distinct, non-trivial values in [-1, 1).
Tensor values(std::vector<int64_t> shape, float step) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = std::fmod(step * float(i), 2.0f) - 1.0f;
  return from_vector(v).reshape(shape);
}

struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;
};

// Five Adam steps of a small model on `device` (jitted: the second call captures, the later
// ones replay), each on a new batch.
Trained train(const std::string& device, bool jit) {
  manual_seed(3);
  nn::Sequential net(nn::Linear(6, 16), nn::Tanh(), nn::Linear(16, 3));
  net->to(device);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  auto step = [&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss(net->forward(in[0]), in[1]);
    loss.backward();
    opt.step();
    return std::vector<Tensor>{loss};
  };
  Jit jitted = ember::jit(step);
  Trained r;
  for (int i = 0; i < 5; i++) {
    const std::vector<Tensor> in = {values({8, 6}, 0.37f + 0.05f * float(i)).to(device),
                                    values({8, 3}, 0.61f + 0.03f * float(i)).to(device)};
    const std::vector<Tensor> out = jit ? jitted(in) : step(in);
    EXPECT_EQ(out[0].device().str(), ember::Device(device).str());
    r.losses.push_back(out[0].item<float>());
  }
  for (const Tensor& p : net->parameters()) r.params.push_back(p.to_vector<float>());
  return r;
}

TEST_F(GraphLaunch, JitReplaysRunAsOneSequenceAndMatchCpu) {
  const int before = graph_check().sequences;
  const Trained got = train("graph-check", true);
  EXPECT_EQ(graph_check().sequences - before, 3);  // calls 3 to 5 replay
  EXPECT_EQ(graph_check().keys.size(), 1u);
  // The step's list copies on the device too (a parameter's old value kept for a reader): such
  // copies join the sequence.
  EXPECT_GT(graph_check().copies, 0);
  const Trained want = train("cpu", false);
  for (size_t i = 0; i < want.losses.size(); i++)
    EXPECT_NEAR(got.losses[i], want.losses[i], 1e-6 + 1e-3 * std::abs(want.losses[i])) << i;
  ASSERT_EQ(got.params.size(), want.params.size());
  for (size_t i = 0; i < want.params.size(); i++)
    for (size_t j = 0; j < want.params[i].size(); j++)
      EXPECT_NEAR(got.params[i][j], want.params[i][j], 1e-4 + 1e-3 * std::abs(want.params[i][j]))
          << "parameter " << i << " element " << j;
}

// Host tensors on the device (copied around each launch) and DEBUG=2 timing replay one launch at
// a time.
TEST_F(GraphLaunch, HostBuffersAndTimingLaunchOneByOne) {
  const int before = graph_check().sequences;
  {
    DeviceGuard g("graph-check");
    Jit f = ember::jit(
        [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2 + 1).tanh()}; });
    for (int i = 0; i < 4; i++) {
      const Tensor x = values({5, 4}, 0.3f + 0.1f * float(i));
      EXPECT_EQ(f({x})[0].to_vector<float>(), (x * 2 + 1).tanh().to_vector<float>());
    }
  }
  EXPECT_EQ(graph_check().sequences, before);
  struct Debug2 {  // DEBUG=2 for the scope
    int prev = std::exchange(Context::get().debug, 2);
    ~Debug2() { Context::get().debug = prev; }
  } timed;
  Jit f = ember::jit(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].exp().sum({1})}; });
  for (int i = 0; i < 4; i++) f({values({5, 4}, 0.2f).to("graph-check")});
  EXPECT_EQ(graph_check().sequences, before);
}

}  // namespace
}  // namespace ember::runtime

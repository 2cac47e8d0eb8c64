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

#include "../support/device_cases.h"
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

class GraphLaunch : public test::OnOpenCL {
 protected:
  void SetUp() override {
    test::OnOpenCL::SetUp();
    register_device("graph-check", graph_check());
  }
};

TEST_F(GraphLaunch, JitReplaysRunAsOneSequenceAndMatchCpu) {
  const int before = graph_check().sequences;
  const test::Outputs got = test::adam_steps("graph-check", true);
  EXPECT_EQ(graph_check().sequences - before, 4);  // calls 3 to 6 replay
  EXPECT_EQ(graph_check().keys.size(), 1u);
  // The step's list copies on the device too (a parameter's old value kept for a reader): such
  // copies join the sequence.
  EXPECT_GT(graph_check().copies, 0);
  test::expect_adam_steps_near(got, test::adam_steps("cpu", false));
}

// A replay of tensors that live on a device keeps every buffer there: its outputs (Tensor::device
// as eager gives it) and its intermediates (h, read twice) are made on the device, so nothing is
// copied in or out around its launches.
TEST_F(GraphLaunch, ReplaysKeepTheirBuffersOnTheDevice) {
  const Tensor w = (test::test_values({16, 16}, 1) * 0.1).to("opencl");
  auto fn = [&](const std::vector<Tensor>& in) {
    const Tensor h = in[0].matmul(w).tanh();
    return std::vector<Tensor>{(h * h).sum({1}) + h.amax({1})};
  };
  Jit f = ember::jit(fn);
  // Each call on a new input (a tensor passed before and still alive would make it capture
  // again): calls 3 to 5 replay.
  for (int i = 0; i < 5; i++) {
    const Tensor x = test::test_values({8, 16}, i + 2).to("opencl");
    x.realize();
    reset_runtime_stats();
    const Tensor out = f({x})[0];
    const RuntimeStats moved = runtime_stats();
    if (i < 2) continue;
    EXPECT_EQ(f.replays(), i - 1);
    EXPECT_EQ(moved.copies_to_device, 0) << "call " << i;
    EXPECT_EQ(moved.copies_to_host, 0) << "call " << i;
    EXPECT_EQ(out.device().str(), "opencl:0");
    const std::vector<float> got = out.to_vector<float>(), want = fn({x})[0].to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); j++) EXPECT_NEAR(got[j], want[j], 1e-5) << i << " " << j;
  }
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
      const Tensor x = test::test_values({5, 4}, i);
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
  for (int i = 0; i < 4; i++) f({test::test_values({5, 4}, 9).to("graph-check")});
  EXPECT_EQ(graph_check().sequences, before);
}

}  // namespace
}  // namespace ember::runtime

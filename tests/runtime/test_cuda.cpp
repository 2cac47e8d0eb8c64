// The cuda device (runtime/cuda/). Without a GPU: NVRTC compiles every kernel of the PPO step,
// rendered in the CUDA dialect, for sm_90 (the parity suite does the same for its kernels:
// tests/parity/parity_nvrtc.cpp), its build errors show the log and the source, and the device
// says why it is unavailable. With a GPU (scripts/gpu_check.sh): its memory, and its kernels and
// the PPO step against cpu and interp. Each case is skipped, with the reason, where it cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>
#include <utility>
#include <vector>

#include "../support/device_cases.h"
#include "../support/nvrtc_check.h"
#include "ember/ember.h"
#include "ember/error.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_update.h"
#include "runtime/cuda/cuda_device.h"

namespace ember::runtime {
namespace {

// Why NVRTC cannot be used ("" where it can): ember built without the toolkit.
std::string nvrtc_unavailable() {
  try {
    cuda_compile("extern \"C\" __global__ void probe() {}\n", "sm_90");
    return "";
  } catch (const ValueError& e) {
    return e.what();
  }
}

// Why the device cannot run ("" where it can).
std::string device_unavailable() {
  try {
    cuda_device();
    return "";
  } catch (const ValueError& e) {
    return e.what();
  }
}

// The PPO step (default policy and options: 4 x 128 tanh layers, minibatch 10,000) on `device`:
// its 8 metrics, then every parameter after the step.
std::vector<std::vector<float>> ppo_step(const std::string& device, bool jit) {
  DeviceGuard g(device);
  const int64_t m = 10000;
  std::mt19937 gen(3);
  std::normal_distribution<float> n;
  std::vector<float> obs(m * 8), act(m * 2), logp(m), adv(m), ret(m);
  for (auto* v : {&obs, &act, &logp, &adv, &ret})
    for (float& x : *v) x = n(gen);
  for (float& x : logp) x = x * 0.3f - 2.f;
  manual_seed(7);
  const rl::ActorCritic policy{rl::PolicyOptions{}};
  rl::PpoUpdateOptions o;
  o.jit = jit;
  rl::PpoLearner learner(policy, o);
  const std::vector<Tensor> in = {
      from_blob(obs.data(), {m, 8}, kFloat32), from_blob(act.data(), {m, 2}, kFloat32),
      from_blob(logp.data(), {m}, kFloat32), from_blob(adv.data(), {m}, kFloat32),
      from_blob(ret.data(), {m}, kFloat32)};
  std::vector<std::vector<float>> out;
  for (const Tensor& t : learner.step_fn()(in)) out.push_back({t.item<float>()});
  for (const Tensor& p : learner.optimizer().params()) out.push_back(p.to_vector<float>());
  return out;
}

TEST(CudaCompile, EveryKernelOfThePpoStepCompilesForSm90) {
  if (std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  test::register_nvrtc_check_device();
  test::compile_recorded("sm_90");  // nothing recorded before this case
  ppo_step("nvrtc-check", false);
  const size_t kernels = test::recorded_cuda_kernels();
  EXPECT_GT(kernels, 20u);  // forward, backward, Adam: dozens of kernels
  const std::string error = test::compile_recorded("sm_90");
  EXPECT_EQ(error, "") << "of " << kernels << " kernels";
}

// The GPU plans' edges (group reductions of odd lengths, tiled products of odd shapes: the same
// kernels as the opencl device's test) compile for sm_90.
TEST(CudaCompile, GroupReductionsAndTiledProductsCompileForSm90) {
  if (std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  test::register_nvrtc_check_device();
  test::compile_recorded("sm_90");
  test::gpu_shape_cases("nvrtc-check");
  const size_t kernels = test::recorded_cuda_kernels();
  EXPECT_GT(kernels, 20u);
  const std::string error = test::compile_recorded("sm_90");
  EXPECT_EQ(error, "") << "of " << kernels << " kernels";
}

// Bytes of the __shared__ arrays that a CUDA kernel's source declares, and how many.
std::pair<int64_t, int> shared_bytes(const std::string& src) {
  static const std::regex decl(R"(__shared__ (float|double) \w+\[(\d+)\];)");
  int64_t bytes = 0;
  int arrays = 0;
  for (std::sregex_iterator it(src.begin(), src.end(), decl), end; it != end; ++it, arrays++)
    bytes += std::stoll((*it)[2]) * ((*it)[1] == "double" ? 8 : 4);
  return {bytes, arrays};
}

// A float64 product of 14 computed operands: its panels at full depth would pass a block's 48 KiB
// of static shared memory (ptxas refuses that for sm_90); the plan keeps them within it.
TEST(CudaCompile, ManyOperandFloat64ProductFitsSharedMemory) {
  if (std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  test::register_nvrtc_check_device();
  test::compile_recorded("sm_90");
  test::many_operand_product("nvrtc-check");
  int most = 0;
  for (const std::string& src : test::recorded_cuda_sources()) {
    const auto [bytes, arrays] = shared_bytes(src);
    EXPECT_LE(bytes, 48 * 1024) << src;
    most = std::max(most, arrays);
  }
  EXPECT_GE(most, 14);  // the product is one kernel with a panel per operand
  const std::string error = test::compile_recorded("sm_90");
  EXPECT_EQ(error, "");
}

TEST(CudaCompile, ErrorShowsTheLogAndTheSource) {
  if (std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  try {
    cuda_compile("extern \"C\" __global__ void broken(float* b0) { b0[0] = undeclared_; }\n",
                 "sm_90");
    FAIL() << "an undeclared identifier compiled";
  } catch (const CompileError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("undeclared_"), std::string::npos) << m;
    EXPECT_NE(m.find("1: extern \"C\" __global__ void broken"), std::string::npos) << m;
  }
}

// Without a GPU (or a driver), the device says so, and a realize on it fails with that error.
TEST(CudaUnavailable, SaysWhyAndRealizeFails) {
  const std::string why = device_unavailable();
  if (why.empty()) GTEST_SKIP() << "a CUDA GPU is present";
  EXPECT_NE(why.find("the cuda device is unavailable"), std::string::npos) << why;
  DeviceGuard g("cuda");
  Tensor x = arange(4, kFloat32) * 2.0;
  EXPECT_THROW(x.to_vector<float>(), ValueError);
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = device_unavailable(); !why.empty()) GTEST_SKIP() << why;
    dev_ = &cuda_device();
  }
  Device* dev_ = nullptr;
};

TEST_F(CudaDevice, CopiesInOnTheDeviceAndOut) { test::expect_copies_round_trip(*dev_); }

TEST_F(CudaDevice, FreedBuffersAreReused) {
  DeviceBuffer a = dev_->allocate(3000);
  const size_t cached = cuda_cached_bytes();
  dev_->free(a);
  EXPECT_EQ(cuda_cached_bytes(), cached + 3072);  // rounded to 256 bytes
  DeviceBuffer b = dev_->allocate(2900);          // the same rounded size
  EXPECT_EQ(b.handle, a.handle);
  dev_->free(b);
}

// An in-place update, a full reduction (one block), row and column reductions, against interp.
TEST_F(CudaDevice, KernelsMatchTheInterpreter) {
  test::expect_outputs_near(test::small_kernels("cuda"), test::small_kernels("interp"), 1e-5, 1e-6);
}

// Group reductions and tiled products at the plans' edges, against interp (the fuzz tolerance).
TEST_F(CudaDevice, GroupReductionsAndTiledProductsMatchTheInterpreter) {
  test::expect_outputs_near(test::gpu_shape_cases("cuda"), test::gpu_shape_cases("interp"), 1e-4, 0,
                            1e-5);
}

// The PPO step at batch 10,000 (eager and captured) on cuda against cpu: the metrics and the
// parameters after one Adam step, within float32 summation-order tolerance.
TEST_F(CudaDevice, PpoStepMatchesCpu) {
  for (bool jit : {false, true}) {
    const auto got = ppo_step("cuda", jit), want = ppo_step("cpu", jit);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
      ASSERT_EQ(got[i].size(), want[i].size());
      for (size_t j = 0; j < want[i].size(); j++)
        ASSERT_NEAR(got[i][j], want[i][j], 1e-5 + 1e-3 * std::abs(want[i][j]))
            << (i < 8 ? "metric " : "parameter ") << i << " element " << j << " jit " << jit;
    }
  }
}

// Jit replays as CUDA graphs (cuda_graph.h): Adam steps of a model moved to cuda, jitted (calls 3
// to 6 replay as one graph), each on a new batch, against eager cpu; the graph is built once and
// relaunched, re-pointed at each replay's new buffers.
TEST_F(CudaDevice, JitReplaysRunAsCudaGraphsAndMatchCpu) {
  const CudaGraphCounts before = cuda_graph_counts();
  const test::Outputs got = test::adam_steps("cuda", true);
  const CudaGraphCounts after = cuda_graph_counts();
  EXPECT_EQ(after.launched - before.launched, 4);
  EXPECT_EQ(after.built - before.built, 1);
  test::expect_adam_steps_near(got, test::adam_steps("cpu", false));
}

}  // namespace
}  // namespace ember::runtime

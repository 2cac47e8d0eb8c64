// The opencl device's own parts (runtime/opencl/): its memory (allocate, copies both ways and on
// the device, the cache of freed buffers), its program cache and its build errors, its kernels on
// in-place updates and on a full reduction. Its values against the interpreter on random graphs
// are the codegen fuzz test's (tests/codegen/test_fuzz.cpp), against libtorch the parity subset
// (tests/parity/CMakeLists.txt). Skipped, with the reason, where the device is unavailable.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "ember/ember.h"
#include "ember/error.h"
#include "runtime/opencl/opencl_device.h"

namespace ember::runtime {
namespace {

class OpenCLDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      dev_ = &opencl_device();
    } catch (const ValueError& e) {
      GTEST_SKIP() << e.what();
    }
  }
  Device* dev_ = nullptr;
};

TEST_F(OpenCLDevice, CopiesInOnTheDeviceAndOut) {
  std::vector<float> in(1000);
  std::iota(in.begin(), in.end(), 0.5f);
  const size_t bytes = in.size() * sizeof(float);
  DeviceBuffer a = dev_->allocate(bytes), b = dev_->allocate(bytes);
  EXPECT_EQ(a.bytes, bytes);
  dev_->copy_in(a, in.data(), bytes);
  dev_->copy(b, a, bytes);
  std::vector<float> out(in.size(), -1);
  dev_->copy_out(out.data(), b, bytes);
  EXPECT_EQ(out, in);
  // A copy past a buffer's end is refused, not done.
  EXPECT_THROW(dev_->copy_out(out.data(), a, bytes + 4), Error);
  dev_->free(a);
  dev_->free(b);
}

TEST_F(OpenCLDevice, FreedBuffersAreReused) {
  const size_t bytes = 3000;
  DeviceBuffer a = dev_->allocate(bytes);
  const size_t cached = opencl_cached_bytes();
  dev_->free(a);
  EXPECT_EQ(opencl_cached_bytes(), cached + 3072);  // rounded to 256 bytes
  DeviceBuffer b = dev_->allocate(bytes - 100);     // the same rounded size
  EXPECT_EQ(b.handle, a.handle);
  EXPECT_EQ(opencl_cached_bytes(), cached);
  dev_->free(b);
}

TEST_F(OpenCLDevice, BuildsEachSourceOnce) {
  const std::string src = "__kernel void twice(__global float* b0) { b0[0] *= 2.0f; }\n";
  const int64_t before = opencl_program_builds();
  opencl_build(src);
  opencl_build(src);
  EXPECT_EQ(opencl_program_builds(), before + 1);
}

TEST_F(OpenCLDevice, BuildErrorShowsTheLogAndTheSource) {
  const std::string src = "__kernel void broken(__global float* b0) { b0[0] = undeclared_; }\n";
  try {
    opencl_build(src);
    FAIL() << "an undeclared identifier built";
  } catch (const CompileError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("undeclared_"), std::string::npos) << m;
    EXPECT_NE(m.find("1: __kernel void broken"), std::string::npos) << m;  // numbered source
  }
}

// The same storage as an output and an input of one kernel (an in-place update), a full reduction
// (one work-item), and a row reduction, against the interpreter.
TEST_F(OpenCLDevice, KernelsMatchTheInterpreter) {
  auto run = [](const char* device) {
    DeviceGuard g(device);
    Tensor x = arange(24, kFloat32).reshape({4, 6}) * 0.25 - 2.0;
    Tensor w = ones({4, 6});
    w.add_(x * x);  // in place
    std::vector<Tensor> outs = {w, x.sum(), x.exp().amax({1}), x.sum({0})};
    realize(outs);
    std::vector<std::vector<float>> v;
    for (Tensor& t : outs) v.push_back(t.to_vector<float>());
    return v;
  };
  const auto got = run("opencl"), ref = run("interp");
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); i++) {
    ASSERT_EQ(got[i].size(), ref[i].size()) << "output " << i;
    for (size_t j = 0; j < ref[i].size(); j++)
      EXPECT_NEAR(got[i][j], ref[i][j], 1e-5 * std::abs(ref[i][j]) + 1e-6)
          << "output " << i << " element " << j;
  }
}

}  // namespace
}  // namespace ember::runtime

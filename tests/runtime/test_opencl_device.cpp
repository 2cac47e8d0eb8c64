// The opencl device's own parts (runtime/opencl/): its memory (allocate, copies both ways and on
// the device, the cache of freed buffers), its program cache and its build errors, its kernels on
// in-place updates and on a full reduction. Its values against the interpreter on random graphs
// are the codegen fuzz test's (tests/codegen/test_fuzz.cpp), against libtorch the parity subset
// (tests/parity/CMakeLists.txt). Skipped, with the reason, where the device is unavailable.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../support/device_cases.h"
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

TEST_F(OpenCLDevice, CopiesInOnTheDeviceAndOut) { test::expect_copies_round_trip(*dev_); }

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
// (one work-group), and row and column reductions, against the interpreter.
TEST_F(OpenCLDevice, KernelsMatchTheInterpreter) {
  test::expect_outputs_near(test::small_kernels("opencl"), test::small_kernels("interp"), 1e-5,
                            1e-6);
}

// The GPU plans' edges (codegen::GpuPlan): group reductions of lengths 1 to 10,001, tiled
// products of shapes that the tiles do not divide, against the interpreter, with the codegen fuzz
// test's tolerance.
TEST_F(OpenCLDevice, GroupReductionsAndTiledProductsMatchTheInterpreter) {
  test::expect_outputs_near(test::gpu_shape_cases("opencl"), test::gpu_shape_cases("interp"), 1e-4,
                            0, 1e-5);
}

// A float64 product of 14 computed operands, its panels made shallower to fit the local memory
// (codegen::gpu_plan's guard), against the interpreter: float64 sums in another order.
TEST_F(OpenCLDevice, ManyOperandFloat64ProductMatchesTheInterpreter) {
  test::expect_outputs_near(test::many_operand_product("opencl"),
                            test::many_operand_product("interp"), 1e-6, 0, 1e-7);
}

}  // namespace
}  // namespace ember::runtime

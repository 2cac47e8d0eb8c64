// Kernels that a device with its own dialect (opencl, cuda) is checked on against the
// interpreter, shared by the device tests (tests/runtime/test_opencl_device.cpp, test_cuda.cpp):
// small kernels of each kind, and the GPU plans' edges (codegen::GpuPlan): reductions of odd
// lengths and products of odd shapes.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/tensor.h"

#include "runtime/device.h"

namespace ember::test {

/// Allocates two buffers of 1,000 floats on `dev`, copies values in, from one to the other on the
/// device and out, and expects them back; a copy past a buffer's end must throw ember::Error.
void expect_copies_round_trip(runtime::Device& dev);

/// Each output's values, in order.
using Outputs = std::vector<std::vector<float>>;

/// An in-place update, a full reduction, a row max after exp, a column sum (4 x 6 floats).
Outputs small_kernels(const std::string& device);

/// Sums, means and maxima over lengths 1, 7, 1000 and 10,001 (full and per row), and products
/// m x k @ k x n of 1x1x1, 5x7x3, 129x65x257, 4 x 128 x 128 (a batch of 4), 10000 x 128 x 128,
/// a batched 3 x 33 x 17 x 40, a transposed operand and a product with bias and tanh after it.
Outputs gpu_shape_cases(const std::string& device);

/// A float64 product of 40 x 37 @ 37 x 33 whose reduce term sums 7 computed row operands
/// (exp(a_q / 2)) times 7 computed column operands (sin(b_q)), with tanh after it: at the plans'
/// full panel depth its 14 panels would take 56 KiB of local memory, more than a CUDA block's
/// static 48 KiB (codegen::gpu_plan's guard, kernel_plan.h).
Outputs many_operand_product(const std::string& device);

/// Deterministic values in about [-1, 1] of `shape` (float32), different for each `seed`.
Tensor test_values(std::vector<int64_t> shape, int seed);

/// Six Adam steps of a small model (8 -> 64 -> tanh -> 2, seeded) moved to `device`, each on a new
/// batch of 32, jitted (the second call captures, calls 3 to 6 replay) or eager: the losses, then
/// every parameter after the steps. Expects each loss on `device`.
Outputs adam_steps(const std::string& device, bool jit);

/// Expects the losses and parameters of adam_steps within the parity suite's float32 tolerances:
/// losses atol 1e-6 rtol 1e-3 (forward), parameters atol 1e-4 rtol 1e-3 (what gradients made).
void expect_adam_steps_near(const Outputs& got, const Outputs& want);

/// A fixture whose cases are skipped, with the reason, where the opencl device is unavailable.
class OnOpenCL : public ::testing::Test {
 protected:
  void SetUp() override;
};

/// Expects got[i][j] within rtol |want[i][j]| + atol + stol max_j |want[i][j]| of want[i][j]
/// (reports up to 5 elements per output). The codegen fuzz test's tolerance is rtol 1e-4, stol
/// 1e-5.
void expect_outputs_near(const Outputs& got, const Outputs& want, double rtol, double atol,
                         double stol = 0);

}  // namespace ember::test

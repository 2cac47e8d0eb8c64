// The parity suite's NVRTC compile check (built where ember has the cuda device: EMBER_HAVE_CUDA):
// the "nvrtc-check" device (tests/support/nvrtc_check.h) runs the cases' kernels on the cpu
// device and renders each in the CUDA dialect; at the end of the run every distinct kernel is
// compiled with NVRTC for sm_90, and a kernel that does not compile fails the run with NVRTC's
// log and its source. The parity shards run on it in place of cpu (CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdio>

#include "../support/nvrtc_check.h"

namespace {

class NvrtcCheck : public ::testing::Environment {
 public:
  void SetUp() override { ember::test::register_nvrtc_check_device(); }
  void TearDown() override {
    const size_t n = ember::test::recorded_cuda_kernels();
    if (n == 0) return;
    const std::string error = ember::test::compile_recorded("sm_90");
    if (!error.empty()) {
      ADD_FAILURE() << "of the " << n
                    << " kernels the cases ran on nvrtc-check, NVRTC failed: " << error;
      return;
    }
    std::printf("nvrtc-check: the cases' %zu distinct kernels compiled for sm_90\n", n);
  }
};

[[maybe_unused]] ::testing::Environment* const kNvrtcCheck =
    ::testing::AddGlobalTestEnvironment(new NvrtcCheck);

}  // namespace

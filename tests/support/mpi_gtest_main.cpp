// GoogleTest's main for test programs that ctest runs in one process and through mpirun on
// several ranks (ember_add_mpi_test): joins the dist job first, and exits non-zero on every rank
// when a test failed on any rank (each rank prints its own results).
#include <gtest/gtest.h>

#include <span>

#include "ember/dist.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  ember::dist::init();
  double failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  ember::dist::all_reduce(std::span<double>(&failed, 1));
  ember::dist::finalize();
  return failed > 0 ? 1 : 0;
}

// Linked into the test binaries whose graphs are to be checked (tests/schedule/CMakeLists.txt and
// the parity, fuzz and short-training tests): every schedule they make is also made by the
// reference (the whole schedule lowered again after each materialised value) and must be the same,
// set and kernels (schedule/materialise.h).
#include <gtest/gtest.h>

#include "schedule/materialise.h"

namespace {

class MaterialiseCheck : public testing::Environment {
 public:
  void SetUp() override { ember::schedule::set_materialise_check(true); }
  void TearDown() override { ember::schedule::set_materialise_check(false); }
};

[[maybe_unused]] testing::Environment* const check =
    testing::AddGlobalTestEnvironment(new MaterialiseCheck);

}  // namespace

// ember::dist's collectives against hand values. ctest runs this program in one process and on 2
// ranks (mpirun); the expected values are written out for both.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "../support/error_message.h"
#include "ember/dist.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace {

using namespace ember;
using ember_test::message_of;

int rank() { return dist::rank(); }
int ranks() { return dist::world_size(); }

// The hand values below are for jobs of 1 and 2 ranks.
#define SKIP_BEYOND_TWO_RANKS() \
  if (ranks() > 2) GTEST_SKIP() << "hand values for 1 and 2 ranks"

TEST(Dist, JobIsMpirunsOrOneProcess) {
  EXPECT_TRUE(dist::initialized());
  const char* n = std::getenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(ranks(), n ? std::atoi(n) : 1);
  EXPECT_GE(rank(), 0);
  EXPECT_LT(rank(), ranks());
  if (n) {
    EXPECT_TRUE(dist::mpi_available());
  }
}

TEST(Dist, AllReduceSumFloat32) {
  SKIP_BEYOND_TWO_RANKS();
  const float r = float(rank());
  // Rank r: {r + 1, 10 (r + 1), -0.5, 2^-24}.
  const Tensor t = from_vector(std::vector<float>{r + 1, 10 * (r + 1), -0.5f, 0x1p-24f});
  dist::all_reduce(t, dist::ReduceOp::Sum);
  const std::vector<float> want = ranks() == 1 ? std::vector<float>{1, 10, -0.5f, 0x1p-24f}
                                               : std::vector<float>{3, 30, -1, 0x1p-23f};
  EXPECT_EQ(t.to_vector<float>(), want);
}

TEST(Dist, AllReduceMeanFloat64) {
  SKIP_BEYOND_TWO_RANKS();
  const double r = rank();
  // Rank r: {r + 1, 0.1, -3 r}.
  const Tensor t = from_vector(std::vector<double>{r + 1, 0.1, -3 * r});
  dist::all_reduce(t, dist::ReduceOp::Mean);
  const std::vector<double> want =
      ranks() == 1 ? std::vector<double>{1, 0.1, 0} : std::vector<double>{1.5, 0.1, -1.5};
  EXPECT_EQ(t.to_vector<double>(), want);
}

TEST(Dist, AllReduceOnHostMemory) {
  SKIP_BEYOND_TWO_RANKS();
  std::vector<float> f = {float(rank()) + 0.25f};
  std::vector<double> d = {2.0 * rank(), 1e300};
  dist::all_reduce(std::span<float>(f));
  dist::all_reduce(std::span<double>(d), dist::ReduceOp::Mean);
  EXPECT_EQ(f[0], ranks() == 1 ? 0.25f : 1.5f);
  EXPECT_EQ(d, (std::vector<double>{ranks() == 1 ? 0.0 : 1.0, 1e300}));
}

// A lazy tensor is realized and reduced; a value built from it before keeps the old values (an
// in-place op's semantics).
TEST(Dist, AllReduceOfALazyTensorKeepsEarlierValues) {
  SKIP_BEYOND_TWO_RANKS();
  const float k = float(rank() + 1);
  const Tensor t = from_vector(std::vector<float>{1, 2}) * k;
  const Tensor before = t * 2.f;
  dist::all_reduce(t);
  EXPECT_EQ(t.to_vector<float>(),
            ranks() == 1 ? std::vector<float>({1, 2}) : std::vector<float>({3, 6}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{2 * k, 4 * k}));
}

TEST(Dist, BroadcastFromEveryRoot) {
  for (int root = 0; root < ranks(); ++root) {
    const Tensor a = from_vector(std::vector<float>{float(rank()), 7.f, -0.f}, IntList{3, 1});
    const Tensor b = from_vector(std::vector<int64_t>{100 + rank(), -1});
    dist::broadcast({a, b}, root);
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{float(root), 7.f, -0.f}));
    EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{100 + root, -1}));
    EXPECT_EQ(a.dim(), 2);
    EXPECT_EQ(a.size(0), 3);
  }
}

TEST(Dist, AllGatherInRankOrder) {
  const double mine[2] = {double(rank()), 0.5 * rank()};
  const uint64_t big = (uint64_t{1} << 63) + uint64_t(rank());
  std::vector<double> want;
  std::vector<uint64_t> want_big;
  for (int r = 0; r < ranks(); ++r) {
    want.insert(want.end(), {double(r), 0.5 * r});
    want_big.push_back((uint64_t{1} << 63) + uint64_t(r));
  }
  EXPECT_EQ(dist::all_gather(std::span<const double>(mine, 2)), want);
  EXPECT_EQ(dist::all_gather(std::span<const uint64_t>(&big, 1)), want_big);
}

TEST(Dist, BadArgumentsAreRefusedOnEveryJob) {
  const Tensor x = zeros({2});
  EXPECT_NE(message_of<ValueError>([&] {
              dist::broadcast({x}, ranks());
            }).find("root " + std::to_string(ranks()) + " outside [0, "),
            std::string::npos);
  EXPECT_THROW(dist::broadcast({x}, -1), ValueError);
  EXPECT_NE(message_of<DTypeError>([&] {
              dist::all_reduce(zeros({2}, kInt64));
            }).find("expected a float32 or float64 tensor, got int64"),
            std::string::npos);
  const Tensor base = zeros({4});
  base.realize();
  EXPECT_NE(message_of<ValueError>([&] {
              dist::all_reduce(base.narrow(0, 1, 2));
            }).find("is a view of another tensor's buffer"),
            std::string::npos);
  EXPECT_THROW(dist::all_reduce(Tensor()), ValueError);
}

TEST(Dist, TensorsHashSeesDtypeShapeAndEveryBit) {
  const Tensor a = from_vector(std::vector<float>{1.f, 2.f, 3.f});
  const uint64_t h = dist::tensors_hash({a});
  EXPECT_EQ(h, dist::tensors_hash({from_vector(std::vector<float>{1.f, 2.f, 3.f})}));
  EXPECT_NE(h, dist::tensors_hash({a.reshape({3, 1})}));
  EXPECT_NE(h, dist::tensors_hash({a.to(kFloat64)}));
  EXPECT_NE(h, dist::tensors_hash({from_vector(std::vector<float>{1.f, 2.f, 3.0000002f})}));
  EXPECT_NE(h, dist::tensors_hash({a, a}));
  // A view hashes as its elements.
  EXPECT_EQ(dist::tensors_hash({a.narrow(0, 1, 2)}),
            dist::tensors_hash({from_vector(std::vector<float>{2.f, 3.f})}));
}

TEST(Dist, CheckReplicasPassesOnEqualTensors) {
  const std::vector<uint64_t> h =
      dist::check_replicas({from_vector(std::vector<float>{1.f, 2.f}), zeros({3}, kInt64)}, "x");
  ASSERT_EQ(h.size(), size_t(ranks()));
  for (uint64_t v : h) EXPECT_EQ(v, h[0]);
}

TEST(Dist, CheckReplicasNamesTheFirstRankThatDiffers) {
  if (ranks() == 1) GTEST_SKIP() << "needs 2 ranks";
  // One ulp apart on the last rank.
  const float last = rank() == ranks() - 1 ? 2.0000002f : 2.f;
  const Tensor t = from_vector(std::vector<float>{1.f, last});
  const std::string m =
      message_of<DistributedError>([&] { dist::check_replicas({t}, "the test tensors"); });
  EXPECT_NE(m.find("the test tensors differ between ranks: rank " + std::to_string(ranks() - 1) +
                   " has hash 0x"),
            std::string::npos)
      << m;
}

TEST(Dist, Barrier) { dist::barrier(); }

}  // namespace

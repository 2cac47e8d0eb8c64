// ember::dist::all_reduce alone (issue 47): seconds per call of a float32 Mean all-reduce of n
// elements, the call the data-parallel PPO step makes on its flat gradient buffer, for each n on
// the command line. Run it under `mpirun -np N` (or alone: a job of one, where the call is the
// identity). scripts/mpi_scaling.py fits the latency-bandwidth model to these times.
//
//   mpirun -np 2 bench_allreduce [--reps R] N1 N2 ...
//
// Per n: 10 warm-up calls, then R rounds (default 15) of a barrier and k back-to-back calls
// (k: about 2 ms of calls, from the warm-up), each round's time / k; the slowest rank's round
// counts (all_reduce of the max). Rank 0 prints one JSON line per n: {"world_size", "elements",
// "bytes", "median_s", "min_s"}. Not a test.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "ember/dist.h"
#include "ember/support/clock.h"
#include "ember/tensor.h"

using namespace ember;

namespace {

// Seconds per call of k calls, the slowest rank's.
double round_seconds(const Tensor& t, int k) {
  dist::barrier();
  const double t0 = support::now_seconds();
  for (int i = 0; i < k; ++i) dist::all_reduce(t, dist::ReduceOp::Mean);
  double s = (support::now_seconds() - t0) / k;
  std::vector<double> all = dist::all_gather(std::span<const double>(&s, 1));
  return *std::max_element(all.begin(), all.end());
}

void measure(int64_t n, int reps) {
  const Tensor t = from_vector(std::vector<float>(static_cast<size_t>(n), 1.0f));
  const double warm = round_seconds(t, 10);
  const int k = std::clamp(static_cast<int>(2e-3 / std::max(warm, 1e-9)), 1, 1000);
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) s.push_back(round_seconds(t, k));
  std::sort(s.begin(), s.end());
  if (dist::rank() == 0)
    std::printf(
        "{\"world_size\": %d, \"elements\": %lld, \"bytes\": %lld, \"median_s\": %.9g, "
        "\"min_s\": %.9g}\n",
        dist::world_size(), static_cast<long long>(n), static_cast<long long>(n * 4),
        s[s.size() / 2], s.front());
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (std::atoll(a.c_str()) > 0)
      sizes.push_back(std::atoll(a.c_str()));
    else {
      std::fprintf(stderr, "usage: bench_allreduce [--reps R] ELEMENTS...\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {1, 1024, 16384, 101771, 1 << 20};
  dist::init();
  for (int64_t n : sizes) measure(n, reps);
  std::fflush(stdout);
  dist::finalize();
  return 0;
}

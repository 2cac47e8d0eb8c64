// Limits checked before work (issue 14 "Limits checked before work"): a thread pool that cannot
// start all its threads throws a clear error instead of hanging (injected failure, and a real
// `ulimit -u` as the user nobody), and a policy file whose metadata disagrees with its tensors is
// refused before the network is allocated (the 12 KB file with "hidden": 8192).
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/child_process.h"
#include "ember/error.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/serialize.h"
#include "ember/support/settings.h"
#include "ember/support/thread_pool.h"
#include "ember/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer an allocation too large for the machine aborts the process by default;
// let it fail as it does without the sanitizer, so Allocation.* checks ember's error for it.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {

using namespace ember;
namespace fs = std::filesystem;
using ember_test::kNobody;

// Runs argv, killing it after `timeout_s`; `nproc`: RLIMIT_NPROC of the child; `uid`: run as
// that user.
ember_test::ChildResult run_child(const std::vector<std::string>& argv, double timeout_s,
                                  rlim_t nproc = 0, uid_t uid = 0) {
  ember_test::ChildOptions o;
  o.timeout_s = timeout_s;
  o.nproc = nproc;
  o.uid = uid;
  return ember_test::run_child(argv, o);
}

TEST(ThreadPoolStart, InjectedFailureIsAClearErrorNotAHang) {
  // Worker 3 of 7 fails to start: the constructor joins workers 1-2 and throws.
  support::settings().fail_thread_start = 3;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    support::ThreadPool pool(8);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("thread pool: started 2 of 7 worker threads"),
              std::string::npos)
        << e.what();
  }
  support::settings().fail_thread_start = 0;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  // Pools still start normally afterwards.
  support::ThreadPool ok(4);
  std::atomic<int64_t> sum{0};
  ok.parallel_for(100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

fs::path temp_dir() { return ember_test::shared_temp_dir("ember-limits-test"); }

fs::path small_policy(const fs::path& dir) {
  rl::PolicyOptions o;
  o.hidden = 8;
  o.layers = 1;
  const fs::path p = dir / "policy.safetensors";
  rl::save_policy(rl::ActorCritic(o), p.string());
  chmod(p.c_str(), 0644);
  return p;
}

TEST(ThreadPoolStart, ProcessLimitMakesEvalFailCleanly) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run as nobody (root ignores ulimit -u)";
  const fs::path dir = temp_dir();
  const fs::path policy = small_policy(dir);
  const fs::path ember = ember_test::runnable_copy(EMBER_CLI_PATH, dir);
  // The input: a user limited to a few processes, `ember eval --threads 1000`.
  const ember_test::ChildResult c = run_child(
      {ember.string(), "eval", "--policy", policy.string(), "--threads", "1000", "--episodes", "1"},
      60.0, 40, kNobody);
  EXPECT_NE(c.status, -1) << "hung (killed after 60 s): " << c.output;
  EXPECT_EQ(c.status, 1) << c.output;
  EXPECT_NE(c.output.find("cannot start the thread pool"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("ulimit -u"), std::string::npos) << c.output;
  fs::remove_all(dir);
}

// Rewrites the policy options stored in a policy file's metadata.
void set_policy_metadata(const fs::path& p, const std::function<void(nlohmann::json&)>& edit) {
  TensorFile f = load_file(p.string());
  nlohmann::json j = nlohmann::json::parse(f.metadata.at(rl::kPolicyMetadataKey));
  edit(j);
  f.metadata[rl::kPolicyMetadataKey] = j.dump();
  save(f.tensors, p.string(), f.metadata);
  chmod(p.c_str(), 0644);
}

TEST(PolicyMetadata, CheckedAgainstTheTensorsBeforeAnythingIsAllocated) {
  const fs::path dir = temp_dir();
  const fs::path p = small_policy(dir);
  EXPECT_LT(fs::file_size(p), 12'000u);
  struct Case {
    const char* key;
    int64_t value;
    const char* message;
  };
  for (const Case& k :
       {Case{"hidden", 8192, "has shape [8, 8] but the metadata implies [8192, 8]"},
        Case{"layers", 1'000'000'000, "says 1000000000 hidden layers"},
        Case{"obs_dim", 1 << 30, "metadata implies [8, 1073741824]"}, Case{"act_dim", 0, "< 1"}}) {
    const fs::path q = dir / (std::string(k.key) + ".safetensors");
    fs::copy_file(p, q, fs::copy_options::overwrite_existing);
    set_policy_metadata(q, [&](nlohmann::json& j) { j[k.key] = k.value; });
    try {
      rl::load_policy(q.string());
      ADD_FAILURE() << k.key << ": no error";
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find(k.message), std::string::npos) << e.what();
    }
    // And through `ember eval`: a prompt clean error, no gigabytes.
    const ember_test::ChildResult c =
        run_child({EMBER_CLI_PATH, "eval", "--policy", q.string()}, 60.0);
    EXPECT_EQ(c.status, 1) << c.output;
    EXPECT_NE(c.output.find(k.message), std::string::npos) << c.output;
    EXPECT_LT(c.seconds, 10.0) << k.key;
    EXPECT_LT(c.max_rss_kb, 300 * 1024) << k.key;
  }
  fs::remove_all(dir);
}

TEST(Allocation, FailuresNameWhatWasBeingAllocated) {
  // A tensor buffer of 4 TiB.
  try {
    Tensor t = arange(int64_t{1} << 40, TensorOptions(kFloat32));
    t.realize();
    ADD_FAILURE() << "allocated 4 TiB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate a tensor buffer of 4398046511104 bytes"),
              std::string::npos)
        << e.what();
  }
  // The trainer's rollout buffer for 4096 envs x 10^7 steps (about 1.3 TB of observations).
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's operator new aborts on a failed allocation instead of throwing bad_alloc,
  // whatever its options: this part is checked by the build without the sanitizer.
  return;
#endif
  const fs::path dir = temp_dir();
  const ember_test::ChildResult c =
      run_child({EMBER_CLI_PATH, "train", "--out", (dir / "run").string(), "--envs", "4096",
                 "--steps-per-env", "10000000", "--minibatch", "10000", "--threads", "1",
                 "--progress", "none"},
                120.0);
  EXPECT_EQ(c.status, 1) << c.output;
  EXPECT_NE(
      c.output.find("out of memory allocating the rollout buffer for 40960000000 transitions"),
      std::string::npos)
      << c.output;
  fs::remove_all(dir);
}

}  // namespace

// `mpirun -np 2 ember train` (trainer.h, "Data-parallel"): a short run ends with identical
// replicas and records that show both ranks; a killed rank ends the job with an error, soon.
// EMBER_MPIRUN: mpirun and its options (tests/CMakeLists.txt), space-separated.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/child_process.h"
#include "../support/train_args.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// 2 envs x 64 steps per rank: 256 transitions per epoch over 2 ranks; 2 passes of minibatches of
// 64 rows per rank.
std::vector<std::string> command(const fs::path& out, int64_t max_transitions) {
  std::vector<std::string> argv;
  std::istringstream mpirun(EMBER_MPIRUN);
  for (std::string w; mpirun >> w;) argv.push_back(w);
  for (const char* a : {"-np", "2", EMBER_CLI_PATH, "train", "--steps-per-env", "64", "--minibatch",
                        "64", "--passes", "2", "--check-replicas"})
    argv.push_back(a);
  for (const std::string& a : ember_test::one_thread_train_args(16, 100)) argv.push_back(a);
  for (const std::string& a : {std::string("--out"), out.string(), std::string("--max-transitions"),
                               std::to_string(max_transitions)})
    argv.push_back(a);
  return argv;
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ember_test::ChildOptions long_run() {
  ember_test::ChildOptions o;
  o.timeout_s = 240;
  return o;
}

std::vector<json> records(const fs::path& run) {
  std::vector<json> out;
  std::ifstream f(run / "epochs.jsonl");
  for (std::string line; std::getline(f, line);) out.push_back(json::parse(line));
  return out;
}

TEST(TrainMpi, TwoRanksTwoEpochsKeepIdenticalReplicas) {
  const fs::path dir = ember_test::shared_temp_dir("ember-mpi-train");
  const ember_test::ChildResult r = ember_test::run_child(command(dir / "run", 512), long_run());
  ASSERT_EQ(r.status, 0) << r.output;
  const json run = json::parse(read_all(dir / "run" / "run.json"));
  EXPECT_EQ(run.at("world_size"), 2);
  EXPECT_EQ(run.at("rank_pids").size(), 2u);
  const std::vector<json> ep = records(dir / "run");
  ASSERT_EQ(ep.size(), 2u) << r.output;
  for (size_t e = 0; e < 2; ++e) {
    const json& j = ep[e];
    EXPECT_EQ(j.at("world_size"), 2);
    EXPECT_EQ(j.at("transitions"), int64_t(256 * (e + 1)));  // both ranks' transitions
    EXPECT_EQ(j.at("optimizer_steps"), 4);                   // 2 passes x 128 / 64
    for (const char* f : {"collect_s", "update_s", "allreduce_s", "update_steps_s"}) {
      ASSERT_EQ(j.at("ranks").at(f).size(), 2u) << f;
      for (const json& v : j.at("ranks").at(f)) EXPECT_GE(v.get<double>(), 0) << f;
    }
    EXPECT_GT(j.at("update_allreduce_s").get<double>(), 0);
    EXPECT_LE(j.at("update_allreduce_s").get<double>(), j.at("update_steps_s").get<double>());
    // --check-replicas: both ranks' parameters and Adam state hash alike after every epoch.
    const json& h = j.at("replica_hashes");
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0], h[1]);
    EXPECT_EQ(h[0].get<std::string>().size(), 18u);
  }
  EXPECT_NE(ep[0].at("replica_hashes")[0], ep[1].at("replica_hashes")[0]);  // it trained
  EXPECT_TRUE(fs::exists(dir / "run" / "policy.safetensors"));

  // The final checkpoint keeps both ranks' reward-scaling statistics; it resumes on 2 ranks, and
  // only there.
  const json final_manifest = json::parse(read_all(dir / "run" / "checkpoints" / "final.json"));
  EXPECT_EQ(final_manifest.at("world_size"), 2);
  EXPECT_EQ(final_manifest.at("rank_reward_scalers").size(), 2u);
  const ember_test::ChildResult alone = ember_test::run_child(
      {EMBER_CLI_PATH, "train", "--resume", (dir / "run").string(), "--max-transitions", "768"});
  EXPECT_NE(alone.status, 0);
  EXPECT_NE(alone.output.find("was written by a job of 2 rank(s); resume it with as many "
                              "(mpirun -np 2), not 1"),
            std::string::npos)
      << alone.output;
  std::vector<std::string> resume = command(dir / "run", 768);
  resume.insert(resume.end(), {"--resume", (dir / "run").string()});
  const ember_test::ChildResult again = ember_test::run_child(resume, long_run());
  ASSERT_EQ(again.status, 0) << again.output;
  const std::vector<json> all = records(dir / "run");
  ASSERT_EQ(all.size(), 3u) << again.output;
  EXPECT_EQ(all[2].at("epoch"), 2);
  EXPECT_EQ(all[2].at("transitions"), 768);
  EXPECT_EQ(all[2].at("replica_hashes")[0], all[2].at("replica_hashes")[1]);
  fs::remove_all(dir);
}

TEST(TrainMpi, AKilledRankEndsTheJobWithAnError) {
  const fs::path dir = ember_test::shared_temp_dir("ember-mpi-kill");
  const fs::path log = dir / "log", run = dir / "run";
  const std::vector<std::string> argv = command(run, 100'000'000);
  const pid_t mpirun = fork();
  if (mpirun == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(98);
  }
  // Once an epoch is recorded (kernels compiled, both ranks training), kill rank 1.
  const auto t0 = Clock::now();
  int status = 0;
  bool ended = false;
  while (records(run).empty() && Clock::now() - t0 < std::chrono::seconds(180)) {
    if (waitpid(mpirun, &status, WNOHANG) == mpirun) {
      ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(ended) << "the job ended before the kill:\n" << read_all(log);
  ASSERT_FALSE(records(run).empty()) << "no epoch after 180 s:\n" << read_all(log);
  const json pids = json::parse(read_all(run / "run.json")).at("rank_pids");
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_EQ(kill(pid_t(pids[1].get<int64_t>()), SIGKILL), 0);
  const auto k0 = Clock::now();
  while (waitpid(mpirun, &status, WNOHANG) != mpirun &&
         Clock::now() - k0 < std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double seconds = std::chrono::duration<double>(Clock::now() - k0).count();
  if (seconds >= 30) {  // a hang: end it, then fail
    kill(mpirun, SIGKILL);
    waitpid(mpirun, &status, 0);
  }
  const std::string out = read_all(log);
  EXPECT_LT(seconds, 30) << out;
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  // mpirun names the dead rank; rank 0 says why it stops.
  EXPECT_NE(out.find("exited on signal 9"), std::string::npos) << out;
  EXPECT_NE(out.find("ember train: rank 0 of 2: stopped by SIGTERM"), std::string::npos) << out;
  fs::remove_all(dir);
}

}  // namespace

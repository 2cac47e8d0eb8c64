// A short end-to-end training run (src/ppo/trainer.cpp) on a scaled-down workload: 4 envs x 1,000
// steps (4,000 transitions) per epoch, 10 passes in minibatches of 1,000, evaluation every 5th
// epoch on 4 x 5 episodes, 100,000 transitions (about 10-20 s on 2 cores). The stated margin: the
// last scheduled evaluation's mean (at 84,000 transitions) is at least kMargin = 150 above epoch
// 0's. Measured with the current defaults (gamma 0.999, lambda 0.95), seeds 1-5 and 7:
// improvements of 240, 331, 260, 257, 253 and 200 (the untrained policy scores -159 to -264).
// Also checks the records, `ember eval` on the saved policy and a resume.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ember/rl/trainer.h"

namespace {

using namespace ember::rl;
namespace fs = std::filesystem;

constexpr double kMargin = 150.0;

TrainConfig short_config(const std::string& out) {
  TrainConfig c;
  c.seed = 7;
  c.threads = 2;
  c.out_dir = out;
  c.progress = "plain";
  c.envs = 4;
  c.steps_per_env = 1000;
  c.update.minibatch = 1000;
  c.update.passes = 10;
  c.eval_every = 5;
  c.eval_episodes_per_env = 5;
  c.final_eval_episodes_per_env = 5;
  c.max_transitions = 100000;
  c.checkpoint_every = 5;
  return c;
}

size_t count_lines(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  size_t n = 0;
  while (std::getline(f, line)) n += !line.empty();
  return n;
}

TEST(TrainShort, EvaluationImprovesAndRecordsAreWritten) {
  // A directory of its own: concurrent runs of the suite (two clones, two users) must not collide.
  char templ[] = "/tmp/ember-train-short-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  const fs::path out = templ;
  Trainer trainer(short_config(out.string()));
  const TrainResult r = trainer.run();
  ASSERT_GE(r.curve.size(), 2u);
  const double first = r.curve.front().mean, last = r.curve.back().mean;
  std::printf("short training: eval %.1f at %lld -> %.1f at %lld transitions; saved-policy %.1f\n",
              first, static_cast<long long>(r.curve.front().transitions), last,
              static_cast<long long>(r.curve.back().transitions), r.saved_policy_eval.mean);
  EXPECT_GE(last - first, kMargin);
  EXPECT_EQ(r.curve.front().transitions, 4000);
  EXPECT_EQ(r.saved_policy_eval.returns.size(), 20u);

  // Records.
  for (const char* f :
       {"run.json", "epochs.jsonl", "summary.json", "learning_curve.svg", "policy.safetensors",
        "checkpoints/final.json", "checkpoints/epoch_0005.json"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(count_lines(out / "epochs.jsonl"), static_cast<size_t>(r.epochs));
  std::ifstream sf(out / "summary.json");
  const nlohmann::json s = nlohmann::json::parse(sf);
  EXPECT_EQ(s.at("transitions_at_stop").get<int64_t>(), r.transitions_at_stop);
  EXPECT_GT(s.at("seconds_to_stop").get<double>(), 0.0);
  std::ifstream rf(out / "run.json");
  const nlohmann::json run = nlohmann::json::parse(rf);
  EXPECT_TRUE(run.at("provenance").contains("git"));
  EXPECT_EQ(run.at("config").at("seed").get<uint64_t>(), 7u);
  std::ifstream ef(out / "epochs.jsonl");
  std::string line;
  std::getline(ef, line);
  const nlohmann::json e0 = nlohmann::json::parse(line);
  for (const char* k : {"collect_inference_s", "collect_sampling_s", "collect_env_s",
                        "collect_buffer_s", "update_s", "eval_s", "epoch_s", "eval_mean",
                        "approx_kl", "clip_fraction", "explained_variance", "entropy"})
    EXPECT_TRUE(e0.contains(k)) << k;
  // Kernel compilation (issue 17): every kernel the run built came from the compiler or the disk
  // cache, and the process totals include the epoch's share.
  EXPECT_GT(e0.at("kernels_compiled_total").get<int64_t>() +
                e0.at("kernels_from_disk_cache_total").get<int64_t>(),
            0);
  EXPECT_GE(e0.at("kernels_compiled_total").get<int64_t>(),
            e0.at("kernels_compiled").get<int64_t>());
  EXPECT_GE(e0.at("compile_total_s").get<double>(), e0.at("compile_s").get<double>());
  EXPECT_GE(e0.at("compile_s").get<double>(), 0.0);
  EXPECT_GE(e0.at("compiler_runs").get<int64_t>(), 0);

  // `ember eval` on the saved policy, with a rendered episode.
  const std::string cmd =
      std::string(EMBER_CLI_PATH) + " eval --policy '" + (out / "policy.safetensors").string() +
      "' --episodes 8 --render-every 100 --render '" + (out / "frames").string() + "' 2>&1";
  std::string text;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) text += buf;
    EXPECT_EQ(pclose(p), 0) << text;
  }
  EXPECT_NE(text.find("8 episodes (4 envs x 2)"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out / "frames" / "frame_00000.png")) << text;

  // Resume from the epoch-5 checkpoint for one more epoch.
  TrainConfig c = short_config((out / "resumed").string());
  c.resume = (out / "checkpoints/epoch_0005.json").string();
  c.max_transitions = 24000 + 4000;
  const TrainResult rr = Trainer(c).run();
  EXPECT_EQ(rr.transitions_at_stop, 28000);
  EXPECT_EQ(rr.epochs, 7);
  fs::remove_all(out);
}

}  // namespace

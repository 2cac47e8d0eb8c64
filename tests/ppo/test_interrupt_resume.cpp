// Stopping and resuming `ember train` (issue 14): real signals sent to a real `ember` process,
// kill -9 at random moments, concurrent runs, and the records checked line by line afterwards.
// Nothing lost means: every run directory's epochs.jsonl holds epochs 0, 1, ..., n-1 exactly once
// and in order, every manifest parses, and the newest checkpoint resumes to the end.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/train_args.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A small, fast workload (a few tenths of a second per epoch once the kernels are cached); the
// steps per env (= the minibatch) and the passes are set per test.
std::vector<std::string> workload() {
  std::vector<std::string> a = ember_test::one_thread_train_args(16, 200);
  for (const char* s : {"--checkpoint-every", "2"}) a.push_back(s);
  return a;
}
const std::vector<std::string> kWorkload = workload();

struct Proc {
  pid_t pid = -1;
  fs::path out_file;
};

// Starts `ember train ARGS...` in `cwd`; stdout and stderr go to `log`.
Proc start(const fs::path& cwd, const std::vector<std::string>& args, const fs::path& log) {
  Proc p;
  p.out_file = log;
  p.pid = fork();
  if (p.pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(97);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<std::string> argv = {EMBER_CLI_PATH, "train"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(98);
  }
  return p;
}

// Waits for the process; returns its exit code or 128 + signal; -1 after `timeout_s` (killed).
int finish(const Proc& p, double timeout_s = 300) {
  const auto t0 = Clock::now();
  int st = 0;
  for (;;) {
    if (waitpid(p.pid, &st, WNOHANG) == p.pid) break;
    if (std::chrono::duration<double>(Clock::now() - t0).count() > timeout_s) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t complete_lines(const fs::path& p) {
  const std::string s = read_all(p);
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Waits until `records` has at least `n` complete lines (or the process ended).
void wait_for_epochs(const Proc& p, const fs::path& records, size_t n, double timeout_s = 240) {
  const auto t0 = Clock::now();
  while (complete_lines(records) < n &&
         std::chrono::duration<double>(Clock::now() - t0).count() < timeout_s) {
    int st;
    if (waitpid(p.pid, &st, WNOHANG) == p.pid) {
      ADD_FAILURE() << "ember train ended early:\n" << read_all(p.out_file);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// epochs.jsonl must hold epochs 0 .. n-1, each once, in order, every line whole. Returns n.
int64_t check_records(const fs::path& records, int64_t per_epoch = 500) {
  std::ifstream f(records);
  std::string line;
  int64_t expect = 0;
  const std::string all = read_all(records);
  EXPECT_TRUE(all.empty() || all.back() == '\n') << "torn last line in " << records;
  while (std::getline(f, line)) {
    const json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << records << ": " << line;
    if (!j.is_object()) return -1;
    EXPECT_EQ(j.at("epoch").get<int64_t>(), expect) << records;
    EXPECT_EQ(j.at("transitions").get<int64_t>(), (expect + 1) * per_epoch) << records;
    ++expect;
  }
  return expect;
}

// Every manifest in the run parses and names files that exist; with `no_temporaries`, no
// temporary file is left (a resume removes those a kill -9 left).
void check_manifests(const fs::path& run, bool no_temporaries = true) {
  for (const auto& e : fs::directory_iterator(run / "checkpoints")) {
    if (e.path().extension() != ".json") continue;
    const json m = json::parse(read_all(e.path()), nullptr, false);
    ASSERT_TRUE(m.is_object()) << e.path() << " is not whole";
    EXPECT_TRUE(fs::exists(run / "checkpoints" / m.at("policy").get<std::string>()));
    EXPECT_TRUE(fs::exists(run / "checkpoints" / m.at("optimizer").get<std::string>()));
  }
  for (const auto& e : fs::recursive_directory_iterator(run)) {
    if (no_temporaries) {
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos)
          << "temporary file left: " << e.path();
    }
  }
}

class InterruptResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One kernel cache for every run of the suite (the first run compiles, the rest load).
    cache_ = fs::temp_directory_path() / ("ember-resume-test-cache-" + std::to_string(getpid()));
    setenv("EMBER_CACHE_DIR", cache_.c_str(), 1);
  }
  static void TearDownTestSuite() { fs::remove_all(cache_); }
  void SetUp() override {
    char templ[] = "/tmp/ember-resume-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // 2 x `steps` transitions per epoch, `passes` passes over them.
  std::vector<std::string> args(std::vector<std::string> extra, const std::string& steps = "250",
                                const std::string& passes = "1") const {
    std::vector<std::string> a = kWorkload;
    a.insert(a.end(), {"--steps-per-env", steps, "--minibatch", steps, "--passes", passes});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  static inline fs::path cache_;
  fs::path dir_;
};

// The first SIGINT (SIGTERM) finishes the step, saves everything, prints the resume command and
// exits 130 (143); the printed command resumes to the end with no epoch twice.
void interrupt_and_resume(const fs::path& dir, int sig, const std::vector<std::string>& args,
                          const std::vector<std::string>& resume_extra) {
  const fs::path run = dir / "run";
  const Proc p = start(dir, args, dir / "first.log");
  wait_for_epochs(p, run / "epochs.jsonl", 3);
  kill(p.pid, sig);
  const int rc = finish(p, 120);
  const std::string log = read_all(dir / "first.log");
  ASSERT_EQ(rc, 128 + sig) << log;
  for (const char* f : {"policy.safetensors", "summary.json", "learning_curve.svg", "run.json",
                        "checkpoints/final.json"})
    EXPECT_TRUE(fs::exists(run / f)) << f << "\n" << log;
  const json summary = json::parse(read_all(run / "summary.json"));
  EXPECT_EQ(summary.at("stop_reason"), "interrupted");
  EXPECT_EQ(summary.at("interrupted_by"), sig == SIGINT ? "SIGINT" : "SIGTERM");
  const int64_t done = check_records(run / "epochs.jsonl");
  const json final_m = json::parse(read_all(run / "checkpoints/final.json"));
  EXPECT_EQ(final_m.at("epoch").get<int64_t>(), done);  // the records and the checkpoint agree
  check_manifests(run);
  const size_t at = log.find("ember train --resume ");
  ASSERT_NE(at, std::string::npos) << log;
  std::string manifest = log.substr(at + 21);
  manifest = manifest.substr(0, manifest.find('\n'));
  EXPECT_EQ(manifest, "run/checkpoints/final.json");

  // Resume with the printed command only (no network flags typed again), for 3 more epochs.
  std::vector<std::string> r = {"--resume", manifest, "--max-transitions",
                                std::to_string((done + 3) * 500)};
  r.insert(r.end(), resume_extra.begin(), resume_extra.end());
  const Proc q = start(dir, r, dir / "resume.log");
  ASSERT_EQ(finish(q), 0) << read_all(dir / "resume.log");
  EXPECT_EQ(check_records(run / "epochs.jsonl"), done + 3);
  const json run_json = json::parse(read_all(run / "run.json"));
  EXPECT_EQ(run_json.at("resumes").size(), 1u);  // the first run's run.json is kept
  EXPECT_EQ(run_json.at("config").at("max_transitions"), 1'000'000'000);
  EXPECT_EQ(json::parse(read_all(run / "summary.json")).at("stop_reason"), "max_transitions");
}

TEST_F(InterruptResume, SigintSavesEverythingAndTheResumeCommandContinues) {
  interrupt_and_resume(dir_, SIGINT, args({"--out", "run", "--max-transitions", "1000000000"}), {});
}

TEST_F(InterruptResume, SigtermExits143AndResumes) {
  interrupt_and_resume(dir_, SIGTERM, args({"--out", "run", "--max-transitions", "1000000000"}),
                       {"--threads", "1"});
}

TEST_F(InterruptResume, SecondSignalExitsAtOnce) {
  // Long updates (3000 passes of 2 steps, about 1.5 s; an epoch's collection takes 0.07 s): the
  // first SIGINT lands in one and waits for it to finish; the second, sent while it waits, exits
  // at once. (With 200 passes, once about 3 s, an update now takes 0.1 s: the first signal's
  // update often ended before the second could be sent, and under load all 3 tries did.) A first
  // signal that lands in a collection stops the run too quickly to send the second; then try again
  // (at most 3 times).
  bool tested = false;
  for (int attempt = 0; attempt < 3 && !tested; ++attempt) {
    const std::string out = "run" + std::to_string(attempt);
    const fs::path log = dir_ / (out + ".log");
    const Proc p =
        start(dir_, args({"--out", out, "--max-transitions", "1000000000"}, "2000", "3000"), log);
    wait_for_epochs(p, dir_ / out / "epochs.jsonl", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // into the next update
    kill(p.pid, SIGINT);
    const auto t0 = Clock::now();
    while (read_all(log).find("stopping after the current step") == std::string::npos &&
           std::chrono::duration<double>(Clock::now() - t0).count() < 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    int st;
    if (waitpid(p.pid, &st, WNOHANG) == p.pid) continue;  // already stopped cleanly
    const auto t1 = Clock::now();
    kill(p.pid, SIGINT);
    EXPECT_EQ(finish(p, 30), 130) << read_all(log);
    if (read_all(log).find("second signal, exiting now") == std::string::npos) continue;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t1).count(), 1.0);
    check_records(dir_ / out / "epochs.jsonl", 4000);
    tested = true;
  }
  EXPECT_TRUE(tested) << "the first signal never landed in an update";
}

TEST_F(InterruptResume, KillNineAtRandomMomentsLosesNothing) {
  // Kill -9 five times at random moments (0 to 1.5 s into each try; epochs take about 0.4 s, so
  // kills land in collection, update, checkpoint writing and record appending); resume from the
  // run directory each time; then run three epochs past what was recorded. The records must come
  // out whole. (Between kills the records may end with a torn line; the resume drops it.) The
  // killed runs have no end in reach, so a fast machine cannot finish one between kills.
  std::mt19937 rng(14);
  const fs::path run = dir_ / "run";
  const std::string endless = std::to_string(int64_t{1} << 40);
  Proc p =
      start(dir_, args({"--out", "run", "--max-transitions", endless}, "2000", "4"), dir_ / "log0");
  wait_for_epochs(p, run / "epochs.jsonl", 3);
  int kills = 0;
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 1500)(rng)));
    kill(p.pid, SIGKILL);
    if (finish(p, 30) == 128 + SIGKILL) ++kills;
    check_manifests(run, false);
    if (i == 4) break;
    p = start(dir_, {"--resume", "run", "--max-transitions", endless},
              dir_ / ("log" + std::to_string(i + 1)));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // Whole lines recorded so far (a torn last line does not count).
  const std::string recs = read_all(run / "epochs.jsonl");
  const int64_t whole = std::count(recs.begin(), recs.end(), '\n');
  const int64_t epochs = whole + 3;
  p = start(dir_, {"--resume", "run", "--max-transitions", std::to_string(epochs * 4000)},
            dir_ / "log5");
  ASSERT_EQ(finish(p), 0) << read_all(dir_ / "log5");
  EXPECT_EQ(check_records(run / "epochs.jsonl", 4000), epochs);
  check_manifests(run);
  std::printf("kill -9 runs: %d, each resumed with nothing lost (%lld epochs in the end)\n", kills,
              static_cast<long long>(epochs));
  EXPECT_EQ(kills, 5);
}

TEST_F(InterruptResume, ResumeRestoresTheConfigurationAndRejectsConflicts) {
  const Proc p = start(dir_, args({"--out", "run", "--max-transitions", "2000"}), dir_ / "log");
  ASSERT_EQ(finish(p), 0) << read_all(dir_ / "log");
  // A network flag typed again with another value is refused, with both values named.
  const Proc q = start(dir_, {"--resume", "run/checkpoints/final.json", "--hidden", "64"},
                       dir_ / "conflict.log");
  EXPECT_EQ(finish(q), 1);
  const std::string msg = read_all(dir_ / "conflict.log");
  EXPECT_NE(msg.find("--hidden 64 conflicts with the checkpoint's configuration"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("policy/hidden = 16"), std::string::npos) << msg;
  // The same value is accepted; --max-transitions overrides.
  const Proc r = start(dir_, {"--resume", "run", "--hidden", "16", "--max-transitions", "3000"},
                       dir_ / "ok.log");
  ASSERT_EQ(finish(r), 0) << read_all(dir_ / "ok.log");
  EXPECT_EQ(check_records(dir_ / "run" / "epochs.jsonl"), 6);
  // Resuming in place from an earlier checkpoint sets the later ones aside, so that a later
  // `--resume run` cannot pick a checkpoint of the abandoned timeline.
  EXPECT_EQ(json::parse(read_all(dir_ / "run" / "checkpoints" / "final.json")).at("epoch"), 6);
  const Proc t =
      start(dir_, {"--resume", "run/checkpoints/epoch_0002.json", "--max-transitions", "1500"},
            dir_ / "back.log");
  ASSERT_EQ(finish(t), 0) << read_all(dir_ / "back.log");
  EXPECT_EQ(check_records(dir_ / "run" / "epochs.jsonl"), 3);
  const json newest = json::parse(read_all(dir_ / "run" / "checkpoints" / "final.json"));
  EXPECT_EQ(newest.at("epoch").get<int64_t>(), 3);
  int set_aside = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "run" / "checkpoints"))
    if (e.path().filename() == "final.json" &&
        e.path().parent_path().filename().string().rfind("abandoned-", 0) == 0) {
      EXPECT_EQ(json::parse(read_all(e.path())).at("epoch"), 6);
      ++set_aside;
    }
  EXPECT_EQ(set_aside, 1);
  // Resuming into a new directory copies the records before the checkpoint's epoch.
  const Proc s = start(
      dir_,
      {"--resume", "run/checkpoints/epoch_0002.json", "--out", "fork", "--max-transitions", "2000"},
      dir_ / "fork.log");
  ASSERT_EQ(finish(s), 0) << read_all(dir_ / "fork.log");
  EXPECT_EQ(check_records(dir_ / "fork" / "epochs.jsonl"), 4);
}

TEST_F(InterruptResume, KillBetweenCheckpointAndRecordLosesNoLine) {
  // The state a kill -9 leaves between writing checkpoints/epoch_0002.json and appending the
  // record of epoch 1: the manifest carries that record and the resume restores it.
  const Proc p = start(dir_, args({"--out", "run", "--max-transitions", "2000"}), dir_ / "log");
  ASSERT_EQ(finish(p), 0) << read_all(dir_ / "log");
  const fs::path run = dir_ / "run";
  std::string records = read_all(run / "epochs.jsonl");
  records = records.substr(0, records.find('\n') + 1);  // epoch 0 only
  std::ofstream(run / "epochs.jsonl", std::ios::trunc) << records;
  for (const char* f : {"final.json", "final.policy.safetensors", "final.optimizer.safetensors"})
    fs::remove(run / "checkpoints" / f);
  const Proc q = start(dir_, {"--resume", "run", "--max-transitions", "3000"}, dir_ / "resume.log");
  ASSERT_EQ(finish(q), 0) << read_all(dir_ / "resume.log");
  EXPECT_EQ(check_records(run / "epochs.jsonl"), 6);
}

TEST_F(InterruptResume, OneRunOneDirectory) {
  // An existing non-empty --out is refused.
  fs::create_directory(dir_ / "used");
  std::ofstream(dir_ / "used" / "notes.txt") << "mine\n";
  const Proc a = start(dir_, args({"--out", "used", "--max-transitions", "500"}), dir_ / "a.log");
  EXPECT_EQ(finish(a), 1);
  EXPECT_NE(read_all(dir_ / "a.log").find("exists and is not empty"), std::string::npos);
  EXPECT_EQ(read_all(dir_ / "used" / "notes.txt"), "mine\n");
  // Two runs with the same --out, started together: one runs, the other is refused.
  const Proc b = start(dir_, args({"--out", "same", "--max-transitions", "2000"}), dir_ / "b.log");
  const Proc c = start(dir_, args({"--out", "same", "--max-transitions", "2000"}), dir_ / "c.log");
  const int rb = finish(b), rc = finish(c);
  EXPECT_EQ((rb == 0) + (rc == 0), 1) << read_all(dir_ / "b.log") << read_all(dir_ / "c.log");
  EXPECT_EQ((rb == 1) + (rc == 1), 1);
  EXPECT_EQ(check_records(dir_ / "same" / "epochs.jsonl"), 4);
  // Two runs with no --out started in the same second: two directories.
  const Proc d = start(dir_, args({"--max-transitions", "1000"}), dir_ / "d.log");
  const Proc e = start(dir_, args({"--max-transitions", "1000"}), dir_ / "e.log");
  EXPECT_EQ(finish(d), 0) << read_all(dir_ / "d.log");
  EXPECT_EQ(finish(e), 0) << read_all(dir_ / "e.log");
  std::vector<fs::path> runs;
  for (const auto& r : fs::directory_iterator(dir_ / "runs")) runs.push_back(r.path());
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) EXPECT_EQ(check_records(r / "epochs.jsonl"), 2);
}

TEST_F(InterruptResume, DiskFullIsACleanErrorAndLosesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path small = dir_ / "small";
  fs::create_directory(small);
  if (std::system(("mount -t tmpfs -o size=160k tmpfs " + small.string()).c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  struct Unmount {
    fs::path p;
    ~Unmount() { std::system(("umount " + p.string()).c_str()); }
  } unmount{small};
  // Records and a checkpoint every 2 epochs until the 160 KiB file system is full.
  const Proc p = start(dir_, args({"--out", "small/run", "--max-transitions", "1000000000"}),
                       dir_ / "full.log");
  EXPECT_EQ(finish(p, 120), 1);
  const std::string log = read_all(dir_ / "full.log");
  EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
  // Whatever was written is whole: records without a torn line, manifests that parse, no
  // temporaries.
  const int64_t done = check_records(small / "run" / "epochs.jsonl");
  EXPECT_GE(done, 2);
  check_manifests(small / "run");
  // With space again (a copy on the big file system), the run resumes from its newest checkpoint.
  fs::copy(small / "run", dir_ / "big", fs::copy_options::recursive);
  fs::remove(dir_ / "big" / ".lock");
  const Proc q =
      start(dir_, {"--resume", "big", "--max-transitions", std::to_string((done + 2) * 500)},
            dir_ / "resume.log");
  ASSERT_EQ(finish(q), 0) << read_all(dir_ / "resume.log");
  EXPECT_EQ(check_records(dir_ / "big" / "epochs.jsonl"), done + 2);
  std::printf("disk full after %lld epochs: clean error, records and checkpoints whole, resumed\n",
              static_cast<long long>(done));
}

}  // namespace

// `ember`'s command-line errors (issue 44, "Clear command-line errors"), run as processes in an
// empty working directory: each bad command line exits non-zero with a message that names the
// option (or subcommand) and what is wrong, and leaves no run directory behind. Also the help's
// layout, eval's run-directory form and the one closing summary of a (tiny) training run.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/child_process.h"
#include "../support/train_args.h"
#include "ember/support/read_file.h"

namespace {

namespace fs = std::filesystem;
using ember_test::kNobody;

using Result = ember_test::ChildResult;

struct RunOptions : ember_test::ChildOptions {
  std::string exe = EMBER_CLI_PATH;  // the ember binary to run
};

// Runs `ember args...` in `o.cwd`; a hang is killed after 120 s.
Result ember(const std::vector<std::string>& args, RunOptions o) {
  std::vector<std::string> argv = {o.exe};
  argv.insert(argv.end(), args.begin(), args.end());
  o.timeout_s = 120;
  return ember_test::run_child(argv, o);
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir = ember_test::shared_temp_dir("ember-cli-errors"); }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir, fs::perms(0755), ec);
    fs::remove_all(dir, ec);
  }
  Result run(const std::vector<std::string>& args, RunOptions o = {}) {
    o.cwd = dir;
    return ember(args, o);
  }
  // The command fails with `message` on its error line and leaves the directory as it was.
  void expect_refused(const std::vector<std::string>& args, const std::string& message,
                      RunOptions o = {}) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    SCOPED_TRACE("ember " + line);
    const std::vector<fs::path> before = entries();
    const Result r = run(args, std::move(o));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("ember: error: " + message), std::string::npos) << r.output;
    EXPECT_EQ(entries(), before) << "a failed command left files behind";
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> v;
    for (const auto& e : fs::recursive_directory_iterator(dir)) v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
  }
  fs::path dir;
};

TEST_F(Cli, RangeErrorsNameTheOptionAndTheRule) {
  expect_refused({"train", "--lr", "0"}, "--lr must be > 0 (got 0)\n");
  expect_refused({"train", "--lr", "inf"}, "--lr must be a finite number > 0 (got 'inf')\n");
  expect_refused({"train", "--gamma", "2"}, "--gamma must be in [0, 1] (got 2)\n");
  expect_refused({"train", "--adam-beta1", "1"}, "--adam-beta1 must be in [0, 1) (got 1)\n");
  expect_refused({"train", "--checkpoint-every", "-1"},
                 "--checkpoint-every must be >= 0 (got -1)\n");
  expect_refused({"train", "--envs", "0"}, "--envs must be in [1, 4096] (got 0)\n");
  expect_refused({"train", "--progress", "loud"},
                 "--progress must be one of auto, tty, plain, none (got 'loud')\n");
  expect_refused({"train", "--entropy-coef", "nan"},
                 "--entropy-coef must be a finite number (got 'nan')\n");
  expect_refused({"eval", "--policy", ".", "--episodes", "0"}, "--episodes must be > 0 (got 0)\n");
  expect_refused({"env", "--episodes", "0"}, "--episodes must be in [1, 1000000000] (got 0)\n");
  expect_refused({"env", "--gravity", "-13"}, "--gravity must be in (-12, 0) (got -13)\n");
  expect_refused({"env", "--gravity", "0"}, "--gravity must be in (-12, 0) (got 0)\n");
  expect_refused({"env", "--policy", "smart"},
                 "--policy must be one of heuristic, random (got 'smart')\n");
#ifdef EMBER_HAVE_ONNX
  expect_refused({"onnx", "test", ".", "--rtol", "-1"}, "--rtol must be >= 0 (got -1)\n");
#endif
  // The message ends with where the help is.
  const Result r = run({"train", "--lr", "0"});
  EXPECT_NE(r.output.find("Run 'ember train --help' for more information."), std::string::npos)
      << r.output;
}

#ifdef EMBER_HAVE_ONNX
// `ember onnx run --profile DIR` refuses, before the model is even loaded (m.onnx does not
// exist), a DIR whose records it would overwrite (a previous profile's, a training run's) or that
// it cannot make, and leaves the files there as they were.
TEST_F(Cli, OnnxProfileRefusesADirectoryItWouldOverwriteOrCannotMake) {
  expect_refused({"onnx", "run", "m.onnx", "--profile", ""}, "--profile needs a directory\n");
  for (const char* file : {"trace.json", "onnx-profile.json", "run.json"}) {
    fs::create_directories(dir / "p");
    std::ofstream(dir / "p" / file) << "keep";
    expect_refused({"onnx", "run", "m.onnx", "--profile", "p"},
                   std::string("--profile p already holds ") + file);
    EXPECT_EQ(ember::support::read_file((dir / "p" / file).string()), "keep");
    fs::remove_all(dir / "p");
  }
  std::ofstream(dir / "afile") << "keep";
  expect_refused({"onnx", "run", "m.onnx", "--profile", "afile"},
                 "--profile afile: not a directory");
  expect_refused(
      {"onnx", "run", "m.onnx", "--profile", "afile/sub"},
      "--profile afile/sub cannot be made: '" + (dir / "afile").string() + "' is not a directory");
}
#endif

TEST_F(Cli, ValuesOfTheWrongTypeNameTheKindExpected) {
  expect_refused({"train", "--seed", "1.5"}, "--seed must be a non-negative integer (got '1.5')\n");
  expect_refused({"env", "--episodes", "2.5"}, "--episodes must be an integer (got '2.5')\n");
#ifdef EMBER_HAVE_ONNX
  expect_refused({"onnx", "run", "m.onnx", "--repeat", "1.5"},
                 "--repeat must be an integer (got '1.5')\n");
#endif
}

// Bad usage exits 2 whatever its kind (CLI11's own codes are 104, 105, 109, ...); an error while
// running exits 1; --help exits 0 (README, "Exit status").
TEST_F(Cli, ACommandLineErrorExitsTwoAndARunErrorOne) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"train", "--lrr", "3"},
                                             {"train", "--lr", "fast"},
                                             {"train", "--lr", "0"},
                                             {"trian"},
                                             {}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << r.output;
  }
  std::ofstream(dir / "bad.safetensors") << "not a safetensors file";
  const Result bad = run({"inspect", "bad.safetensors"});
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_EQ(run({"train", "--help"}).status, 0);
}

TEST_F(Cli, NegativeValuesOfUnsignedOptionsAreRefused) {
  // CLI11 alone would wrap -3 to 2^64-3 and train.
  expect_refused({"train", "--seed", "-3"}, "--seed must be >= 0 (got -3)\n");
  expect_refused({"eval", "--policy", ".", "--seed", "-1"}, "--seed must be >= 0 (got -1)\n");
  expect_refused({"env", "--seed", "-2"}, "--seed must be >= 0 (got -2)\n");
}

TEST_F(Cli, UnknownNamesAreNamedWithTheNearestValidOne) {
  expect_refused({"train", "--lrr", "3"}, "unknown option '--lrr'; did you mean '--lr'?\n");
  expect_refused({"train", "--lrr=3"}, "unknown option '--lrr'; did you mean '--lr'?\n");
  expect_refused({"train", "--hiden", "8"}, "unknown option '--hiden'; did you mean '--hidden'?\n");
  expect_refused({"eval", "--polcy", "x"}, "unknown option '--polcy'; did you mean '--policy'?\n");
  expect_refused({"trian"}, "unknown command 'trian'; did you mean 'train'?\n");
  expect_refused({"--verison"}, "unknown option '--verison'; did you mean '--version'?\n");
  // Nothing near: no suggestion.
  expect_refused({"train", "--zzzzzzzz"}, "unknown option '--zzzzzzzz'\n");
  expect_refused({"frobnicate"}, "unknown command 'frobnicate'\n");
  expect_refused({"train", "extra"}, "unexpected argument 'extra'\n");
  // No command at all: the commands are listed.
  expect_refused({}, "a command is required: train, eval, env, inspect");
#ifdef EMBER_HAVE_ONNX
  expect_refused({"onnx", "rnu", "m.onnx"}, "unknown command 'rnu'; did you mean 'run'?\n");
  expect_refused({"onnx"}, "a command is required: run, test or info\n");
#endif
}

TEST_F(Cli, AnUnwritableDirectoryIsPermissionDenied) {
  // Root writes anywhere: as root, run as nobody in this root-owned 0755 directory; otherwise
  // take the write permission away.
  // As nobody, the build tree itself may be out of reach (a checkout under /root is 0700), so
  // nobody runs a copy of the binary from a world-readable temporary directory.
  RunOptions as;
  fs::path bin;
  if (geteuid() == 0) {
    as.uid = kNobody;
    bin = ember_test::shared_temp_dir("ember-cli-bin");
    as.exe = ember_test::runnable_copy(EMBER_CLI_PATH, bin).string();
  } else {
    fs::permissions(dir, fs::perms(0555));
  }
  expect_refused({"train"},
                 "cannot create output directory 'runs' in the working directory: Permission "
                 "denied\n",
                 as);
  // --out under a directory that cannot be made. The interpreter needs no kernel compiler (nobody
  // has no kernel cache), and the networks are small: it fails when the records are made.
  as.env = {{"EMBER_DEVICE", "interp"}};
  expect_refused({"train", "--out", "a/run", "--hidden", "8", "--layers", "1", "--envs", "1",
                  "--steps-per-env", "8", "--minibatch", "8"},
                 "cannot create output directory 'a/run': cannot create 'a': Permission denied\n",
                 as);
  std::error_code ec;
  if (!bin.empty()) fs::remove_all(bin, ec);
}

TEST_F(Cli, AMissingCompilerIsNamedBeforeARunDirectoryIsMade) {
  RunOptions o;
  o.env = {{"EMBER_CC", "/nonexistent/cc"}};
  expect_refused({"train"},
                 "EMBER_CC=/nonexistent/cc: no such C compiler (not an executable file); set "
                 "EMBER_CC to a C compiler, or unset it to use cc, gcc or clang from PATH\n",
                 o);
  o.env = {{"EMBER_CC", "no-such-cc-44"}};
  expect_refused({"train", "--out", "run"},
                 "EMBER_CC=no-such-cc-44: no such C compiler (not found on PATH)", o);
  // A configuration the trainer refuses leaves no run directory either.
  expect_refused({"train", "--minibatch", "3000"},
                 "train config: minibatch (3000) must divide the transitions per epoch (20000)\n");
}

// A run of one tiny epoch on the interpreter (no kernel compiler, well under a second).
std::vector<std::string> tiny_run() {
  std::vector<std::string> a = ember_test::short_train_args(8, 30);
  for (const char* s : {"--envs", "2", "--steps-per-env", "16", "--minibatch", "32", "--passes",
                        "1", "--max-transitions", "32"})
    a.push_back(s);
  return a;
}
const std::vector<std::string> kTinyRun = tiny_run();

RunOptions interp() {
  RunOptions o;
  o.env = {{"EMBER_DEVICE", "interp"}};
  return o;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(Cli, ARunEndsWithOneSummary) {
  std::vector<std::string> args = {"train", "--out", "run"};
  args.insert(args.end(), kTinyRun.begin(), kTinyRun.end());
  const Result r = run(args, interp());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count(r.output, "Stopped at --max-transitions after 32 transitions (1 epoch), "), 1)
      << r.output;
  EXPECT_EQ(count(r.output, "saved-policy evaluation: "), 1) << r.output;
  EXPECT_EQ(count(r.output, "stopped (max transitions)"), 0) << r.output;
  EXPECT_EQ(count(r.output, "policy:     run/policy.safetensors\n"), 1) << r.output;
}

// An error from the library (here the kernel compiler, a program that exists and fails, on an
// empty kernel cache) is printed after one "ember: error: " prefix, not two.
TEST_F(Cli, ALibraryErrorHasOnePrefix) {
  RunOptions o;
  o.env = {{"EMBER_CC", "/bin/false"}, {"EMBER_CACHE_DIR", (dir / "cache").string()}};
  std::vector<std::string> args = {"train", "--out", "run"};
  args.insert(args.end(), kTinyRun.begin(), kTinyRun.end());
  const Result r = run(args, o);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ember: error: kernel compilation failed (/bin/false "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(count(r.output, "ember: error: "), 1) << r.output;
  EXPECT_EQ(count(r.output, "error: ember: "), 0) << r.output;
}

TEST_F(Cli, EvalTakesARunDirectoryAndSaysWhatToPassForAManifest) {
  std::vector<std::string> args = {"train", "--out", "run"};
  args.insert(args.end(), kTinyRun.begin(), kTinyRun.end());
  ASSERT_EQ(run(args, interp()).status, 0);
  // A run directory: the policy of its newest checkpoint, as train --resume picks it.
  const Result r = run(
      {"eval", "--policy", "run", "--episodes", "2", "--envs", "1", "--max-episode-steps", "30"},
      interp());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("policy run/checkpoints/final.policy.safetensors\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 episodes (1 envs x 2)"), std::string::npos) << r.output;
  expect_refused({"eval", "--policy", "run/checkpoints/final.json"},
                 "--policy run/checkpoints/final.json is a checkpoint manifest, not a policy: "
                 "pass the policy it names, run/checkpoints/final.policy.safetensors, or the run "
                 "directory, run\n");
  expect_refused({"eval", "--policy", "run/run.json"},
                 "--policy run/run.json is not a policy (a .safetensors file written by ember "
                 "train) nor a checkpoint manifest; pass a policy file or a run directory\n");
  expect_refused({"eval", "--policy", "missing"},
                 "--policy must name an existing file or directory (got 'missing': No such file "
                 "or directory)\n");
}

TEST_F(Cli, TrainHelpGroupsItsOptionsAndTrainIsListedFirst) {
  const Result top = run({"--help"});
  ASSERT_EQ(top.status, 0) << top.output;
  const size_t train = top.output.find("\n  train "), eval = top.output.find("\n  eval "),
               env = top.output.find("\n  env "), inspect = top.output.find("\n  inspect ");
  ASSERT_NE(train, std::string::npos) << top.output;
  EXPECT_LT(train, eval);
  EXPECT_LT(train, env);
  EXPECT_LT(train, inspect);

  const Result help = run({"train", "--help"});
  ASSERT_EQ(help.status, 0) << help.output;
  const std::string& h = help.output;
  // Each group's heading, in order, and an option of each under it.
  size_t at = 0;
  for (const auto& [group, option] :
       std::vector<std::pair<std::string, std::string>>{{"\nRun:\n", "--seed"},
                                                        {"\nWorkload:\n", "--envs"},
                                                        {"\nNetworks:\n", "--hidden"},
                                                        {"\nAlgorithm:\n", "--lr"}}) {
    const size_t g = h.find(group, at);
    ASSERT_NE(g, std::string::npos) << group << " missing or out of order:\n" << h;
    const size_t o = h.find("  " + option + " ", g);
    ASSERT_NE(o, std::string::npos) << option << " missing:\n" << h;
    const size_t next = h.find(":\n", g + group.size());
    EXPECT_LT(o, next) << option << " is not in the group " << group;
    at = g + group.size();
  }
}

}  // namespace

#include "ember/rl/records.h"

#include <box2d/b2_common.h>
#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ember/build_info.h"  // the kernel compiler and target (part of every cache key)
#include "ember/context.h"
#include "ember/error.h"
#include "ember/rl/plot.h"
#include "ember/support/atomic_file.h"
#include "ember/support/clock.h"
#include "ember/support/process.h"

#ifndef EMBER_SOURCE_DIR
#define EMBER_SOURCE_DIR ""
#endif
#ifndef EMBER_VERSION
#define EMBER_VERSION "unknown"
#endif
#ifndef EMBER_CXX_FLAGS
#define EMBER_CXX_FLAGS "unknown"
#endif
#ifndef EMBER_BUILD_TYPE
#define EMBER_BUILD_TYPE "unknown"
#endif

namespace ember {
// The kernel compiler and target as run.json records them: every field by its name (nlohmann's
// to_json; the from_json it also defines goes unused).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BuildInfo, kernel_compiler_path, kernel_compiler_version,
                                   kernel_compiler_flags, isa, host_isa, vector_bits,
                                   vector_registers, fma, l1d_bytes, l2_bytes, l3_bytes)
}  // namespace ember

namespace ember::rl {
namespace {

const double g_library_loaded = support::now_seconds();

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string find_executable(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return "";
}

nlohmann::json git_info() {
  const std::string dir = EMBER_SOURCE_DIR;
  if (dir.empty() || !std::filesystem::exists(dir + "/.git")) return "unknown";
  // No shell: git is looked up on PATH here and run with an argument vector.
  const std::string git = find_executable("git");
  if (git.empty()) return "unknown";
  const support::ProcessResult rev =
      support::run_process({git, "-C", dir, "rev-parse", "HEAD"}, 4096, true);
  if (!rev.ok() || trim(rev.output).empty()) return "unknown";
  const support::ProcessResult status = support::run_process(
      {git, "-C", dir, "status", "--porcelain", "--untracked-files=no"}, 1 << 20, true);
  if (!status.ok()) return {{"revision", trim(rev.output)}, {"dirty", "unknown"}};
  return {
      {"revision", trim(rev.output)}, {"dirty", !trim(status.output).empty()}, {"source_dir", dir}};
}

std::string utc_now() { return support::wall_time("%Y-%m-%dT%H:%M:%SZ", true); }

}  // namespace

double seconds_since_process_start() {
  // /proc/self/stat field 22: start time in clock ticks since boot; /proc/uptime: seconds since
  // boot. Their difference includes exec and dynamic loading (10 ms resolution).
  std::ifstream stat("/proc/self/stat"), up("/proc/uptime");
  std::string s;
  double uptime = 0;
  if (std::getline(stat, s) && (up >> uptime)) {
    const size_t close = s.rfind(')');
    if (close != std::string::npos) {
      std::istringstream rest(s.substr(close + 2));
      std::string field;
      for (int i = 3; i <= 22 && (rest >> field); ++i)
        if (i == 22) {
          const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
          const double start = std::stod(field) / ticks;
          if (uptime >= start) return uptime - start;
        }
    }
  }
  return support::now_seconds() - g_library_loaded;
}

nlohmann::json provenance() {
  nlohmann::json j;
  j["git"] = git_info();
  j["cpu"] = {{"model", ember::cpu_model()},
              {"logical_cores", std::thread::hardware_concurrency()},
              {"online_cores", sysconf(_SC_NPROCESSORS_ONLN)}};
#if defined(__clang__)
  const std::string cxx = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string cxx = std::string("g++ ") + __VERSION__;
#else
  const std::string cxx = "unknown";
#endif
  j["compiler"] = {{"cxx", cxx}, {"flags", EMBER_CXX_FLAGS}, {"build_type", EMBER_BUILD_TYPE}};
  try {
    j["kernel"] = build_info();
  } catch (const std::exception& e) {
    j["kernel"] = {{"error", e.what()}};
  }
  j["libraries"] = {
      {"ember", EMBER_VERSION},
      {"box2d", std::to_string(b2_version.major) + "." + std::to_string(b2_version.minor) + "." +
                    std::to_string(b2_version.revision)},
      {"libpng", PNG_LIBPNG_VER_STRING},
      {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                            std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                            std::to_string(NLOHMANN_JSON_VERSION_PATCH)},
  };
  j["threads"] = {{"kernel", get_num_threads()}};
  j["device"] = Context::get().device;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  j["host"] = host;
  j["started_at"] = utc_now();
  j["pid"] = static_cast<int64_t>(getpid());
  return j;
}

namespace {

// Takes <dir>/.lock (flock, exclusive, non-blocking) and returns its descriptor.
int claim_directory(const std::string& dir) {
  const std::string lock = dir + "/.lock";
  const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw IOError("cannot create '" + lock + "': " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    throw IOError("output directory '" + dir + "' is in use by another ember train" +
                  (n > 0 ? " (pid " + trim(buf) + ")" : std::string()) + "; choose another --out");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid is informational only.
  }
  return fd;
}

// The records of epochs 0 .. next_epoch-1, in order, from `path`; stops at the first line that
// is torn, malformed or out of sequence. `dropped` counts the lines left out.
std::string kept_records(const std::string& path, int64_t next_epoch, int64_t* dropped) {
  std::ifstream f(path);
  std::string line, kept;
  int64_t expect = 0;
  bool stop = false;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    if (!stop && expect < next_epoch && !f.eof()) {  // the last line lacks its '\n': torn
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("epoch") && j["epoch"].is_number_integer() &&
          j["epoch"].get<int64_t>() == expect) {
        kept += line + "\n";
        ++expect;
        continue;
      }
    }
    stop = true;
    ++*dropped;
  }
  return kept;
}

// Removes the temporary files of atomic writes that a kill -9 interrupted (".NAME.tmp..."), in
// `dir` and `dir`/checkpoints. Called with the directory's lock held.
void remove_stale_temporaries(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::path& d : {fs::path(dir), fs::path(dir) / "checkpoints"})
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string n = e.path().filename().string();
      if (n.size() > 1 && n[0] == '.' && n.find(".tmp") != std::string::npos &&
          e.is_regular_file(ec))
        fs::remove(e.path(), ec);
    }
}

// Moves the checkpoints of an abandoned timeline (manifests with an epoch after `next_epoch`, and
// the files they name) into checkpoints/abandoned-<pid>/, so that resuming from an earlier
// checkpoint never leaves a later one for `--resume <run>` to pick. Nothing is deleted.
void set_aside_later_checkpoints(const std::string& dir, int64_t next_epoch) {
  namespace fs = std::filesystem;
  const fs::path ck = fs::path(dir) / "checkpoints";
  const fs::path aside = ck / ("abandoned-" + std::to_string(getpid()));
  std::error_code ec;
  std::vector<fs::path> later;
  for (const auto& e : fs::directory_iterator(ck, ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream f(e.path());
    const nlohmann::json m = nlohmann::json::parse(f, nullptr, false);
    if (m.is_object() && m.contains("epoch") && m["epoch"].is_number_integer() &&
        m["epoch"].get<int64_t>() > next_epoch)
      later.push_back(e.path());
  }
  for (const fs::path& manifest : later) {
    fs::create_directory(aside, ec);
    const std::string stem = manifest.stem().string();
    for (const char* suffix : {".policy.safetensors", ".optimizer.safetensors"})
      fs::rename(ck / (stem + suffix), aside / (stem + suffix), ec);
    fs::rename(manifest, aside / manifest.filename(), ec);  // the manifest last
  }
}

}  // namespace

RunRecorder::RunRecorder(std::string dir, const nlohmann::json& config, const nlohmann::json& extra,
                         const RunResume* resume)
    : dir_(std::move(dir)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(dir_).parent_path();
  // Its parent's own error (Permission denied), not mkdir's "No such file or directory" after it.
  if (!parent.empty() && !fs::create_directories(parent, ec) && ec)
    throw IOError("cannot create output directory '" + dir_ + "': cannot create '" +
                  parent.string() + "': " + ec.message());
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST)
    throw IOError("cannot create output directory '" + dir_ + "': " + std::strerror(errno));
  lock_fd_ = claim_directory(dir_);
  try {
    bool empty = true;
    // profile/: `ember train --profile` writes the graphs of the realizes that build the networks
    // there before the records open.
    for (const auto& e : fs::directory_iterator(dir_, ec))
      if (e.path().filename() != ".lock" && e.path().filename() != "profile") empty = false;
    const bool in_place = resume && fs::equivalent(dir_, resume->source_dir, ec);
    if (!empty && !in_place)
      throw IOError("output directory '" + dir_ +
                    "' exists and is not empty; choose a new --out (one run, one directory)" +
                    (resume ? std::string()
                            : ", or continue that run with `ember train --resume '" + dir_ + "'`"));
    nlohmann::json fresh = {{"provenance", provenance()}, {"config", config}};
    if (extra.is_object())
      for (auto& [k, v] : extra.items()) fresh[k] = v;
    if (resume) {
      std::string kept =
          kept_records(resume->source_dir + "/epochs.jsonl", resume->next_epoch, &dropped_records_);
      const int64_t lines = static_cast<int64_t>(std::count(kept.begin(), kept.end(), '\n'));
      if (lines == resume->next_epoch - 1 && resume->record.is_object())
        kept += resume->record.dump() + "\n";
      support::write_file_atomic(path("epochs.jsonl"), kept);
      fresh["resumed_from"] = resume->checkpoint;
      fresh["resumed_at_epoch"] = resume->next_epoch;
    }
    if (in_place) {
      remove_stale_temporaries(dir_);
      set_aside_later_checkpoints(dir_, resume->next_epoch);
      std::ifstream f(path("run.json"));
      run_ = nlohmann::json::parse(f, nullptr, false);
      if (!run_.is_object()) run_ = {{"note", "run.json of the first run was unreadable"}};
      run_.erase("summary");  // the summary of the run being continued is replaced at the end
      run_["resumes"].push_back(fresh);
    } else {
      run_ = fresh;
    }
    write_json("run.json", run_);
    epochs_fd_ =
        open(path("epochs.jsonl").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (epochs_fd_ < 0)
      throw IOError("cannot open '" + path("epochs.jsonl") +
                    "' for writing: " + std::strerror(errno));
  } catch (...) {
    close(lock_fd_);
    throw;
  }
}

RunRecorder::~RunRecorder() {
  if (epochs_fd_ >= 0) close(epochs_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

void RunRecorder::write_json(const std::string& name, const nlohmann::json& j) const {
  support::write_file_atomic(path(name), j.dump(2) + "\n");
}

void RunRecorder::epoch(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  // One write of the whole line; on failure (e.g. a full disk) the file is cut back to its
  // previous size, so it never ends in a torn line.
  const off_t before = lseek(epochs_fd_, 0, SEEK_END);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(epochs_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (done < line.size() || fsync(epochs_fd_) != 0) {
    const int e = done < line.size() && errno == 0 ? ENOSPC : errno;
    if (before >= 0 && ftruncate(epochs_fd_, before) != 0) {
      // Nothing more to do; the resume drops a torn last line.
    }
    throw IOError("cannot append to '" + path("epochs.jsonl") + "': " + std::strerror(e));
  }
}

void to_json(nlohmann::json& j, const CurvePoint& p) {
  j = {{"epoch", p.epoch}, {"transitions", p.transitions}, {"mean", p.mean}, {"std", p.std}};
}

void RunRecorder::eval_point(const CurvePoint& p, double target) {
  curve_.push_back(p);
  write_plot(nullptr, target);
}

void RunRecorder::write_plot(const CurvePoint* saved, double target) const {
  PlotSeries s;
  for (const auto& p : curve_) {
    s.x.push_back(static_cast<double>(p.transitions));
    s.y.push_back(p.mean);
    s.err.push_back(p.std);
  }
  PlotOptions o;
  o.target = target;
  // The y axis names the evaluation this run actually made (eval envs x episodes per env).
  const nlohmann::json& c = run_.value("config", nlohmann::json::object());
  if (c.contains("eval_envs") && c.contains("eval_episodes_per_env"))
    o.y_label =
        "evaluation mean return (" +
        std::to_string(c["eval_envs"].get<int64_t>() * c["eval_episodes_per_env"].get<int64_t>()) +
        " episodes)";
  if (saved) o.marker = std::make_pair(static_cast<double>(saved->transitions), saved->mean);
  support::write_file_atomic(path("learning_curve.svg"), learning_curve_svg(s, o));
}

void RunRecorder::finish(const nlohmann::json& summary, const CurvePoint* saved_eval,
                         double target) {
  write_json("summary.json", summary);
  run_["summary"] = summary;
  write_json("run.json", run_);
  write_plot(saved_eval, target);
}

}  // namespace ember::rl

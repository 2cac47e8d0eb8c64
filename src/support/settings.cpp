#include "ember/support/settings.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "ember/error.h"

namespace ember::support {
namespace {

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The integer in `name`, or nullopt when unset; ValueError unless it is an integer in [lo, hi].
std::optional<int> integer(const char* name, int lo, int hi, const char* what) {
  const char* v = get(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || errno != 0 || n < lo || n > hi)
    throw ValueError(std::string(name) + "=" + v + " is not " + what);
  return static_cast<int>(n);
}

void text(const char* name, std::string& out) {
  if (const char* v = get(name)) out = v;
}

}  // namespace

Settings Settings::from_environment() {
  Settings s;
  s.debug =
      integer("DEBUG", 0, 1 << 20, "a debug level (an integer >= 0, e.g. 0 to 4)").value_or(0);
  text("EMBER_DEVICE", s.device);
  s.threads =
      integer("EMBER_THREADS", 1, 1 << 16, "a thread count (a positive integer)").value_or(0);
  text("EMBER_ISA", s.isa);  // checked against the CPU where it is used (runtime/cpu/target.h)
  text("EMBER_CACHE_DIR", s.cache_dir);
  text("EMBER_CC", s.cc);
  const char* flag = "0 or 1 (an integer; > 0 turns it on)";
  s.profile = integer("PROFILE", 0, 1 << 20, flag).value_or(0) > 0;
  text("EMBER_PROFILE_FILE", s.profile_file);
  s.graph = integer("GRAPH", 0, 1 << 20, flag).value_or(0) > 0;
  text("EMBER_GRAPH_DIR", s.graph_dir);
  s.plan_cache = integer("EMBER_PLAN_CACHE", 0, 1 << 20, flag).value_or(1) > 0;
  s.beam = integer("BEAM", 0, 256, "a beam width (an integer from 0, off, to 256)").value_or(0);
  s.beam_runs =
      integer("EMBER_BEAM_RUNS", 1, 1000, "a count of timed runs (1 to 1000)").value_or(5);
  s.fail_thread_start =
      integer("EMBER_TEST_FAIL_THREAD_START", 0, 1 << 16, "a worker index").value_or(0);
  return s;
}

Settings& settings() {
  // Read under a lock rather than a static initialiser, so that a malformed variable throws on
  // every call instead of once.
  static std::mutex mu;
  static std::optional<Settings> s;
  std::lock_guard<std::mutex> l(mu);
  if (!s) s = Settings::from_environment();
  return *s;
}

}  // namespace ember::support

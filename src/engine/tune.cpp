// Tuned plans (tune.h): the tune cache of this process, the programs a search replaced, and the
// search at a kernel's first launch.
#include "engine/tune.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <unordered_map>

#include "codegen/plan_text.h"
#include "ember/context.h"
#include "ember/error.h"
#include "ember/support/clock.h"
#include "engine/stats.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/kernel_cache.h"
#include "runtime/cpu/target.h"
#include "search/beam_search.h"
#include "search/kernel_timer.h"
#include "search/tune_key.h"

namespace ember::engine {

namespace {

// A program met at launch: kept alive (its address is the map's key) with the program that runs
// in its place (null: itself).
struct Decided {
  std::shared_ptr<runtime::Program> program, launch;
};

struct TuneState {
  std::mutex mu;  // everything below
  std::unique_ptr<search::TuneCache> cache;
  bool writable = false;
  std::string dir_problem;  // why the cache's directory cannot hold it ("" when it can)
  std::set<std::string> warned;
  std::unordered_map<const runtime::Program*, Decided> decided;
  std::mutex search_mu;  // one search at a time (each times on the whole machine)
};
TuneState& state() {
  static TuneState* s = new TuneState();  // never destroyed: kernels may launch at exit
  return *s;
}

// Says once per cache and reason that the cache is not used (st.mu held).
void warn(TuneState& st, const std::string& path, const std::string& why) {
  if (st.warned.insert(path + "\n" + why).second)
    std::fprintf(stderr, "ember: warning: tune cache %s: %s; kernels keep the heuristic's plans\n",
                 path.c_str(), why.c_str());
}

// The process's tune cache, opened for writing when BEAM is on; null (after a warning) when it
// cannot be used (st.mu held).
search::TuneCache* cache(TuneState& st) {
  const bool writable = Context::get().beam > 0;
  const std::string dir = runtime::cache_dir(), path = dir + "/tune.sqlite";
  if (!st.cache || st.cache->path() != path || st.writable != writable) {
    st.dir_problem.clear();
    if (writable)
      if (auto why = runtime::ensure_private_dir(dir, false)) st.dir_problem = "directory " + *why;
    st.cache = std::make_unique<search::TuneCache>(path, writable && st.dir_problem.empty());
    st.writable = writable;
  }
  const std::string& why = !st.dir_problem.empty() ? st.dir_problem : st.cache->why();
  if (why.empty()) return st.cache.get();
  warn(st, path, why);
  return nullptr;
}

// The plan of a cache row if it fits `k` on this machine.
std::optional<codegen::KernelPlan> fitting_plan(const std::string& text,
                                                const schedule::Kernel& k) {
  std::optional<codegen::KernelPlan> p = codegen::plan_from_text(text);
  if (p && !p->legal(k, runtime::host_target())) p.reset();
  return p;
}

std::shared_ptr<runtime::Program> build(const schedule::Kernel& k,
                                        const codegen::KernelPlan& plan) {
  std::shared_ptr<runtime::Program> p = runtime::prepare_cpu_program(k, plan);
  runtime::cpu_device().build({p});
  return p;
}

// The progress line on a terminal, rewritten in place.
void show_progress(const SearchCount& c, const std::string& name, int64_t timed, double speedup,
                   double elapsed) {
  std::fprintf(
      stderr, "\rBEAM=%d: kernel %d of %d (%s): %lld candidates timed, best %.2fx, %.1f s\033[K",
      Context::get().beam, c.i, c.n, name.c_str(), static_cast<long long>(timed), speedup, elapsed);
  std::fflush(stderr);
}

// Searches `k`'s plans on `bufs`, stores the row, and returns the chosen plan.
codegen::KernelPlan search_plan(const schedule::Kernel& k, const search::TuneKey& key,
                                void* const* bufs, SearchCount& count, search::TuneCache& tc) {
  const Context& ctx = Context::get();
  const bool terminal = isatty(STDERR_FILENO) == 1;
  count.i++;
  const std::string name = k.name();
  search::SearchOptions o;
  o.width = ctx.beam;
  o.seconds = ctx.beam_seconds;
  search::TimerOptions to;
  to.runs = ctx.beam_runs;
  const search::SearchResult r = search::beam_search(
      k, runtime::host_target(),
      search::kernel_timer(k, std::vector<void*>(bufs, bufs + k.buffers.size()), to), o,
      [&](int64_t timed, double speedup, double elapsed) {
        if (terminal) show_progress(count, name, timed, speedup, elapsed);
      });
  if (terminal && count.i >= count.n) std::fprintf(stderr, "\n");
  stat_add(runtime_stats().beam_searches);
  search::TuneRow row{key,
                      name,
                      codegen::plan_text(r.best),
                      r.heuristic_seconds * 1e6,
                      r.best_seconds * 1e6,
                      r.timed,
                      r.elapsed,
                      ""};
  if (!tc.store(row)) {
    TuneState& st = state();
    std::lock_guard<std::mutex> l(st.mu);
    warn(st, tc.path(), tc.why());
  }
  if (ctx.debug >= 3) {
    const std::string words = r.best.str();
    std::fprintf(stderr,
                 "  beam: %s: %s, %.2fx the heuristic's speed (%.2f -> %.2f us), %lld plans timed "
                 "in %.2f s%s\n",
                 name.c_str(), words.empty() ? "plain loops" : words.c_str(), r.speedup(),
                 r.heuristic_seconds * 1e6, r.best_seconds * 1e6, static_cast<long long>(r.timed),
                 r.elapsed, r.timed_out ? " (time limit)" : "");
  }
  return r.best;
}

// Decides what runs in place of `p` (search_mu held): the cache's plan, a search's, or `p`.
std::shared_ptr<runtime::Program> decide(const runtime::Program& p, void* const* bufs,
                                         SearchCount& count) {
  TuneState& st = state();
  search::TuneCache* tc;
  {
    std::lock_guard<std::mutex> l(st.mu);
    tc = cache(st);
  }
  if (!tc) return nullptr;  // the heuristic's plan, said once
  const schedule::Kernel& k = p.kernel;
  const search::TuneKey key = search::tune_key(k.key());
  std::optional<codegen::KernelPlan> plan;
  if (std::optional<std::string> text = tc->find(key)) plan = fitting_plan(*text, k);
  if (plan) {
    stat_add(runtime_stats().beam_cache_hits);
  } else {
    if (!tc->ok()) {  // the lookup failed: said once, nothing searched
      std::lock_guard<std::mutex> l(st.mu);
      warn(st, tc->path(), tc->why());
      return nullptr;
    }
    plan = search_plan(k, key, bufs, count, *tc);
  }
  if (codegen::plan_text(*plan) == codegen::plan_text(runtime::cpu_program_plan(p))) return nullptr;
  try {
    return build(k, *plan);
  } catch (const Error& e) {  // the run goes on with the program it has
    std::lock_guard<std::mutex> l(st.mu);
    warn(st, tc->path(), "the plan of " + k.name() + " does not build (" + e.what() + ")");
    return nullptr;
  }
}

}  // namespace

std::shared_ptr<runtime::Program> prepare_tuned_program(const schedule::Kernel& k,
                                                        const std::string& key) {
  TuneState& st = state();
  search::TuneCache* tc;
  {
    std::lock_guard<std::mutex> l(st.mu);
    tc = cache(st);
  }
  if (!tc) return nullptr;
  const std::optional<std::string> text = tc->find(search::tune_key(key));
  if (!text) {
    if (!tc->ok()) {
      std::lock_guard<std::mutex> l(st.mu);
      warn(st, tc->path(), tc->why());
    }
    return nullptr;
  }
  const std::optional<codegen::KernelPlan> plan = fitting_plan(*text, k);
  if (!plan) return nullptr;  // a launch with BEAM on searches it again
  std::shared_ptr<runtime::Program> p = runtime::prepare_cpu_program(k, *plan);
  stat_add(runtime_stats().beam_cache_hits);
  std::lock_guard<std::mutex> l(st.mu);
  st.decided[p.get()] = {p, nullptr};
  return p;
}

bool needs_search(const runtime::Program& p) {
  if (Context::get().beam <= 0 || !runtime::is_cpu_program(p)) return false;
  TuneState& st = state();
  std::lock_guard<std::mutex> l(st.mu);
  return !st.decided.count(&p);
}

const std::shared_ptr<runtime::Program>& searched_program(
    const std::shared_ptr<runtime::Program>& p, void* const* bufs, SearchCount& count) {
  if (Context::get().beam <= 0 || !runtime::is_cpu_program(*p)) return p;
  TuneState& st = state();
  auto lookup = [&]() -> const std::shared_ptr<runtime::Program>* {
    std::lock_guard<std::mutex> l(st.mu);
    auto it = st.decided.find(p.get());
    if (it == st.decided.end()) return nullptr;
    return it->second.launch ? &it->second.launch : &p;
  };
  if (auto* q = lookup()) return *q;
  std::lock_guard<std::mutex> one(st.search_mu);
  if (auto* q = lookup()) return *q;  // another thread decided meanwhile
  std::shared_ptr<runtime::Program> chosen = decide(*p, bufs, count);
  std::lock_guard<std::mutex> l(st.mu);
  if (chosen) st.decided[chosen.get()] = {chosen, nullptr};
  Decided& d = st.decided[p.get()] = {p, std::move(chosen)};
  return d.launch ? d.launch : p;
}

void forget_searches() {
  TuneState& st = state();
  std::lock_guard<std::mutex> one(st.search_mu);
  std::lock_guard<std::mutex> l(st.mu);
  st.decided.clear();
  st.cache.reset();
  st.warned.clear();
}

}  // namespace ember::engine

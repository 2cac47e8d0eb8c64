// ember/tune.h: the tune cache for `ember tune --list` and `--clear`.
#include <unistd.h>

#include "codegen/plan_text.h"
#include "ember/error.h"
#include "ember/tune.h"
#include "engine/tune.h"
#include "runtime/cpu/compiler.h"
#include "search/tune_cache.h"

namespace ember {

std::string tune_cache_path() { return runtime::cache_dir() + "/tune.sqlite"; }

std::vector<TunedKernel> tune_cache_rows() {
  search::TuneCache tc(tune_cache_path(), false);
  std::vector<search::TuneRow> rows = tc.rows();
  if (!tc.ok()) throw Error("tune cache " + tc.path() + ": " + tc.why());
  std::vector<TunedKernel> out;
  for (search::TuneRow& r : rows) {
    TunedKernel t;
    t.kernel = r.name;
    const auto plan = codegen::plan_from_text(r.plan);
    t.plan = !plan                 ? "unreadable (" + r.plan + ")"
             : plan->str().empty() ? "plain loops"
                                   : plan->str();
    t.heuristic_us = r.heuristic_us;
    t.tuned_us = r.best_us;
    t.candidates = r.candidates;
    t.search_seconds = r.search_seconds;
    t.threads = r.key.threads;
    t.target = r.key.target;
    t.cpu = r.key.cpu;
    t.compiler = r.key.compiler;
    t.ember_version = r.key.ember;
    t.created = r.created;
    out.push_back(std::move(t));
  }
  return out;
}

int64_t clear_tune_cache() {
  const std::string path = tune_cache_path();
  engine::forget_searches();  // this process's open cache is closed first
  if (::access(path.c_str(), F_OK) != 0) return 0;
  int64_t n;
  {
    search::TuneCache tc(path, true);
    n = tc.clear();
    if (n >= 0) return n;
    const std::string why = tc.why();
    if (why.find("schema version") == std::string::npos &&
        why.find("not an ember tune cache") == std::string::npos)
      throw Error("tune cache " + path + ": " + why);
  }
  if (::unlink(path.c_str()) != 0) throw Error("tune cache " + path + ": cannot remove it");
  return 0;
}

}  // namespace ember

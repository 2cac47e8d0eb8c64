// The beam (beam_search.h): each round times the unseen neighbours of the plans kept from the last
// round, keeps the `width` fastest, and stops when the fastest does not beat the best so far by the
// margin, when no plan is left unseen, or at the deadline.
#include "search/beam_search.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "codegen/plan_text.h"
#include "ember/support/clock.h"

namespace ember::search {

namespace {

using codegen::KernelPlan;

struct Timed {
  KernelPlan plan;
  double seconds;
};

// The unseen neighbours of the beam's plans, at most `most`, each once.
std::vector<KernelPlan> next_candidates(const std::vector<Timed>& beam, const schedule::Kernel& k,
                                        const codegen::Target& t, std::set<std::string>& seen,
                                        int64_t most) {
  std::vector<KernelPlan> out;
  for (const Timed& b : beam)
    for (codegen::Move& m : b.plan.neighbours(k, t)) {
      if (static_cast<int64_t>(out.size()) >= most) return out;
      if (seen.insert(codegen::plan_text(m.plan)).second) out.push_back(std::move(m.plan));
    }
  return out;
}

}  // namespace

SearchResult beam_search(const schedule::Kernel& k, const codegen::Target& t,
                         const Measure& measure, const SearchOptions& o, const Progress& progress) {
  const double t0 = support::now_seconds(), deadline = t0 + o.seconds;
  SearchResult r;
  const KernelPlan start = codegen::plan(k, t);
  std::set<std::string> seen{codegen::plan_text(start)};
  auto time = [&](const std::vector<KernelPlan>& plans) {
    std::vector<double> s = measure(plans, deadline);
    r.timed += static_cast<int64_t>(plans.size());
    r.explored.insert(r.explored.end(), plans.begin(), plans.end());
    return s;
  };
  r.heuristic_seconds = time({start})[0];
  Timed best{start, r.heuristic_seconds};
  std::vector<Timed> beam{best};
  auto report = [&] {
    if (progress)
      progress(r.timed, r.heuristic_seconds / best.seconds, support::now_seconds() - t0);
  };
  report();
  for (int64_t round = 0; round < o.max_rounds && std::isfinite(r.heuristic_seconds); round++) {
    if (support::now_seconds() >= deadline) {
      r.timed_out = true;
      break;
    }
    std::vector<KernelPlan> cands = next_candidates(beam, k, t, seen, o.max_per_round);
    if (cands.empty()) break;
    const std::vector<double> s = time(cands);
    std::vector<Timed> round_best;
    for (size_t i = 0; i < cands.size(); i++)
      if (std::isfinite(s[i])) round_best.push_back({std::move(cands[i]), s[i]});
    if (support::now_seconds() >= deadline) r.timed_out = true;
    std::sort(round_best.begin(), round_best.end(),
              [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
    if (round_best.size() > static_cast<size_t>(o.width))
      round_best.resize(static_cast<size_t>(o.width));
    const bool better =
        !round_best.empty() && round_best[0].seconds < best.seconds * (1 - o.margin);
    if (better) best = round_best[0];
    report();
    if (!better || r.timed_out) break;
    beam = std::move(round_best);
  }
  r.best = start;
  r.best_seconds = r.heuristic_seconds;
  if (codegen::plan_text(best.plan) != codegen::plan_text(start)) {
    // A winner measured once may have been lucky: both again, side by side, and the winner kept
    // only when it still beats the heuristic by the margin.
    const std::vector<double> s = measure({start, best.plan}, deadline + o.seconds);
    if (std::isfinite(s[0]) && std::isfinite(s[1]) && s[1] < s[0] * (1 - o.margin)) {
      r.best = best.plan;
      r.heuristic_seconds = s[0];
      r.best_seconds = s[1];
    }
  }
  r.elapsed = support::now_seconds() - t0;
  return r;
}

}  // namespace ember::search

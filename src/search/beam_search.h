// Schedule search (issue 40, docs/design.md principle 4): a beam of plans over
// codegen::KernelPlan::neighbours, starting from the heuristic's plan, each candidate timed by the
// caller's measure (kernel_timer.h times them on a kernel's buffers). The search keeps the
// heuristic's plan unless a candidate beats it by the margin, and confirms a winner against the
// heuristic in a final round of timing, so it never returns a plan it measured slower.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "codegen/kernel_plan.h"

namespace ember::search {

struct SearchOptions {
  int width = 2;               // plans kept from each round (BEAM=n)
  double margin = 0.03;        // a round must beat the best by this fraction to go on
  double seconds = 60;         // time limit per kernel (compiles and timing together)
  int64_t max_rounds = 16;     // rounds at most (each one action further from the heuristic)
  int64_t max_per_round = 48;  // candidates timed per round at most (the first met)
};

/// Seconds per launch of each plan, in order; +infinity for a plan that could not be built or
/// timed (past the deadline, a compile error). `deadline` is support::now_seconds()'s clock.
using Measure = std::function<std::vector<double>(const std::vector<codegen::KernelPlan>& plans,
                                                  double deadline)>;

struct SearchResult {
  codegen::KernelPlan best;      // the heuristic's plan unless a candidate beat it
  double heuristic_seconds = 0;  // per launch, from the final round (or the first)
  double best_seconds = 0;
  int64_t timed = 0;                          // plans timed, the heuristic's included
  std::vector<codegen::KernelPlan> explored;  // every plan timed, in order
  double elapsed = 0;                         // seconds the search took
  bool timed_out = false;                     // stopped by SearchOptions::seconds
  double speedup() const { return best_seconds > 0 ? heuristic_seconds / best_seconds : 1; }
};

/// Called after each round: plans timed so far, best speed-up over the heuristic, seconds elapsed.
using Progress = std::function<void(int64_t timed, double speedup, double elapsed)>;

/// Searches plans for `k` on `t`. Throws only what `measure` throws.
SearchResult beam_search(const schedule::Kernel& k, const codegen::Target& t,
                         const Measure& measure, const SearchOptions& options,
                         const Progress& progress = {});

}  // namespace ember::search

// Times plans of one kernel on its buffers (beam_search.h's Measure): each plan is rendered and
// compiled (one batch per call: the compiler's processes run in parallel, compiler.h), then
// launched `warmup` times and timed over `runs` samples, each sample as many launches as take
// 20 us (at most 1,000; a kernel of a microsecond is not timed by the clock's resolution); a
// plan's time is the median of its samples, per launch.
//
// The kernel's inputs are read where they are. Its outputs are never written: each timed launch
// writes copies of them (filled with the outputs' data before each plan, as a kernel may read
// what it writes or store part of its output only), and an input that is also an output is read
// from the copy. So the caller's buffers hold after timing exactly what they held before, and the
// values come from the chosen plan's normal launch afterwards.
#pragma once
#include <cstdint>
#include <vector>

#include "search/beam_search.h"

namespace ember::search {

struct TimerOptions {
  int warmup = 1;  // untimed launches per plan
  int runs = 5;    // timed samples per plan (the median is kept)
  /// A plan whose first launch after the warm-up takes more than this many times the fastest
  /// plan's time so far is not timed further (that launch is its time).
  double give_up_ratio = 3;
};

/// A Measure over `k`'s buffers `bufs` (slot order: outputs, then inputs; the kernel's
/// buffers only, without scratch or row count, which the programs add).
Measure kernel_timer(const schedule::Kernel& k, std::vector<void*> bufs, TimerOptions options);

}  // namespace ember::search

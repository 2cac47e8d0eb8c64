// Command line, timing and JSON record of the study's step programs (ember_step.cpp,
// torch_step.cpp): the protocol of the controlled optimizer step: `untimed` steps, `warmup` steps,
// then `timed` steps.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/support/clock.h"

namespace ember::study {

struct StepArgs {
  long batch = 10000;
  int untimed = 3, warmup = 5, timed = 10;
  int threads = 0;  // 0: the library's default
  bool attribution = false;
};

inline StepArgs parse_step_args(int argc, char** argv) {
  StepArgs a;
  for (int i = 1; i < argc; i++) {
    const std::string k = argv[i];
    if (k == "--attribution") {
      a.attribution = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", argv[0], k.c_str());
      std::exit(2);
    }
    const long v = std::atol(argv[++i]);
    if (v < 0 || (v == 0 && k != "--threads" && k != "--untimed" && k != "--warmup")) {
      std::fprintf(stderr, "%s: bad value for %s\n", argv[0], k.c_str());
      std::exit(2);
    }
    if (k == "--batch")
      a.batch = v;
    else if (k == "--untimed")
      a.untimed = int(v);
    else if (k == "--warmup")
      a.warmup = int(v);
    else if (k == "--timed")
      a.timed = int(v);
    else if (k == "--threads")
      a.threads = int(v);
    else {
      std::fprintf(stderr,
                   "usage: %s [--batch N] [--untimed N] [--warmup N] [--timed N] [--threads N] "
                   "[--attribution]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  return a;
}

/// What time_steps measured: every timed step's milliseconds, their median, and the first step's
/// (which compiles, or loads from the disk cache, every kernel).
struct StepTimes {
  std::vector<double> ms;
  double median_ms = 0, first_ms = 0;
};

/// Runs `one` (a step as the trainer runs it) args.untimed + args.warmup + args.timed times and
/// times the last args.timed.
template <class F>
StepTimes time_steps(const StepArgs& args, F one) {
  StepTimes t;
  for (int i = 0; i < args.untimed + args.warmup + args.timed; i++) {
    const double t0 = support::now_seconds();
    one();
    const double dt = (support::now_seconds() - t0) * 1e3;
    if (i == 0) t.first_ms = dt;
    if (i >= args.untimed + args.warmup) t.ms.push_back(dt);
  }
  std::vector<double> s = t.ms;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  t.median_ms = n == 0 ? 0 : n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  return t;
}

/// The JSON line a step program prints (bench/study/study.py reads it): the implementation, its
/// thread count, the protocol and the times; each program adds its own facts.
inline nlohmann::json step_record(const char* impl, int threads, const StepArgs& args,
                                  const StepTimes& t) {
  return {{"kind", "step"},           {"impl", impl},
          {"threads", threads},       {"batch", args.batch},
          {"untimed", args.untimed},  {"warmup", args.warmup},
          {"timed", args.timed},      {"steps_ms", t.ms},
          {"median_ms", t.median_ms}, {"first_step_ms", t.first_ms}};
}

}  // namespace ember::study

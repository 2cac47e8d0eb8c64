// Command line of the study's step programs (ember_step.cpp, torch_step.cpp): the protocol of the
// controlled optimizer step (spec/ppo.md): `untimed` steps, `warmup` steps, then `timed` steps.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

}  // namespace ember::study

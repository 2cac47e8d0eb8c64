// The study's controlled optimizer step for ember (docs/training.md): the training step `ember
// train` runs (rl::PpoLearner::step_fn, jitted), on one random minibatch of `--batch` transitions.
// Prints one JSON line: per-step milliseconds of the timed steps and their median. With
// --attribution, one more line: the kernel attribution of one further step (PROFILE data).
// A benchmark, not a test: run by bench/study/study.py, one process per measurement.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/rl/ppo_update.h"
#include "ember/support/clock.h"
#include "learner_step.h"
#include "step_args.h"

using namespace ember;

int main(int argc, char** argv) {
  const study::StepArgs args = study::parse_step_args(argc, argv);
  if (args.threads > 0) set_num_threads(args.threads);
  const study::LearnerStep step(args.batch);
  auto one = [&] { step.one(); };
  const study::StepTimes times = study::time_steps(args, one);
  nlohmann::json r = study::step_record("ember", get_num_threads(), args, times);
  r["target"] = kernel_target();
  r["device"] = Context::get().device;  // EMBER_DEVICE: cpu, or opencl for its time on PoCL
  r["jit"] = rl::jit_available();
  std::printf("%s\n", r.dump().c_str());
  if (args.attribution) {
    Context::get().profile = true;
    clear_profile();
    one();
    Context::get().profile = false;
    const std::vector<KernelEvent> ev = profiled_kernels();
    const KernelAttribution a = attribute_kernels(ev);
    nlohmann::json fam = nlohmann::json::array();
    for (auto& f : a.families)
      fam.push_back({{"family", kernel_family_name(f.family)},
                     {"calls", f.calls},
                     {"programs", f.programs},
                     {"ms", f.seconds * 1e3},
                     {"share", f.share}});
    nlohmann::json kernels = nlohmann::json::array();
    for (auto& e : ev)
      kernels.push_back({{"name", e.name},
                         {"family", kernel_family_name(e.family)},
                         {"us", (e.end_s - e.start_s) * 1e6},
                         {"flops", e.flops}});
    nlohmann::json o = {{"kind", "attribution"},  {"impl", "ember"},
                        {"batch", args.batch},    {"calls", a.calls},
                        {"programs", a.programs}, {"kernel_ms", a.seconds * 1e3},
                        {"families", fam},        {"kernels", kernels}};
    std::printf("%s\n", o.dump().c_str());
  }
  return 0;
}

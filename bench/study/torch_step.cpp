// The study's controlled optimizer step in libtorch: `ember train`'s step transcribed
// (torch_policy.h), same protocol and JSON line as ember_step.cpp. A benchmark, not a test.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "ember/support/clock.h"
#include "step_args.h"
#include "torch_policy.h"

int main(int argc, char** argv) {
  const ember::study::StepArgs args = ember::study::parse_step_args(argc, argv);
  if (args.threads > 0) {
    torch::set_num_threads(args.threads);
  }
  torch::manual_seed(0);
  ember::study::TorchActorCritic ac;
  const int64_t B = args.batch;
  const torch::Tensor obs = torch::randn({B, 8}), act = torch::randn({B, 2}) * 0.37,
                      old_logp = torch::randn({B}) * 0.1 - 1.0, adv_raw = torch::randn({B}),
                      ret = torch::randn({B}) * 10.0;
  // One step as `ember train` runs it: the step, then its metrics read on the host.
  auto one = [&] { (void)ac.step(obs, act, old_logp, adv_raw, ret); };
  const ember::study::StepTimes times = ember::study::time_steps(args, one);
  nlohmann::json r = ember::study::step_record("libtorch", torch::get_num_threads(), args, times);
  r["version"] = TORCH_VERSION;
  std::printf("%s\n", r.dump().c_str());
  return 0;
}

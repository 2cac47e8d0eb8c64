// The study's controlled training step (docs/training.md): the step `ember train` runs
// (rl::PpoLearner::step_fn, jitted) on the default networks (seed 0) and one random minibatch
// of `batch` transitions. Shared by study_ember_step and bench_python_pairs; the Python bench
// (bench/python_overhead.py) makes the same networks and inputs.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/ember.h"
#include "ember/rl/ppo_update.h"

namespace ember::study {

struct LearnerStep {
  explicit LearnerStep(int64_t batch)
      : policy(seeded_policy()),
        learner(policy, rl::PpoUpdateOptions{}),
        in{randn({batch, 8}), randn({batch, 2}) * 0.37, randn({batch}) * 0.1 - 1.0, randn({batch}),
           randn({batch}) * 10.0} {
    realize(in);
  }

  /// One step as the trainer runs it: the step, then its metrics read on the host.
  void one() const {
    for (const Tensor& t : learner.step_fn()(in)) (void)t.item<float>();
  }

  rl::ActorCritic policy;
  rl::PpoLearner learner;
  std::vector<Tensor> in;

 private:
  static rl::ActorCritic seeded_policy() {
    manual_seed(0);
    return rl::ActorCritic{rl::PolicyOptions{}};
  }
};

}  // namespace ember::study

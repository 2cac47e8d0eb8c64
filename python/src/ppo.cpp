// ember._ember._ppo: the PPO trainer (ember/rl/trainer.h) for ember.ppo. Settings and results
// cross as JSON text, the form the trainer itself records them in (run.json's "config",
// epochs.jsonl's records, summary.json), so that Python sees the same names as the files.
// A run holds no GIL; on the main thread, SIGINT stops it cleanly as it stops `ember train`.
#include <pybind11/stl.h>

#include <atomic>
#include <csignal>
#include <string>
#include <vector>

#include "bindings.h"
#include "ember/rl/ppo_update.h"
#include "ember/rl/trainer.h"

namespace ember::python {

namespace {

using json = nlohmann::json;

std::atomic<int> g_interrupt{0};

extern "C" void on_sigint(int sig) { g_interrupt.store(sig); }

// Routes SIGINT to the trainer's interrupt flag while it lives (Python's own handler runs only
// when the interpreter gets the GIL back, which a run does not give it).
class SigintToTrainer {
 public:
  explicit SigintToTrainer(rl::Trainer& trainer) {
    g_interrupt.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &previous_);
    trainer.set_interrupt_flag(&g_interrupt);
  }
  ~SigintToTrainer() { sigaction(SIGINT, &previous_, nullptr); }
  SigintToTrainer(const SigintToTrainer&) = delete;
  SigintToTrainer& operator=(const SigintToTrainer&) = delete;

 private:
  struct sigaction previous_ {};
};

// The results by their C++ names (summary.json's, where it has them).
// clang-format off
#define EMBER_EVAL_FIELDS(X) \
  X(mean) X(std) X(min) X(max) X(returns) X(lengths) X(episodes_per_env) X(env_steps) X(seconds)
#define EMBER_RESULT_FIELDS(X) \
  X(reached_target) X(stop_reason) X(interrupted_by) X(epochs) X(transitions_at_stop) \
  X(seconds_to_stop) X(last_eval_mean) X(curve) X(records) X(out_dir) X(policy_path) \
  X(checkpoint_path) X(plot_path) X(records_path)
// clang-format on
#define EMBER_FIELD(name) j[#name] = r.name;

json eval_json(const rl::EvalResult& r) {
  json j = {{"episodes", r.returns.size()}};
  EMBER_EVAL_FIELDS(EMBER_FIELD)
  return j;
}

json result_json(const rl::TrainResult& r) {
  json j = {{"saved_policy_eval", eval_json(r.saved_policy_eval)}};
  EMBER_RESULT_FIELDS(EMBER_FIELD)
  return j;
}

// The training step `ember train` runs (rl::PpoLearner::step_fn, jitted) on the default
// networks, for bench/python_overhead.py: the same step as bench/study/ember_step.cpp and
// bench/python_pairs.cpp, called from Python.
struct LearnerStep {
  rl::ActorCritic policy{rl::PolicyOptions{}};
  rl::PpoLearner learner{policy, rl::PpoUpdateOptions{}};
};

json parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw ValueError(std::string("train config: malformed JSON: ") + e.what());
  }
}

}  // namespace

void register_ppo(py::module_& m) {
  py::module_ p = m.def_submodule("_ppo", "ember.ppo's C++ parts");
  p.def("default_config", [] { return rl::to_json(rl::TrainConfig{}).dump(); });
  p.def(
      "check",
      [](const std::string& config) {
        rl::Trainer::check(rl::train_config_from_json(parse(config)));
      },
      py::arg("config"));
  p.def(
      "train",
      [](const std::string& config, bool catch_sigint) {
        const rl::TrainConfig c = rl::train_config_from_json(parse(config));
        py::gil_scoped_release released;
        rl::Trainer trainer(c);
        if (!catch_sigint) return result_json(trainer.run()).dump();
        SigintToTrainer guard(trainer);
        return result_json(trainer.run()).dump();
      },
      py::arg("config"), py::arg("catch_sigint"));
  py::class_<LearnerStep>(p, "_LearnerStep")
      .def(py::init<>())  // initialised from ember's generator: manual_seed first
      .def(
          "__call__",
          [](const LearnerStep& s, const std::vector<Tensor>& inputs) {
            py::gil_scoped_release released;
            return s.learner.step_fn()(inputs);
          },
          py::arg("inputs"));
}

}  // namespace ember::python

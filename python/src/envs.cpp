// ember._ember._envs: the C++ LunarLander (ember/rl/lunar_lander.h) for ember.envs, which gives
// it Gymnasium's reset/step signatures. Observations are new float32 NumPy arrays written by the
// env in place (no copy); actions are read from a float32 array of the action space's length.
// reset and step hold the GIL: a Box2D step takes microseconds, and the GIL serialises
// threads that share an env (Box2D's world is not thread-safe). InvalidActionError and
// InvalidOptionError are ValueError (errors.cpp); stepping before reset or after the episode ended
// is RuntimeError.
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "ember/rl/lunar_lander.h"

namespace ember::python {

namespace {

using rl::LunarLander;
using rl::Space;

py::array_t<float> new_observation(const LunarLander& env) {
  return py::array_t<float>(env.observation_space().flat_size());
}

// A C-contiguous float32 array of the action space's length, read without a copy.
std::span<const float> action_span(const py::array_t<float, py::array::c_style>& a) {
  return {a.data(), static_cast<size_t>(a.size())};
}

py::dict space_dict(const Space& s) {
  py::dict d;
  d["kind"] = s.is_discrete() ? "discrete" : "box";
  d["shape"] = py::tuple(py::cast(s.shape));
  d["low"] = s.low;
  d["high"] = s.high;
  d["n"] = s.n;
  return d;
}

}  // namespace

void register_envs(py::module_& m) {
  py::module_ e = m.def_submodule("_envs", "ember.envs's C++ parts");
  py::class_<LunarLander>(e, "LunarLander")
      .def(py::init([](bool continuous, double gravity, bool enable_wind, double wind_power,
                       double turbulence_power, int max_episode_steps) {
             rl::LunarLanderOptions o;
             o.continuous = continuous;
             o.gravity = gravity;
             o.enable_wind = enable_wind;
             o.wind_power = wind_power;
             o.turbulence_power = turbulence_power;
             o.max_episode_steps = max_episode_steps;
             return std::make_unique<LunarLander>(o);
           }),
           py::arg("continuous"), py::arg("gravity"), py::arg("enable_wind"), py::arg("wind_power"),
           py::arg("turbulence_power"), py::arg("max_episode_steps"))
      .def_property_readonly(
          "observation_space",
          [](const LunarLander& env) { return space_dict(env.observation_space()); })
      .def_property_readonly("action_space",
                             [](const LunarLander& env) { return space_dict(env.action_space()); })
      .def(
          "reset",
          [](LunarLander& env, std::optional<uint64_t> seed) {
            py::array_t<float> obs = new_observation(env);
            std::span<float> out(obs.mutable_data(), static_cast<size_t>(obs.size()));
            env.reset_into(seed, out);
            return obs;
          },
          py::arg("seed") = py::none())
      .def(
          "step",
          [](LunarLander& env, const py::array_t<float, py::array::c_style>& action) {
            py::array_t<float> obs = new_observation(env);
            std::span<float> out(obs.mutable_data(), static_cast<size_t>(obs.size()));
            const rl::StepInfo info = env.step_into(action_span(action), out);
            return std::make_tuple(obs, info.reward, info.terminated, info.truncated);
          },
          py::arg("action"))
      .def_property_readonly("elapsed_steps", &LunarLander::elapsed_steps);
  // The tests' reference: the episode that the C++ API (Env::reset, Env::step) plays on a fresh
  // env for `seed` and the rows of `actions`, until it ends or the actions run out:
  // (observations [steps + 1, obs_dim], rewards, terminated, truncated) per step.
  e.def(
      "_cpp_episode",
      [](uint64_t seed, const py::array_t<float, py::array::c_style>& actions, bool continuous) {
        rl::LunarLanderOptions o;
        o.continuous = continuous;
        LunarLander env(o);
        const int64_t width = env.action_space().flat_size();
        std::vector<std::vector<float>> observations{env.reset(seed)};
        std::vector<double> rewards;
        std::vector<bool> terminated, truncated;
        for (int64_t i = 0; i * width < actions.size() && !env.needs_reset(); ++i) {
          const rl::StepResult r =
              env.step(std::span<const float>(actions.data() + i * width, width));
          observations.push_back(r.observation);
          rewards.push_back(r.reward);
          terminated.push_back(r.terminated);
          truncated.push_back(r.truncated);
        }
        return std::make_tuple(observations, rewards, terminated, truncated);
      },
      py::arg("seed"), py::arg("actions"), py::arg("continuous") = true);
}

}  // namespace ember::python

// The PPO agent's networks (docs/training.md "The workload"): a diagonal Gaussian actor whose means
// come from a tanh MLP (obs_dim -> layers x hidden -> act_dim) with a state-independent log-std
// parameter, and a separate critic MLP (obs_dim -> layers x hidden -> 1).
//
// Defaults are the configuration of docs/training.md "The hyper-parameters": 4 hidden
// layers of 128, tanh, orthogonal init with gains sqrt(2) (hidden), 0.01 (actor output),
// 1.0 (critic output), zero biases, log-std initialised to -1.0 (std 0.37).
//
// Parameter names (checkpoints): "actor.0.weight" ... "actor.<layers>.bias", "log_std" [act_dim],
// "critic.0.weight" ... "critic.<layers>.bias". Saved policies carry their PolicyOptions in the
// safetensors metadata (key kPolicyMetadataKey, a JSON object) so that load_policy() can rebuild
// the model without being told its shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/nn/module.h"
#include "ember/rl/mlp.h"
#include "ember/serialize.h"
#include "ember/tensor.h"

namespace ember::rl {

struct PolicyOptions {
  int64_t obs_dim = 8;
  int64_t act_dim = 2;
  int64_t hidden = 128;
  int64_t layers = 4;
  double log_std_init = -1.0;
  double hidden_gain = 1.4142135623730951;  // sqrt(2)
  double actor_output_gain = 0.01;
  double critic_output_gain = 1.0;
};

/// The metadata key under which save_policy() stores the PolicyOptions (JSON).
inline constexpr const char* kPolicyMetadataKey = "ember.policy";

class ActorCriticImpl : public nn::Module {
 public:
  /// Initialises from ember's global generator (call manual_seed first for a reproducible init).
  explicit ActorCriticImpl(const PolicyOptions& options = {});

  /// obs [B, obs_dim] float32 -> action means [B, act_dim].
  Tensor means(const Tensor& obs) const { return actor->forward(obs); }
  /// obs [B, obs_dim] float32 -> state values [B].
  Tensor values(const Tensor& obs) const { return critic->forward(obs).reshape({-1}); }

  /// The actor's parameters (its MLP, then log_std) and the critic's: the two groups whose
  /// gradients are clipped separately.
  std::vector<Tensor> actor_parameters() const;
  std::vector<Tensor> critic_parameters() const;
  /// exp-able log-std values, host copy.
  std::vector<float> log_std_values() const { return log_std.to_vector<float>(); }

  const PolicyOptions& options() const { return options_; }

  Mlp actor;
  Mlp critic;
  Tensor log_std;  // [act_dim] float32

 private:
  PolicyOptions options_;
};

class ActorCritic : public nn::ModuleHolder<ActorCriticImpl> {
 public:
  using nn::ModuleHolder<ActorCriticImpl>::ModuleHolder;
};

/// Calls v(key, member) for every field of `options` (a PolicyOptions, const or not) with its
/// JSON key: the one list that the checkpoint's metadata and run.json's "policy" are written and
/// read from.
template <class Options, class Visit>
void visit_policy_options(Options& options, Visit&& v) {
  v("obs_dim", options.obs_dim);
  v("act_dim", options.act_dim);
  v("hidden", options.hidden);
  v("layers", options.layers);
  v("log_std_init", options.log_std_init);
  v("hidden_gain", options.hidden_gain);
  v("actor_output_gain", options.actor_output_gain);
  v("critic_output_gain", options.critic_output_gain);
}

/// PolicyOptions as the JSON text stored in checkpoints, and back (missing keys keep defaults;
/// throws ValueError on malformed text).
std::string policy_options_to_json(const PolicyOptions& options);
PolicyOptions policy_options_from_json(const std::string& text);

/// Saves the policy's parameters (safetensors, ember::save) with its options in the metadata, plus
/// `extra` metadata entries. Throws IOError.
void save_policy(const ActorCritic& policy, const std::string& path, Metadata extra = {});
/// Checks that `tensors` (read from `path`) are exactly the parameters an ActorCritic with
/// `options` has: names, shapes and float32. Throws IOError naming the first difference; allocates
/// nothing of the network's size.
void check_policy_tensors(const nn::NamedTensors& tensors, const PolicyOptions& options,
                          const std::string& path);
/// Builds a fresh ActorCritic from a file written by save_policy() and loads its parameters; the
/// metadata is checked against the file's tensors (check_policy_tensors) before anything is built.
/// Throws IOError (unreadable or malformed file, missing kPolicyMetadataKey, shape mismatch).
ActorCritic load_policy(const std::string& path, Metadata* metadata = nullptr);

}  // namespace ember::rl

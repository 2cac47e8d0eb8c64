#include "ember/rl/gaussian_policy.h"

#include <nlohmann/json.hpp>

#include "ember/nn/init.h"

namespace ember::rl {

ActorCriticImpl::ActorCriticImpl(const PolicyOptions& o) : options_(o) {
  MlpOptions a{o.obs_dim, o.act_dim, o.hidden, o.layers, o.hidden_gain, o.actor_output_gain};
  MlpOptions c{o.obs_dim, 1, o.hidden, o.layers, o.hidden_gain, o.critic_output_gain};
  actor = register_module("actor", Mlp(a));
  log_std = register_parameter("log_std", full({o.act_dim}, o.log_std_init, kFloat32));
  critic = register_module("critic", Mlp(c));
}

std::vector<Tensor> ActorCriticImpl::actor_parameters() const {
  std::vector<Tensor> p = actor->parameters();
  p.push_back(log_std);
  return p;
}

std::vector<Tensor> ActorCriticImpl::critic_parameters() const { return critic->parameters(); }

std::string policy_options_to_json(const PolicyOptions& o) {
  nlohmann::json j = {{"obs_dim", o.obs_dim},
                      {"act_dim", o.act_dim},
                      {"hidden", o.hidden},
                      {"layers", o.layers},
                      {"log_std_init", o.log_std_init},
                      {"hidden_gain", o.hidden_gain},
                      {"actor_output_gain", o.actor_output_gain},
                      {"critic_output_gain", o.critic_output_gain},
                      {"activation", "tanh"}};
  return j.dump();
}

PolicyOptions policy_options_from_json(const std::string& text) {
  PolicyOptions o;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw ValueError("policy options: not a JSON object: " + text);
    if (j.contains("activation") && j.at("activation") != "tanh")
      throw ValueError("policy options: unsupported activation " + j.at("activation").dump());
    o.obs_dim = j.value("obs_dim", o.obs_dim);
    o.act_dim = j.value("act_dim", o.act_dim);
    o.hidden = j.value("hidden", o.hidden);
    o.layers = j.value("layers", o.layers);
    o.log_std_init = j.value("log_std_init", o.log_std_init);
    o.hidden_gain = j.value("hidden_gain", o.hidden_gain);
    o.actor_output_gain = j.value("actor_output_gain", o.actor_output_gain);
    o.critic_output_gain = j.value("critic_output_gain", o.critic_output_gain);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("policy options: malformed JSON (") + e.what() + "): " + text);
  }
  return o;
}

void save_policy(const ActorCritic& policy, const std::string& path, Metadata extra) {
  extra[kPolicyMetadataKey] = policy_options_to_json(policy->options());
  ember::save(*policy, path, extra);
}

ActorCritic load_policy(const std::string& path, Metadata* metadata) {
  TensorFile file = load_file(path);
  auto it = file.metadata.find(kPolicyMetadataKey);
  if (it == file.metadata.end())
    throw IOError("policy file '" + path + "': no \"" + kPolicyMetadataKey +
                  "\" metadata (not written by ember train?)");
  PolicyOptions options;
  try {
    options = policy_options_from_json(it->second);
  } catch (const ValueError& e) {
    throw IOError("policy file '" + path + "': " + e.what());
  }
  ActorCritic policy(options);
  ember::load(*policy, path);
  if (metadata) *metadata = file.metadata;
  return policy;
}

}  // namespace ember::rl

#include "ember/rl/gaussian_policy.h"

#include <map>

#include <nlohmann/json.hpp>

#include "ember/nn/init.h"
#include "ember/support/shape_str.h"

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
  nlohmann::json j = {{"activation", "tanh"}};
  visit_policy_options(o, [&](const char* key, const auto& value) { j[key] = value; });
  return j.dump();
}

PolicyOptions policy_options_from_json(const std::string& text) {
  PolicyOptions o;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw ValueError("policy options: not a JSON object: " + text);
    if (j.contains("activation") && j.at("activation") != "tanh")
      throw ValueError("policy options: unsupported activation " + j.at("activation").dump());
    visit_policy_options(o, [&](const char* key, auto& value) { value = j.value(key, value); });
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("policy options: malformed JSON (") + e.what() + "): " + text);
  }
  return o;
}

void save_policy(const ActorCritic& policy, const std::string& path, Metadata extra) {
  extra[kPolicyMetadataKey] = policy_options_to_json(policy->options());
  ember::save(*policy, path, extra);
}

void check_policy_tensors(const nn::NamedTensors& tensors, const PolicyOptions& o,
                          const std::string& path) {
  const std::string where = "policy file '" + path + "': ";
  if (o.obs_dim < 1 || o.act_dim < 1 || o.hidden < 1 || o.layers < 1)
    throw IOError(where + "metadata has obs_dim, act_dim, hidden or layers < 1");
  // 2 tensors per linear layer, (layers + 1) layers per network, 2 networks, plus log_std. Checked
  // first so that a huge "layers" costs nothing.
  const int64_t count = static_cast<int64_t>(tensors.size());
  if ((count - 1) % 4 != 0 || (count - 1) / 4 != o.layers + 1)
    throw IOError(where + "metadata says " + std::to_string(o.layers) + " hidden layers (" +
                  std::to_string(4 * (o.layers + 1) + 1) + " tensors) but the file holds " +
                  std::to_string(count) + " tensors");
  std::map<std::string, Shape> expected;
  // The names and shapes ActorCriticImpl registers (tests/ppo/test_policy.cpp keeps them in step).
  auto mlp = [&](const std::string& prefix, int64_t in, int64_t out) {
    int64_t width = in;
    for (int64_t i = 0; i <= o.layers; ++i) {
      const int64_t w = i == o.layers ? out : o.hidden;
      expected[prefix + "." + std::to_string(i) + ".weight"] = {w, width};
      expected[prefix + "." + std::to_string(i) + ".bias"] = {w};
      width = w;
    }
  };
  mlp("actor", o.obs_dim, o.act_dim);
  expected["log_std"] = {o.act_dim};
  mlp("critic", o.obs_dim, 1);
  using support::shape_str;
  for (const auto& [name, t] : tensors) {
    auto it = expected.find(name);
    if (it == expected.end()) throw IOError(where + "unexpected tensor '" + name + "'");
    if (t.sizes() != it->second)
      throw IOError(where + "tensor '" + name + "' has shape " + shape_str(t.sizes()) +
                    " but the metadata implies " + shape_str(it->second));
    if (t.scalar_type() != kFloat32) throw IOError(where + "tensor '" + name + "' is not float32");
  }
  if (expected.size() != tensors.size())
    throw IOError(where + "tensor names repeat or are missing");
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
  // Every shape is checked against the file before the network is allocated.
  check_policy_tensors(file.tensors, options, path);
  ActorCritic policy(options);
  ember::load(*policy, path);
  if (metadata) *metadata = file.metadata;
  return policy;
}

}  // namespace ember::rl

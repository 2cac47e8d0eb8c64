// A module's checkpoint: its state dict (parameters, then buffers) as named tensors.
#include "ember/nn/serialize.h"

#include <set>

namespace ember {

namespace {
NamedTensors state_dict(const nn::Module& m, const std::string& path) {
  NamedTensors s = m.named_parameters();
  std::set<std::string> names;
  for (auto& [n, t] : s) names.insert(n);
  for (auto& [n, t] : m.named_buffers()) {
    if (names.count(n))
      throw_safetensors_error(path, "module has a parameter and a buffer both named '" + n + "'");
    s.emplace_back(n, t);
  }
  return s;
}
}  // namespace

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  save(state_dict(module, path), path, metadata);
}

void load(nn::Module& module, const std::string& path) {
  load_into(state_dict(module, path), path);
}

}  // namespace ember

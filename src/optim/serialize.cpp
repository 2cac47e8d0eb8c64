// An optimizer's checkpoint: its state tensors and its learning rate as metadata.
#include "ember/optim/serialize.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "ember/host_values.h"

namespace ember {

void save(const optim::Optimizer& optimizer, const std::string& path) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), optimizer.lr());
  save(optimizer.state(), path, {{kOptimizerLrKey, std::string(buf, r.ptr)}});
}

namespace {

// A checkpoint written before the step counts were per parameter holds the optimizer's legacy
// global count in place of "steps".
bool is_legacy(const optim::Optimizer& optimizer, const std::string& path) {
  bool steps = false, legacy = false;
  for (auto& [name, t] : load_file(path).tensors) {
    steps |= name == "steps";
    legacy |= name == optimizer.legacy_step_name();
  }
  return legacy && !steps;
}

}  // namespace

void load(optim::Optimizer& optimizer, const std::string& path) {
  double lr = 0;
  NamedTensors targets = optimizer.state();
  Tensor legacy;
  if (is_legacy(optimizer, path)) {
    // Its count goes into a scratch tensor, then into every parameter's count.
    legacy = realized_clone(zeros({}, kFloat32));
    for (auto& [name, t] : targets)
      if (name == "steps") {
        name = optimizer.legacy_step_name();
        t = legacy;
      }
  }
  load_into(targets, path, [&](const Metadata& m) {
    auto it = m.find(kOptimizerLrKey);
    if (it == m.end())
      throw IOError("safetensors file '" + path + "': missing metadata \"" + kOptimizerLrKey +
                    "\" (not an optimizer checkpoint?)");
    const std::string& s = it->second;
    auto r = std::from_chars(s.data(), s.data() + s.size(), lr);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(lr) || lr < 0)
      throw IOError("safetensors file '" + path + "': metadata \"" + kOptimizerLrKey + "\" = \"" +
                    s + "\" is not a valid learning rate");
  });
  if (legacy.defined()) optimizer.load_legacy_step(legacy.item<float>());
  optimizer.set_lr(lr);
}

}  // namespace ember

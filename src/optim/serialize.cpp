// An optimizer's checkpoint: its state tensors and its learning rate as metadata.
#include "ember/optim/serialize.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace ember {

void save(const optim::Optimizer& optimizer, const std::string& path) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), optimizer.lr());
  save(optimizer.state(), path, {{kOptimizerLrKey, std::string(buf, r.ptr)}});
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  double lr = 0;
  load_into(optimizer.state(), path, [&](const Metadata& m) {
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
  optimizer.set_lr(lr);
}

}  // namespace ember

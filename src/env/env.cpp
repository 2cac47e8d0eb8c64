#include "ember/rl/env.h"

#include <cmath>
#include <sstream>

#include "ember/error.h"

namespace ember::rl {
namespace {

template <typename T>
void print_list(std::ostringstream& out, const std::vector<T>& values) {
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << ']';
}

}  // namespace

Space Space::box(std::vector<int64_t> shape, std::vector<float> low, std::vector<float> high) {
  Space s;
  s.kind = Kind::kBox;
  s.dtype = DType::kFloat32;
  s.shape = std::move(shape);
  s.low = std::move(low);
  s.high = std::move(high);
  const auto n = static_cast<size_t>(s.flat_size());
  if (s.low.size() != n || s.high.size() != n) {
    throw ValueError("Space::box: bounds have " + std::to_string(s.low.size()) + "/" +
                     std::to_string(s.high.size()) + " values for " + std::to_string(n) +
                     " elements");
  }
  return s;
}

Space Space::discrete(int64_t n) {
  if (n < 1) throw ValueError("Space::discrete: n = " + std::to_string(n) + " < 1");
  Space s;
  s.kind = Kind::kDiscrete;
  s.dtype = DType::kInt64;
  s.n = n;
  s.low = {0.0f};
  s.high = {static_cast<float>(n - 1)};
  return s;
}

int64_t Space::flat_size() const {
  if (is_discrete()) return 1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string Space::to_string() const {
  std::ostringstream out;
  if (is_discrete()) {
    out << "Discrete(" << n << ")";
    return out.str();
  }
  out << "Box(float32, ";
  print_list(out, shape);
  out << ", low=";
  print_list(out, low);
  out << ", high=";
  print_list(out, high);
  out << ')';
  return out.str();
}

void validate_action(const Space& space, std::span<const float> action) {
  const auto expected = static_cast<size_t>(space.flat_size());
  if (action.size() != expected) {
    throw InvalidActionError("action has " + std::to_string(action.size()) + " values, expected " +
                             std::to_string(expected) + " for " + space.to_string());
  }
  for (size_t i = 0; i < action.size(); ++i) {
    if (std::isnan(action[i])) {
      throw InvalidActionError("action[" + std::to_string(i) + "] is NaN");
    }
  }
  if (space.is_discrete()) {
    const float a = action[0];
    if (!(a >= 0.0f && a < static_cast<float>(space.n) && a == std::floor(a))) {
      std::ostringstream msg;
      msg << "discrete action " << a << " is not an integer in [0, " << space.n << ")";
      throw InvalidActionError(msg.str());
    }
  }
}

std::vector<float> Env::reset(std::optional<uint64_t> seed) {
  std::vector<float> observation(static_cast<size_t>(observation_space().flat_size()));
  reset_into(seed, observation);
  return observation;
}

StepResult Env::step(std::span<const float> action) {
  StepResult result;
  result.observation.resize(static_cast<size_t>(observation_space().flat_size()));
  const StepInfo info = step_into(action, result.observation);
  result.reward = info.reward;
  result.terminated = info.terminated;
  result.truncated = info.truncated;
  return result;
}

}  // namespace ember::rl

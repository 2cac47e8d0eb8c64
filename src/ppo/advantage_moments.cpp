#include "ember/rl/advantage_moments.h"

#include <algorithm>
#include <cmath>

#include "ember/dist.h"
#include "ember/rl/ppo_loss.h"

namespace ember::rl {

AdvantageMoments advantage_moments(std::span<const float> a) {
  AdvantageMoments m;
  m.count = static_cast<double>(a.size());
  if (a.empty()) return m;
  for (float x : a) m.mean += x;
  m.mean /= m.count;
  for (float x : a) {
    m.m2 += (x - m.mean) * (x - m.mean);
    m.max_abs = std::max(m.max_abs, static_cast<double>(std::abs(x)));
    if (std::isnan(x)) m.max_abs = x;  // std::max would drop it
  }
  return m;
}

AdvantageMoments combine(const AdvantageMoments& a, const AdvantageMoments& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  AdvantageMoments m;
  m.count = a.count + b.count;
  const double d = b.mean - a.mean;
  m.mean = a.mean + d * b.count / m.count;
  m.m2 = a.m2 + b.m2 + d * d * a.count * b.count / m.count;
  m.max_abs = std::isnan(a.max_abs) || std::isnan(b.max_abs) ? NAN : std::max(a.max_abs, b.max_abs);
  return m;
}

std::vector<float> normalize_advantages(std::span<const float> a, const AdvantageMoments& m) {
  std::vector<float> out(a.begin(), a.end());
  if (m.count < 2) return out;
  const double spread = std::sqrt(m.m2 / (m.count - 1));
  const bool equal = spread <= m.max_abs * kAdvantageSpreadFloor;  // false for NaN: NaN results
  for (float& x : out) x = equal ? 0.f : static_cast<float>((x - m.mean) / (spread + 1e-8));
  return out;
}

std::vector<float> normalize_advantages_globally(std::span<const float> a) {
  const AdvantageMoments mine = advantage_moments(a);
  const double send[4] = {mine.count, mine.mean, mine.m2, mine.max_abs};
  const std::vector<double> all = dist::all_gather(std::span<const double>(send, 4));
  AdvantageMoments total;
  for (size_t r = 0; r + 4 <= all.size(); r += 4)
    total = combine(total, AdvantageMoments{all[r], all[r + 1], all[r + 2], all[r + 3]});
  return normalize_advantages(a, total);
}

}  // namespace ember::rl

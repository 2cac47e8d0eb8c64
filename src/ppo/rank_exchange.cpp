#include "ember/rl/rank_exchange.h"

#include <cstdio>
#include <span>

#include "ember/dist.h"

namespace ember::rl {
namespace {

constexpr size_t kFields = 7;

}  // namespace

std::vector<RankEpoch> exchange_rank_epochs(const RankEpoch& m) {
  const double mine[kFields] = {m.collect_s,   m.update_s,   m.allreduce_s, m.update_steps_s,
                                m.scaler.mean, m.scaler.var, m.scaler.count};
  const std::vector<double> all = dist::all_gather(std::span<const double>(mine, kFields));
  std::vector<RankEpoch> out;
  for (size_t at = 0; at + kFields <= all.size(); at += kFields) {
    const double* f = &all[at];
    out.push_back({f[0], f[1], f[2], f[3], {f[4], f[5], f[6]}});
  }
  return out;
}

nlohmann::json rank_times_json(const std::vector<RankEpoch>& ranks) {
  nlohmann::json j = {{"collect_s", nlohmann::json::array()},
                      {"update_s", nlohmann::json::array()},
                      {"allreduce_s", nlohmann::json::array()},
                      {"update_steps_s", nlohmann::json::array()}};
  for (const RankEpoch& r : ranks) {
    j["collect_s"].push_back(r.collect_s);
    j["update_s"].push_back(r.update_s);
    j["allreduce_s"].push_back(r.allreduce_s);
    j["update_steps_s"].push_back(r.update_steps_s);
  }
  return j;
}

std::vector<CheckpointManifest::ScalerStatistics> rank_scalers(
    const std::vector<RankEpoch>& ranks) {
  std::vector<CheckpointManifest::ScalerStatistics> out;
  for (const RankEpoch& r : ranks) out.push_back(r.scaler);
  return out;
}

std::string hash_hex(uint64_t hash) {
  char s[19];
  std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(hash));
  return s;
}

}  // namespace ember::rl

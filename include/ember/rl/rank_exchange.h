// What the ranks of a data-parallel `ember train` job exchange once per epoch (trainer.h,
// "Data-parallel"), besides the stop decision: each rank's timings for the records and its
// reward-scaling statistics for the checkpoints (each rank's envs keep their own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/rl/checkpoint.h"

namespace ember::rl {

struct RankEpoch {
  double collect_s = 0, update_s = 0, allreduce_s = 0, update_steps_s = 0;  // seconds
  CheckpointManifest::ScalerStatistics scaler;
};

/// Every rank's RankEpoch, in rank order, on every rank (one dist::all_gather).
std::vector<RankEpoch> exchange_rank_epochs(const RankEpoch& mine);

/// The record's "ranks": {"collect_s": [...], "update_s": [...], "allreduce_s": [...],
/// "update_steps_s": [...]}, each indexed by rank.
nlohmann::json rank_times_json(const std::vector<RankEpoch>& ranks);

/// Every rank's reward-scaling statistics (for CheckpointManifest::rank_scalers).
std::vector<CheckpointManifest::ScalerStatistics> rank_scalers(const std::vector<RankEpoch>& ranks);

/// "0x" and 16 hex digits (the record's replica_hashes).
std::string hash_hex(uint64_t hash);

}  // namespace ember::rl

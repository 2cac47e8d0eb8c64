// Training checkpoints (ember.ppo.checkpoint/1) and resuming from them (issue 14).
//
// A checkpoint is <run>/checkpoints/<stem>.json, a manifest naming two safetensors files next to it
// (the policy and the Adam state) and holding the counters, the reward-scaling statistics, the
// learning curve so far and the run's whole configuration (to_json(TrainConfig)). Every file is
// written atomically (temp, fsync, rename), the manifest last, so a kill at any moment leaves the
// previous checkpoint whole and never a manifest that names missing files.
//
// Resuming restores the configuration from the manifest. Of the command-line options only those
// that do not change what is being trained may differ (kResumeOverridable: --max-transitions,
// --target, --checkpoint-every, --progress, --threads, --env-threads, --no-jit, --out,
// --final-eval-episodes-per-env, --check-replicas); any other option given with a value different
// from the checkpoint's is a ValueError naming both values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/rl/records.h"
#include "ember/rl/train_config.h"

namespace ember::rl {

struct CheckpointManifest {
  int64_t epoch = 0;  // the next epoch to run (epochs 0 .. epoch-1 are done)
  int64_t transitions = 0;
  std::string policy_file, optimizer_file;  // paths (the manifest's directory prepended)
  double scaler_mean = 0, scaler_var = 1, scaler_count = 1e-4;  // rank 0's
  // A data-parallel job's ranks (trainer.h): "world_size" (absent: 1) and, for more than one rank,
  // "rank_reward_scalers", every rank's reward-scaling statistics in rank order (each rank's envs
  // keep their own); a resume needs the same number of ranks.
  int64_t world_size = 1;
  struct ScalerStatistics {
    double mean = 0, var = 1, count = 1e-4;
  };
  std::vector<ScalerStatistics> rank_scalers;
  std::vector<CurvePoint> curve;
  nlohmann::json config;  // to_json(TrainConfig) of the run
  // The epochs.jsonl record of epoch `epoch - 1` (null when absent): the resume restores it when a
  // kill came between the checkpoint and the record's append.
  nlohmann::json record;
  std::string path;     // the manifest
  std::string run_dir;  // the run's output directory (the parent of checkpoints/)
};

/// Parses a manifest's text. Range checks: epoch in [0, 1e9]; transitions in [0, 1e15]; the
/// reward-scaling mean finite, var finite and >= 0, count finite and > 0 (every rank's too, one
/// set per rank, world_size in [1, 2^20]); at most `epoch` curve
/// points, each with 0 <= epoch < the manifest's epoch, transitions in range, finite mean and a
/// finite std >= 0; file names without '/' and not "." or "..". Throws IOError naming `path`.
CheckpointManifest parse_checkpoint_manifest(std::string_view text, const std::string& path);

/// Reads and parses a manifest (at most 64 MiB). Throws IOError.
CheckpointManifest read_checkpoint_manifest(const std::string& path);

/// `path` when it is a file; for a run directory (or its checkpoints/ directory) the readable
/// manifest (final.json or epoch_NNNN.json) with the highest epoch, final.json on a tie. Throws
/// IOError when there is none.
std::string find_checkpoint(const std::string& path);

/// Writes a manifest atomically; returns its path. Throws IOError.
std::string write_checkpoint_manifest(const std::string& dir, const std::string& stem,
                                      const CheckpointManifest& m);

/// A configuration read from a file: every known key must hold the kind of value to_json writes
/// (integers as integers, within 32 bits for the int fields; finite numbers; booleans; strings),
/// then train_config_from_json, validate() and check_config_limits. Throws ValueError.
TrainConfig checked_train_config(const nlohmann::json& j);

/// Command-line options (CLI names) that a resumed run may change.
extern const std::set<std::string> kResumeOverridable;

/// The configuration of a resumed run: the checkpoint's `saved` configuration (checked with
/// checked_train_config), with the overridable options in `given` (the options typed on the command
/// line, CLI names such as "--max-transitions") taken from `cli`. Throws ValueError for another
/// option in `given` whose value differs from the checkpoint's.
TrainConfig resume_config(const nlohmann::json& saved, const TrainConfig& cli,
                          const std::set<std::string>& given);

/// Upper bounds on a configuration read from a file (validate() checks the lower ones): envs and
/// eval envs <= 4096, steps per env <= 10^7, transitions per epoch <= 10^8, hidden <= 65536,
/// layers <= 256, passes <= 10^4, threads <= 1024, episodes per env <= 10^6. Throws ValueError.
void check_config_limits(const TrainConfig& c);

}  // namespace ember::rl

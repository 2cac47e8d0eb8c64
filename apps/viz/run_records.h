// The records `ember train` writes into a run directory (run.json, epochs.jsonl), as the JSON that
// `ember viz` serves (README, "ember viz"). Every path here is already confined to the runs folder.
#pragma once
#include <filesystem>

#include <nlohmann/json.hpp>

namespace ember::viz {

/// Every run below `root` (a directory holding run.json, at most 3 levels down), newest first:
/// [{id (its path relative to root), started_at, config, provenance, summary (null while it
/// trains), epochs (records so far), profile (whether --profile wrote profile/)}].
nlohmann::json list_runs(const std::filesystem::path& root);

/// One run's epochs.jsonl as the page draws it: [{epoch, transitions, eval_mean, eval_std
/// (null when the epoch had no scheduled evaluation), train_return_mean (null when no training
/// episode ended), collect_s, update_s, eval_s, epoch_s}]. A torn last line (a run still writing
/// it) is left out.
nlohmann::json run_epochs(const std::filesystem::path& run_dir);

}  // namespace ember::viz

// The records a training run keeps (docs/training.md "What a run records"; issue 5 "Deliver" 4),
// in its output directory:
//   run.json          provenance (provenance() below), every setting, and at the end the summary
//   epochs.jsonl      one JSON object per epoch (fields: see trainer.h)
//   summary.json      the stop summary: transitions and seconds (from process start) at stop, the
//                     saved-policy evaluation
//   learning_curve.svg evaluation mean against transitions (plot.h), rewritten after every eval
// Files are flushed as they are written, so a run that is stopped early keeps its records; every
// file but epochs.jsonl is rewritten atomically (temp, fsync, rename), and each epoch line is
// appended with one write and fsynced.
//
// One run, one directory: the recorder takes an exclusive lock (flock on <dir>/.lock, held until it
// is destroyed) and refuses a directory that holds anything else, unless it is the directory of the
// run being resumed. Resuming keeps the records of the epochs before the checkpoint's and drops
// the rest (and a line torn by a kill), so no epoch appears twice; resuming into the run's own
// directory keeps run.json and appends the new run to its "resumes" list, and moves checkpoints of
// epochs after the resumed one into checkpoints/abandoned-<pid>/ (nothing is deleted).
// Errors: IOError naming the path.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::rl {

/// Seconds since this process started (from /proc/self/stat where available, else since this
/// library was loaded).
double seconds_since_process_start();

/// Where and on what a run happened: {"git": {"revision", "dirty"} (or "unknown" when git or the
/// source tree is unavailable), "cpu": {"model", "logical_cores"}, "compiler": {"cxx", "flags",
/// "build_type"}, "kernel": ember::BuildInfo's fields by name (the kernel compiler and target; or
/// {"error"} when there is none), "libraries": {...}, "threads": {"kernel"}, "device", "host",
/// "started_at" (UTC, ISO 8601)}.
nlohmann::json provenance();

/// One evaluation on the learning curve.
struct CurvePoint {
  int64_t epoch = 0;
  int64_t transitions = 0;
  double mean = 0, std = 0;
};
/// {"epoch", "transitions", "mean", "std"}: nlohmann's to_json, so a curve converts to a JSON array
/// (the records, the checkpoint manifest).
void to_json(nlohmann::json& j, const CurvePoint& p);

/// Where a resumed run continues: epochs before `next_epoch` are kept from `source_dir`'s records.
struct RunResume {
  int64_t next_epoch = 0;
  std::string source_dir;  // the resumed run's directory
  std::string checkpoint;  // the manifest resumed from
  // The checkpoint's copy of the record of epoch next_epoch - 1 (null if none): appended when the
  // records stop just before it (a kill between the checkpoint and the append).
  nlohmann::json record;
};

class RunRecorder {
 public:
  /// Creates `dir` (and parents), claims it (see above) and writes run.json = {"provenance",
  /// "config"} plus `extra` keys. `resume`: the run continues another (see above). Throws IOError
  /// (also when another process holds the directory or it is not empty).
  RunRecorder(std::string dir, const nlohmann::json& config, const nlohmann::json& extra = {},
              const RunResume* resume = nullptr);
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// Epoch lines dropped when resuming (after the checkpoint's epoch, or torn).
  int64_t dropped_records() const { return dropped_records_; }
  /// Appends one line to epochs.jsonl.
  void epoch(const nlohmann::json& record);
  /// Adds an evaluation to the learning curve and rewrites learning_curve.svg.
  void eval_point(const CurvePoint& p, double target);
  const std::vector<CurvePoint>& curve() const { return curve_; }
  void set_curve(std::vector<CurvePoint> curve) { curve_ = std::move(curve); }
  /// Writes summary.json and adds "summary" to run.json; the saved-policy evaluation (if any) is
  /// drawn on the plot as a separate marker.
  void finish(const nlohmann::json& summary, const CurvePoint* saved_eval, double target);

 private:
  void write_json(const std::string& name, const nlohmann::json& j) const;
  void write_plot(const CurvePoint* saved_eval, double target) const;

  std::string dir_;
  nlohmann::json run_;
  int epochs_fd_ = -1;
  int lock_fd_ = -1;
  int64_t dropped_records_ = 0;
  std::vector<CurvePoint> curve_;
};

}  // namespace ember::rl

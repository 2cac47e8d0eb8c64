// The records a training run keeps (spec/ppo.md "Records each run keeps"; issue 5 "Deliver" 4),
// in its output directory:
//   run.json          provenance (provenance() below), every setting, and at the end the summary
//   epochs.jsonl      one JSON object per epoch (fields: see trainer.h)
//   summary.json      the stop summary: transitions and seconds (from process start) at stop, the
//                     saved-policy evaluation
//   learning_curve.svg evaluation mean against transitions (plot.h), rewritten after every eval
// Files are flushed as they are written, so a run that is stopped early keeps its records.
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
/// "build_type"}, "kernel_compiler": {"path", "version", "flags"}, "libraries": {...},
/// "threads": {"kernel"}, "device", "host", "started_at" (UTC, ISO 8601)}.
nlohmann::json provenance();

/// One evaluation on the learning curve.
struct CurvePoint {
  int64_t epoch = 0;
  int64_t transitions = 0;
  double mean = 0, std = 0;
};

class RunRecorder {
 public:
  /// Creates `dir` (and parents) and writes run.json = {"provenance", "config"} plus `extra`
  /// keys. Throws IOError.
  RunRecorder(std::string dir, const nlohmann::json& config, const nlohmann::json& extra = {});
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

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
  std::FILE* epochs_ = nullptr;
  std::vector<CurvePoint> curve_;
};

}  // namespace ember::rl

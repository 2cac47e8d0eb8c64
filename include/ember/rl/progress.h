// The training progress display (issue 5 "Deliver" 3). On a terminal: one live status line,
// redrawn in place (at most ~5 times a second): epoch, transitions, the current phase and its
// progress, the last epoch's phase times, the last evaluation, elapsed time and an ETA to
// --max-transitions (an upper bound: training stops earlier when the target is reached).
// Elsewhere (a pipe, a file): plain lines, one per finished epoch and per evaluation.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace ember::rl {

class Progress {
 public:
  enum class Mode { kTty, kPlain, kNone };
  /// "auto" picks kTty when `out` is a terminal, else kPlain; also "tty", "plain", "none".
  /// Throws ValueError for another name.
  Progress(const std::string& mode, int64_t max_transitions, std::FILE* out = stdout);

  Mode mode() const { return mode_; }
  /// Phase of the current epoch: "collect", "evaluate", "update", ... with done/total units.
  void phase(int64_t epoch, int64_t transitions, const std::string& name, int64_t done,
             int64_t total);
  /// An evaluation finished.
  void evaluation(int64_t epoch, int64_t transitions, double mean, double std, double seconds);
  /// An epoch finished; its phase times (seconds).
  void epoch_done(int64_t epoch, int64_t transitions, double collect_s, double update_s,
                  double eval_s, double epoch_s);
  /// A free-form message (clears the live line first).
  void message(const std::string& text);
  /// Ends the live line.
  void finish();

 private:
  void draw(bool force);
  std::string eta_text() const;

  Mode mode_;
  std::FILE* out_;
  int64_t max_transitions_;
  int64_t epoch_ = 0, transitions_ = 0, done_ = 0, total_ = 0;
  std::string phase_;
  double last_collect_ = -1, last_update_ = -1, last_eval_s_ = -1, last_epoch_ = -1;
  double epoch_time_sum_ = 0;
  int64_t epochs_timed_ = 0;
  std::optional<double> last_eval_;
  int64_t last_eval_transitions_ = 0;
  double start_ = 0, last_draw_ = 0;  // support::now_seconds()
  bool line_open_ = false;
};

}  // namespace ember::rl

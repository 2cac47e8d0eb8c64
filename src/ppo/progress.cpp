#include "ember/rl/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>

#include "ember/error.h"
#include "ember/support/clock.h"

namespace ember::rl {
namespace {

std::string duration_text(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  char buf[32];
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}

std::string count_text(int64_t n) {
  std::string s = std::to_string(n), r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) r += ',';
    r += s[i];
  }
  return r;
}

}  // namespace

Progress::Progress(const std::string& mode, int64_t max_transitions, std::FILE* out)
    : out_(out), max_transitions_(max_transitions) {
  if (mode == "auto")
    mode_ = isatty(fileno(out)) ? Mode::kTty : Mode::kPlain;
  else if (mode == "tty")
    mode_ = Mode::kTty;
  else if (mode == "plain")
    mode_ = Mode::kPlain;
  else if (mode == "none")
    mode_ = Mode::kNone;
  else
    throw ValueError("progress mode must be auto, tty, plain or none: " + mode);
  start_ = last_draw_ = support::now_seconds();
}

std::string Progress::eta_text() const {
  if (epochs_timed_ == 0 || transitions_ <= 0) return "?";
  const double per_transition = epoch_time_sum_ / static_cast<double>(transitions_);
  return duration_text(per_transition * static_cast<double>(max_transitions_ - transitions_));
}

void Progress::draw(bool force) {
  if (mode_ != Mode::kTty || phase_.empty()) return;
  const double t = support::now_seconds();
  if (!force && t - last_draw_ < 0.2) return;
  last_draw_ = t;
  const double elapsed = t - start_;
  std::string line = "epoch " + std::to_string(epoch_) + " | " + count_text(transitions_) + "/" +
                     count_text(max_transitions_) + " | " + phase_;
  // Appended piece by piece: GCC 12 warns -Wrestrict (a false positive) on " " + std::string&&.
  if (total_ > 0)
    line.append(" ").append(std::to_string(done_)).append("/").append(std::to_string(total_));
  if (last_epoch_ >= 0) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " | last epoch: collect %.1fs update %.1fs eval %.1fs (%.1fs)",
                  last_collect_, last_update_, last_eval_s_, last_epoch_);
    line += buf;
  }
  if (last_eval_) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " | eval %.1f @%s", *last_eval_,
                  count_text(last_eval_transitions_).c_str());
    line += buf;
  }
  line += " | " + duration_text(elapsed) + ", ETA<=" + eta_text();
  // Keep the line within the terminal's width, or the carriage return cannot redraw it.
  winsize ws{};
  const size_t cols = ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 160;
  if (line.size() >= cols) line.resize(cols - 1);
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  line_open_ = true;
}

void Progress::phase(int64_t epoch, int64_t transitions, const std::string& name, int64_t done,
                     int64_t total) {
  const bool changed = name != phase_ || epoch != epoch_;
  epoch_ = epoch;
  transitions_ = transitions;
  phase_ = name;
  done_ = done;
  total_ = total;
  draw(changed);
}

void Progress::message(const std::string& text) {
  if (mode_ == Mode::kNone) return;
  if (line_open_) std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
  line_open_ = false;
  draw(true);
}

void Progress::evaluation(int64_t epoch, int64_t transitions, double mean, double std,
                          double seconds) {
  last_eval_ = mean;
  last_eval_transitions_ = transitions;
  char buf[160];
  std::snprintf(buf, sizeof buf, "eval  epoch %3lld  transitions %9s  mean %8.2f +- %6.2f  (%.1fs)",
                static_cast<long long>(epoch), count_text(transitions).c_str(), mean, std, seconds);
  message(buf);
}

void Progress::epoch_done(int64_t epoch, int64_t transitions, double collect_s, double update_s,
                          double eval_s, double epoch_s) {
  last_collect_ = collect_s;
  last_update_ = update_s;
  last_eval_s_ = eval_s;
  last_epoch_ = epoch_s;
  epoch_time_sum_ += epoch_s;
  ++epochs_timed_;
  transitions_ = transitions;
  if (mode_ == Mode::kPlain) {
    const double elapsed = support::now_seconds() - start_;
    std::fprintf(out_,
                 "epoch %3lld  transitions %9s  collect %6.2fs  update %6.2fs  eval %6.2fs  "
                 "epoch %6.2fs  elapsed %s  ETA<=%s\n",
                 static_cast<long long>(epoch), count_text(transitions).c_str(), collect_s,
                 update_s, eval_s, epoch_s, duration_text(elapsed).c_str(), eta_text().c_str());
    std::fflush(out_);
  } else {
    draw(true);
  }
}

void Progress::finish() {
  if (mode_ == Mode::kTty && line_open_) {
    std::fprintf(out_, "\n");
    std::fflush(out_);
  }
  line_open_ = false;
}

}  // namespace ember::rl

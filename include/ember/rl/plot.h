// A learning-curve plot as SVG (plain text; no plotting library): evaluation mean (+- one std,
// as a band) against training transitions, a dashed line at the target, and optionally one extra
// marker (the saved-policy evaluation). Axes are labelled; ticks are "nice" numbers. A legend row
// under the title names the mean, the band, the target and the marker (with its value); returns
// are written to one decimal. No label is placed inside the plot, so none can collide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::rl {

struct PlotSeries {
  std::vector<double> x, y, err;  // err: one std per point (may be empty)
};

struct PlotOptions {
  std::string title = "ember PPO on LunarLander";
  std::string x_label = "transitions";
  std::string y_label = "evaluation mean return";   // RunRecorder adds the episode count
  std::optional<double> target;                     // horizontal dashed line
  std::optional<std::pair<double, double>> marker;  // (x, y) of an extra point
  std::string marker_label = "saved policy";
  int width = 800, height = 480;
};

/// The SVG document text. Throws ValueError when x and y lengths differ.
std::string learning_curve_svg(const PlotSeries& series, const PlotOptions& options);

}  // namespace ember::rl

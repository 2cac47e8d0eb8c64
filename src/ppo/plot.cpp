#include "ember/rl/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "ember/error.h"

namespace ember::rl {
namespace {

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `count` ticks over [lo, hi].
double nice_step(double lo, double hi, int count) {
  const double raw = (hi - lo) / std::max(count, 1);
  if (!(raw > 0)) return 1.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

// A tick label: "250k", "1.2M" when the step is a multiple of 1000 / 100000, else %g.
std::string tick(double v, double step) {
  char buf[32];
  if (step >= 1e5 && std::fmod(step, 1e5) == 0 && std::fabs(v) >= 1e6)
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (step >= 1e3 && std::fmod(step, 1e3) == 0 && v != 0)
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A return as the plot shows it: one decimal.
std::string value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Text width in pixels, reckoned at 0.6 em per character (wider than the average sans-serif
// glyph), so that items laid out by it do not touch. An entity (&#177;) is one character.
double text_width(const std::string& s, double font_size) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') i = s.find(';', i);
    ++chars;
  }
  return 0.6 * font_size * static_cast<double>(chars);
}

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '<')
      r += "&lt;";
    else if (c == '>')
      r += "&gt;";
    else if (c == '&')
      r += "&amp;";
    else
      r += c;
  }
  return r;
}

// The legend: rows of (swatch, label) items between the title and the plot, from x = left to at
// most x = right. Nothing is labelled inside the plot, so no label can cover the curve or another
// label. `*bottom` receives where the plot may start.
std::string legend_svg(const PlotSeries& s, const PlotOptions& o, double left, double right,
                       double* bottom) {
  struct Item {
    std::string swatch, label;  // swatch: SVG within (0, 0)-(20, 10), moved into place
  };
  std::vector<Item> items = {
      {"<line x1=\"0\" y1=\"5\" x2=\"20\" y2=\"5\" stroke=\"#1f6fb4\" stroke-width=\"2\"/>",
       "evaluation mean"}};
  if (!s.err.empty())
    items.push_back({"<rect width=\"20\" height=\"10\" fill=\"#1f6fb4\" fill-opacity=\"0.15\"/>",
                     "&#177; 1 std of the episode returns"});
  if (o.target)
    items.push_back(
        {"<line x1=\"0\" y1=\"5\" x2=\"20\" y2=\"5\" stroke=\"#2a9d34\" "
         "stroke-dasharray=\"6,4\"/>",
         "target " + fmt(*o.target)});
  if (o.marker)
    items.push_back({"<rect x=\"5\" width=\"10\" height=\"10\" fill=\"#d1495b\"/>",
                     esc(o.marker_label) + " " + value(o.marker->second)});
  constexpr double kRowHeight = 18, kSwatch = 26, kGap = 18;
  std::ostringstream svg;
  double x = left, y = 42;  // y: the first row's baseline, under the title
  for (const Item& it : items) {
    const double w = kSwatch + text_width(it.label, 12);
    if (x > left && x + w > right) x = left, y += kRowHeight;
    svg << "<g transform=\"translate(" << x << "," << y - 9 << ")\">" << it.swatch
        << "</g>\n<text x=\"" << x + kSwatch << "\" y=\"" << y << "\">" << it.label << "</text>\n";
    x += w + kGap;
  }
  *bottom = y + 16;
  return svg.str();
}

}  // namespace

std::string learning_curve_svg(const PlotSeries& s, const PlotOptions& o) {
  if (s.x.size() != s.y.size() || (!s.err.empty() && s.err.size() != s.x.size()))
    throw ValueError("learning_curve_svg: x, y (and err) must have equal lengths");
  // Data ranges (always include 0 on x, the target and the marker).
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool any = false;
  auto grow_y = [&](double lo, double hi) {
    if (!any) y0 = lo, y1 = hi, any = true;
    y0 = std::min(y0, lo);
    y1 = std::max(y1, hi);
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double e = s.err.empty() ? 0.0 : s.err[i];
    x1 = std::max(x1, s.x[i]);
    grow_y(s.y[i] - e, s.y[i] + e);
  }
  if (o.target) grow_y(*o.target, *o.target);
  if (o.marker) {
    x1 = std::max(x1, o.marker->first);
    grow_y(o.marker->second, o.marker->second);
  }
  if (!any) y0 = -1, y1 = 1;
  if (y1 - y0 < 1e-9) y0 -= 1, y1 += 1;
  const double xs = nice_step(x0, x1, 8), ys = nice_step(y0, y1, 8);
  x1 = std::ceil(x1 / xs) * xs;
  y0 = std::floor(y0 / ys) * ys;
  y1 = std::ceil(y1 / ys) * ys;

  const double L = 80, R = 20, B = 60;
  double T = 0;  // the plot's top: below the legend
  const std::string legend = legend_svg(s, o, L, o.width - R, &T);
  const double W = o.width - L - R, H = o.height - T - B;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * W; };
  auto py = [&](double y) { return T + (y1 - y) / (y1 - y0) * H; };

  std::ostringstream svg;
  svg.precision(6);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << o.width << "\" height=\""
      << o.height << "\" viewBox=\"0 0 " << o.width << " " << o.height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << o.width / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">"
      << esc(o.title) << "</text>\n"
      << legend;
  // Grid and ticks.
  for (double x = x0; x <= x1 + xs * 1e-6; x += xs)
    svg << "<line x1=\"" << px(x) << "\" y1=\"" << T << "\" x2=\"" << px(x) << "\" y2=\"" << T + H
        << "\" stroke=\"#e5e5e5\"/>\n<text x=\"" << px(x) << "\" y=\"" << T + H + 18
        << "\" text-anchor=\"middle\">" << tick(x, xs) << "</text>\n";
  for (double y = y0; y <= y1 + ys * 1e-6; y += ys)
    svg << "<line x1=\"" << L << "\" y1=\"" << py(y) << "\" x2=\"" << L + W << "\" y2=\"" << py(y)
        << "\" stroke=\"#e5e5e5\"/>\n<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4
        << "\" text-anchor=\"end\">" << tick(y, ys) << "</text>\n";
  svg << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W << "\" height=\"" << H
      << "\" fill=\"none\" stroke=\"#333\"/>\n"
      << "<text x=\"" << L + W / 2 << "\" y=\"" << o.height - 16 << "\" text-anchor=\"middle\">"
      << esc(o.x_label) << "</text>\n"
      << "<text transform=\"translate(18," << T + H / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << esc(o.y_label) << "</text>\n";
  if (o.target)
    svg << "<line x1=\"" << L << "\" y1=\"" << py(*o.target) << "\" x2=\"" << L + W << "\" y2=\""
        << py(*o.target) << "\" stroke=\"#2a9d34\" stroke-dasharray=\"6,4\"/>\n";
  // +- std band, then the mean line and points.
  if (!s.err.empty() && s.x.size() > 1) {
    svg << "<polygon fill=\"#1f6fb4\" fill-opacity=\"0.15\" stroke=\"none\" points=\"";
    for (size_t i = 0; i < s.x.size(); ++i)
      svg << px(s.x[i]) << "," << py(s.y[i] + s.err[i]) << " ";
    for (size_t i = s.x.size(); i-- > 0;) svg << px(s.x[i]) << "," << py(s.y[i] - s.err[i]) << " ";
    svg << "\"/>\n";
  }
  if (!s.x.empty()) {
    svg << "<polyline fill=\"none\" stroke=\"#1f6fb4\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < s.x.size(); ++i) svg << px(s.x[i]) << "," << py(s.y[i]) << " ";
    svg << "\"/>\n";
    for (size_t i = 0; i < s.x.size(); ++i)
      svg << "<circle cx=\"" << px(s.x[i]) << "\" cy=\"" << py(s.y[i])
          << "\" r=\"3\" fill=\"#1f6fb4\"><title>" << fmt(s.x[i]) << ": " << value(s.y[i])
          << "</title></circle>\n";
  }
  if (o.marker)
    svg << "<rect x=\"" << px(o.marker->first) - 5 << "\" y=\"" << py(o.marker->second) - 5
        << "\" width=\"10\" height=\"10\" fill=\"#d1495b\"><title>" << esc(o.marker_label) << " "
        << value(o.marker->second) << "</title></rect>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ember::rl

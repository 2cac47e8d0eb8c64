// The learning-curve SVG (rl::learning_curve_svg, issue 44): parsed back, its text labels (and the
// legend's swatches) do not overlap one another and stay on the canvas, the legend names the
// mean, the band, the target and the saved policy, and returns are written to one decimal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "ember/rl/plot.h"

namespace {

using namespace ember::rl;

struct Box {
  double x0, y0, x1, y1;
  std::string what;
};

bool overlap(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

double attr(const std::string& attrs, const std::string& name, double fallback) {
  std::smatch m;
  if (std::regex_search(attrs, m, std::regex(" " + name + "=\"([-0-9.e]+)\"")))
    return std::stod(m[1]);
  return fallback;
}

// Characters as drawn: an entity (&#177;) is one.
size_t glyphs(const std::string& text) {
  return std::regex_replace(text, std::regex("&[^;]+;"), "_").size();
}

// The box each <text> covers, estimated at 0.6 em per character (at least the average width of
// a sans-serif glyph) from 1 em above the baseline to 0.25 em below it; and each legend swatch.
std::vector<Box> label_boxes(const std::string& svg, std::vector<std::string>* texts) {
  std::vector<Box> boxes;
  const std::regex text_re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re);
       it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1], text = (*it)[2];
    texts->push_back(text);
    const double fs = attr(attrs, "font-size", 12), w = 0.6 * fs * glyphs(text);
    const std::string anchor = attrs.find("text-anchor=\"middle\"") != std::string::npos ? "middle"
                               : attrs.find("text-anchor=\"end\"") != std::string::npos  ? "end"
                                                                                         : "start";
    std::smatch m;
    if (std::regex_search(attrs, m,
                          std::regex("translate\\(([-0-9.e]+),([-0-9.e]+)\\) rotate\\(-90\\)"))) {
      const double tx = std::stod(m[1]), ty = std::stod(m[2]);  // runs upwards, centred on ty
      EXPECT_EQ(anchor, "middle") << text;
      boxes.push_back({tx - fs, ty - w / 2, tx + 0.25 * fs, ty + w / 2, text});
      continue;
    }
    const double x = attr(attrs, "x", 0), y = attr(attrs, "y", 0);
    const double left = anchor == "start" ? x : anchor == "middle" ? x - w / 2 : x - w;
    boxes.push_back({left, y - fs, left + w, y + 0.25 * fs, text});
  }
  const std::regex swatch_re("<g transform=\"translate\\(([-0-9.e]+),([-0-9.e]+)\\)\">");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), swatch_re);
       it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    boxes.push_back({x, y, x + 20, y + 10, "legend swatch"});
  }
  return boxes;
}

// A run's curve: 26 evaluations up to 520,000 transitions, rising from -200 to near the target.
PlotSeries curve() {
  PlotSeries s;
  for (int i = 0; i < 26; ++i) {
    s.x.push_back(20000.0 * (i + 1));
    s.y.push_back(-200 + 16.4 * i);
    s.err.push_back(40 + 3 * (i % 5));
  }
  return s;
}

void expect_no_collisions(const std::string& svg, int width, int height) {
  std::vector<std::string> texts;
  const std::vector<Box> boxes = label_boxes(svg, &texts);
  ASSERT_GT(boxes.size(), 10u);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Box& a = boxes[i];
    EXPECT_TRUE(a.x0 >= 0 && a.y0 >= 0 && a.x1 <= width && a.y1 <= height)
        << "'" << a.what << "' leaves the canvas";
    for (size_t j = i + 1; j < boxes.size(); ++j)
      EXPECT_FALSE(overlap(a, boxes[j])) << "'" << a.what << "' overlaps '" << boxes[j].what << "'";
  }
}

TEST(LearningCurvePlot, LabelsDoNotCollideWhereverTheSavedPolicyLands) {
  // The saved-policy evaluation near the target line was where the old labels met.
  for (double saved = 150; saved <= 250; saved += 3.7) {
    PlotOptions o;
    o.target = 200;
    o.marker = std::make_pair(520000.0, saved);
    SCOPED_TRACE("saved-policy mean " + std::to_string(saved));
    expect_no_collisions(learning_curve_svg(curve(), o), o.width, o.height);
  }
  // A narrow plot wraps the legend onto a second row.
  PlotOptions narrow;
  narrow.width = 420;
  narrow.target = 200;
  narrow.marker = std::make_pair(520000.0, -1234.56);
  const std::string svg = learning_curve_svg(curve(), narrow);
  expect_no_collisions(svg, narrow.width, narrow.height);
}

TEST(LearningCurvePlot, HasALegendForTheMeanTheBandTheTargetAndTheSavedPolicy) {
  PlotOptions o;
  o.target = 200;
  o.marker = std::make_pair(520000.0, 205.31);
  const std::string svg = learning_curve_svg(curve(), o);
  std::vector<std::string> texts;
  label_boxes(svg, &texts);
  for (const std::string want : {"evaluation mean", "&#177; 1 std of the episode returns",
                                 "target 200", "saved policy 205.3"})
    EXPECT_NE(std::find(texts.begin(), texts.end(), want), texts.end()) << want << "\n" << svg;
  // The band's swatch has the band's fill.
  EXPECT_NE(svg.find("<rect width=\"20\" height=\"10\" fill=\"#1f6fb4\" fill-opacity=\"0.15\"/>"),
            std::string::npos)
      << svg;
  // No band without stds: no band entry.
  PlotSeries bare = curve();
  bare.err.clear();
  EXPECT_EQ(learning_curve_svg(bare, o).find("std of the episode returns"), std::string::npos);
}

TEST(LearningCurvePlot, ReturnsAreWrittenToOneDecimal) {
  PlotSeries s;
  s.x = {20000, 40000};
  s.y = {-188.4421, 12.05};
  s.err = {139.25, 80};
  PlotOptions o;
  o.marker = std::make_pair(40000.0, -139.2133);
  const std::string svg = learning_curve_svg(s, o);
  EXPECT_NE(svg.find("<title>20000: -188.4</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>40000: 12.1</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">saved policy -139.2</text>"), std::string::npos) << svg;
  // Every value in a point's or the marker's tooltip has exactly one decimal.
  const std::regex title_re("<title>[^<]*?(-?[0-9.]+)</title>");
  int titles = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), title_re);
       it != std::sregex_iterator(); ++it, ++titles)
    EXPECT_TRUE(std::regex_match((*it)[1].str(), std::regex("-?[0-9]+\\.[0-9]"))) << (*it)[0];
  EXPECT_EQ(titles, 3);
}

}  // namespace

#include "ember/rl/render.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "ember/error.h"

namespace ember::rl {
namespace {

using namespace lunar;
using Point = std::array<double, 2>;  // pixels, y down
struct Rgb {
  uint8_t r, g, b;
};

constexpr Rgb kSky{0, 0, 0}, kGround{255, 255, 255}, kBody{128, 102, 230}, kOutline{77, 77, 128};
constexpr Rgb kContact{90, 200, 90}, kFlag{204, 204, 0}, kFlame{255, 150, 30};

Point to_pixels(double x, double y) { return {x * kScale, kViewportH - y * kScale}; }

// Body-frame pixel offset (x right, y up) -> screen pixels, for flames drawn relative to the hull.
Point body_point(const LanderScene& s, double bx, double by) {
  const double c = std::cos(s.lander_angle), sn = std::sin(s.lander_angle);
  return to_pixels(s.lander_x + (c * bx - sn * by) / kScale,
                   s.lander_y + (sn * bx + c * by) / kScale);
}

void put(Image& img, int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  uint8_t* p = &img.rgb[(static_cast<size_t>(y) * img.width + x) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

// Scanline fill with the even-odd rule, sampling pixel centres; handles concave polygons.
void fill_polygon(Image& img, std::span<const Point> poly, Rgb color) {
  double y_min = 1e30, y_max = -1e30;
  for (const Point& p : poly) y_min = std::min(y_min, p[1]), y_max = std::max(y_max, p[1]);
  const int row0 = std::max(0, static_cast<int>(std::floor(y_min)));
  const int row1 = std::min(img.height - 1, static_cast<int>(std::ceil(y_max)));
  std::vector<double> xs;
  for (int row = row0; row <= row1; ++row) {
    const double yc = row + 0.5;
    xs.clear();
    for (size_t k = 0; k < poly.size(); ++k) {
      const Point& a = poly[k];
      const Point& b = poly[(k + 1) % poly.size()];
      if ((a[1] <= yc) != (b[1] <= yc))
        xs.push_back(a[0] + (yc - a[1]) / (b[1] - a[1]) * (b[0] - a[0]));
    }
    std::sort(xs.begin(), xs.end());
    for (size_t k = 0; k + 1 < xs.size(); k += 2) {
      const int x0 = std::max(0, static_cast<int>(std::ceil(xs[k] - 0.5)));
      const int x1 = std::min(img.width - 1, static_cast<int>(std::floor(xs[k + 1] - 0.5)));
      for (int x = x0; x <= x1; ++x) put(img, x, row, color);
    }
  }
}

void draw_line(Image& img, Point a, Point b, Rgb color) {
  const int steps =
      static_cast<int>(std::ceil(std::max(std::abs(b[0] - a[0]), std::abs(b[1] - a[1])))) + 1;
  for (int k = 0; k <= steps; ++k) {
    const double t = static_cast<double>(k) / steps;
    put(img, static_cast<int>(std::floor(a[0] + t * (b[0] - a[0]))),
        static_cast<int>(std::floor(a[1] + t * (b[1] - a[1]))), color);
  }
}

template <size_t N>
void draw_body(Image& img, const std::array<Point, N>& world, Rgb fill) {
  std::array<Point, N> px;
  for (size_t k = 0; k < N; ++k) px[k] = to_pixels(world[k][0], world[k][1]);
  fill_polygon(img, px, fill);
  for (size_t k = 0; k < N; ++k) draw_line(img, px[k], px[(k + 1) % N], kOutline);
}

}  // namespace

Image render_scene(const LanderScene& s) {
  Image img{kViewportW, kViewportH, std::vector<uint8_t>(kViewportW * kViewportH * 3)};
  for (size_t k = 0; k < img.rgb.size(); k += 3) {
    img.rgb[k] = kSky.r, img.rgb[k + 1] = kSky.g, img.rgb[k + 2] = kSky.b;
  }

  std::vector<Point> ground;
  for (const auto& p : s.terrain) ground.push_back(to_pixels(p[0], p[1]));
  ground.push_back(to_pixels(kW_M, 0));
  ground.push_back(to_pixels(0, 0));
  fill_polygon(img, ground, kGround);

  for (const double x : {s.helipad_x1, s.helipad_x2}) {
    const double top = s.helipad_y + 50 / kScale;
    draw_line(img, to_pixels(x, s.helipad_y), to_pixels(x, top), kGround);
    const std::array<Point, 3> flag{to_pixels(x, top), to_pixels(x, top - 10 / kScale),
                                    to_pixels(x + 25 / kScale, top - 5 / kScale)};
    fill_polygon(img, flag, kFlag);
  }

  if (s.main_power > 0) {
    const double len = 10 + 20 * s.main_power;
    const std::array<Point, 3> flame{body_point(s, -5, -10), body_point(s, 5, -10),
                                     body_point(s, 0, -10 - len)};
    fill_polygon(img, flame, kFlame);
  }
  if (s.side_power > 0) {
    // Direction +1 pushes the lander right, so its thruster sits on the left and blows left.
    const double side = -s.side_direction * 17.0,
                 out = -s.side_direction * (17.0 + 15 * s.side_power);
    const std::array<Point, 3> flame{body_point(s, side, 10), body_point(s, side, 2),
                                     body_point(s, out, 6)};
    fill_polygon(img, flame, kFlame);
  }

  for (int k = 0; k < 2; ++k) draw_body(img, s.legs[k], s.leg_contact[k] ? kContact : kBody);
  draw_body(img, s.lander, kBody);
  return img;
}

void write_png(const std::filesystem::path& path, const Image& image) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.rgb.data(), image.width * 3, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    throw EnvError("write_png(" + path.string() + "): " + message);
  }
}

RenderedEpisode render_episode(LunarLander& env, const PolicyFn& policy, uint64_t seed,
                               const std::filesystem::path& dir, int every) {
  if (every < 1) throw ValueError("render_episode: every = " + std::to_string(every) + " < 1");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw EnvError("render_episode: cannot create " + dir.string() + ": " + ec.message());

  RenderedEpisode result;
  const auto frame = [&](int step) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%05d.png", step);
    write_png(dir / name, render_scene(env.scene()));
    ++result.frames;
  };
  std::vector<float> observation = env.reset(seed);
  std::vector<float> action(static_cast<size_t>(env.action_space().flat_size()));
  frame(0);
  for (;;) {
    policy(observation, action);
    const StepInfo info = env.step_into(action, observation);
    result.episode_return += info.reward;
    ++result.length;
    if (info.done()) {
      result.slept = info.terminated && !env.last_trace().awake;
      frame(result.length);
      return result;
    }
    if (result.length % every == 0) frame(result.length);
  }
}

}  // namespace ember::rl

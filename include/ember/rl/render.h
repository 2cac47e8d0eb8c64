// A small software renderer for LunarLander, so a person can look at a landing: the terrain
// polygon, the pad's flags, the lander, its legs (green while touching) and engine flames, drawn
// into a 600x400 RGB image (1 m = 30 px, as the reference viewport) and written as PNG (libpng).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "ember/rl/lunar_lander.h"

namespace ember::rl {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, top row first, 3 bytes per pixel
};

// Draws one frame of `scene` (metres, y up) into a kViewportW x kViewportH image.
Image render_scene(const LanderScene& scene);

// Writes an 8-bit RGB PNG. Throws EnvError naming the path and libpng's message on failure.
void write_png(const std::filesystem::path& path, const Image& image);

// Fills `action` (the env's action_space().flat_size() floats) from `observation`.
using PolicyFn = std::function<void(std::span<const float> observation, std::span<float> action)>;

struct RenderedEpisode {
  double episode_return = 0.0;
  int length = 0;      // steps after reset
  bool slept = false;  // ended by the lander coming to rest (+100)
  int frames = 0;      // PNG files written
};

// Plays one episode from reset(seed) with `policy`, writing dir/frame_00000.png (the reset state),
// frame_00001.png, ... every `every` steps and always the last one. Creates `dir` if needed.
// Throws EnvError on a file error, ValueError for every < 1.
RenderedEpisode render_episode(LunarLander& env, const PolicyFn& policy, uint64_t seed,
                               const std::filesystem::path& dir, int every = 1);

}  // namespace ember::rl

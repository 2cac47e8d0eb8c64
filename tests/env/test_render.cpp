// The PNG renderer: what lands where in a frame, and an episode written as files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/rl/heuristic.h"
#include "ember/rl/render.h"

namespace ember::rl {
namespace {

namespace fs = std::filesystem;

std::array<uint8_t, 3> pixel(const Image& img, double x_m, double y_m) {
  const int x = static_cast<int>(x_m * lunar::kScale);
  const int y = static_cast<int>(lunar::kViewportH - y_m * lunar::kScale);
  if (x < 0 || y < 0 || x >= img.width || y >= img.height) throw std::out_of_range("off screen");
  const uint8_t* p = &img.rgb[(static_cast<size_t>(y) * img.width + x) * 3];
  return {p[0], p[1], p[2]};
}

fs::path temp_dir(const char* name) {
  const fs::path dir =
      fs::temp_directory_path() / ("ember_render_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(Render, SceneLandsWhereExpected) {
  LunarLander env;
  env.reset(0);
  const LanderScene scene = env.scene();
  const Image img = render_scene(scene);
  ASSERT_EQ(img.width, 600);
  ASSERT_EQ(img.height, 400);
  ASSERT_EQ(img.rgb.size(), 600u * 400u * 3u);
  const std::array<uint8_t, 3> sky{0, 0, 0}, ground{255, 255, 255}, body{128, 102, 230};
  EXPECT_EQ(pixel(img, 0.5, 13.0), sky);
  EXPECT_EQ(pixel(img, 10.0, 1.0), ground);                           // below the pad
  EXPECT_EQ(pixel(img, 10.0, scene.terrain[5][1] + 0.2), sky);        // just above the pad
  EXPECT_EQ(pixel(img, scene.lander_x, scene.lander_y - 0.1), body);  // inside the hull
}

TEST(Render, EpisodeWritesPngFrames) {
  const fs::path dir = temp_dir("episode");
  LunarLander env;
  const PolicyFn policy = [](std::span<const float> obs, std::span<float> action) {
    const auto a = heuristic_action(obs);
    action[0] = a[0], action[1] = a[1];
  };
  const RenderedEpisode r = render_episode(env, policy, 0, dir, 50);
  EXPECT_TRUE(r.slept);
  EXPECT_GT(r.length, 100);
  // The reset frame, every 50th step before the end, and the last step.
  EXPECT_EQ(r.frames, 1 + (r.length - 1) / 50 + 1);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    char magic[8] = {};
    in.read(magic, 8);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << entry.path();
  }
  EXPECT_EQ(files, r.frames);
  EXPECT_TRUE(fs::exists(dir / "frame_00000.png"));
  char last[32];
  std::snprintf(last, sizeof last, "frame_%05d.png", r.length);
  EXPECT_TRUE(fs::exists(dir / last));
  fs::remove_all(dir.parent_path());
}

TEST(Render, WriteErrorsNameThePath) {
  Image img{2, 2, std::vector<uint8_t>(12, 0)};
  try {
    write_png("/nonexistent_dir_ember/x.png", img);
    ADD_FAILURE() << "no exception";
  } catch (const EnvError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent_dir_ember/x.png"), std::string::npos);
  }
}

}  // namespace
}  // namespace ember::rl

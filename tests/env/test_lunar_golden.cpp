// Golden trajectories (spec "Acceptance"): the env replays the random stream and actions recorded
// from Gymnasium (scripts/record_lunar_golden.py) and must reproduce its float32 observations for
// steps 0-20 within 1e-3 in every component.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ember/rl/lunar_lander.h"

namespace ember::rl {
namespace {

constexpr double kTolerance = 1e-3;  // spec: a correct port stays below 2.4e-4

nlohmann::json load_golden() {
  const std::string path = std::string(EMBER_SOURCE_DIR) + "/tests/data/lunar_golden.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

TEST(LunarGolden, ObservationsMatchGymnasium) {
  const nlohmann::json golden = load_golden();
  ASSERT_GE(golden["cases"].size(), 5u);
  double worst = 0.0;
  for (const auto& c : golden["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    LunarLanderOptions options;
    options.continuous = c["continuous"];
    options.enable_wind = c["enable_wind"];
    LunarLander env(options);
    auto stream = std::make_shared<StreamSource>(c["units"].get<std::vector<double>>(),
                                                 c["ints"].get<std::vector<int64_t>>());
    env.set_random_source(stream);

    const auto& expected = c["observations"];
    const auto& actions = c["actions"];
    ASSERT_GE(expected.size(), 21u);
    std::vector<float> obs = env.reset();
    for (size_t step = 0; step <= 20; ++step) {
      if (step > 0) {
        const auto action = actions[step - 1].get<std::vector<float>>();
        const StepResult r = env.step(action);
        obs = r.observation;
        EXPECT_EQ(r.terminated, c["terminated"][step - 1].get<bool>()) << "step " << step;
      }
      for (int k = 0; k < lunar::kObsDim; ++k) {
        const double diff = std::abs(obs[k] - expected[step][k].get<double>());
        worst = std::max(worst, diff);
        EXPECT_LE(diff, kTolerance) << "step " << step << " component " << k;
      }
    }
    // The draws are consumed in the reference's order and number.
    EXPECT_EQ(stream->units_used(), c["units_used"].get<size_t>());
    EXPECT_EQ(stream->ints_used(), c["ints_used"].get<size_t>());
  }
  RecordProperty("max_abs_deviation", std::to_string(worst));
  std::printf("golden: max |obs - gymnasium| over steps 0-20 = %.3g\n", worst);
}

}  // namespace
}  // namespace ember::rl

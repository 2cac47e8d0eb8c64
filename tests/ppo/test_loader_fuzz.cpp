// Seeded mutation fuzzing of every loader that reads a file a user or another process could have
// written (issue 14 "Checked by"): safetensors files (load_file, load_policy), checkpoint
// manifests (parse_checkpoint_manifest and the resumed configuration), run configurations
// (checked_train_config) and the kernel cache's entry check (check_cache_entry).
//
// Each input is a valid seed file with 1-4 stacked mutations: bit flips, interesting bytes,
// inserted, deleted, duplicated and truncated ranges, digit runs replaced by extreme numbers, and
// for JSON (the manifests, configurations and the safetensors header) a value anywhere in the tree
// replaced by an extreme or ill-typed one, or a key removed. An input must be accepted or rejected
// with an ember::Error; any other exception fails the test, a crash or sanitizer report fails the
// process (`make test-dev` runs this under ASan and UBSan), and an input slower than 2 s counts as
// a hang. Counts are printed per loader. EMBER_FUZZ_INPUTS=N changes the inputs per loader.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/error.h"
#include "ember/rl/checkpoint.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/serialize.h"
#include "runtime/cpu/kernel_cache.h"

namespace {

using namespace ember;
using json = nlohmann::json;
namespace fs = std::filesystem;
using Rng = std::mt19937_64;

int inputs_per_loader() {
  if (const char* e = std::getenv("EMBER_FUZZ_INPUTS"); e && std::atoi(e) > 0) return std::atoi(e);
  return 2000;
}

const std::vector<std::string> kNumbers = {"0",
                                           "-1",
                                           "1",
                                           "2147483648",
                                           "4294967296",
                                           "-9223372036854775808",
                                           "9223372036854775807",
                                           "18446744073709551615",
                                           "99999999999999999999999999",
                                           "1e308",
                                           "-1e308",
                                           "1e-320",
                                           "0.5",
                                           "-0.0"};

json interesting_json(Rng& rng) {
  switch (rng() % 16) {
    case 0:
      return nullptr;
    case 1:
      return true;
    case 2:
      return -1;
    case 3:
      return 0;
    case 4:
      return int64_t{1} << 31;
    case 5:
      return INT64_MAX;
    case 6:
      return UINT64_MAX;
    case 7:
      return 1e300;
    case 8:
      return -0.5;
    case 9:
      return "x";
    case 10:
      return json::array();
    case 11:
      return json::object();
    case 12:
      return std::string(1000, 'a');
    case 13:
      return json::array({1, 2, 3});
    case 14:
      return 8192;
    default:
      return 1'000'000'000;
  }
}

// Replaces a random value in the tree (or removes a random key).
void mutate_json(json& j, Rng& rng) {
  std::vector<json*> nodes;
  std::function<void(json&)> walk = [&](json& n) {
    nodes.push_back(&n);
    if (n.is_structured())
      for (auto& c : n) walk(c);
  };
  walk(j);
  json* n = nodes[rng() % nodes.size()];
  if (n->is_object() && !n->empty() && rng() % 3 == 0) {
    auto it = n->begin();
    std::advance(it, static_cast<long>(rng() % n->size()));
    n->erase(it);
  } else {
    *n = interesting_json(rng);
  }
}

void mutate_bytes(std::string& s, Rng& rng) {
  const size_t n = s.size();
  auto pos = [&] { return n ? static_cast<size_t>(rng() % n) : 0; };
  switch (rng() % 8) {
    case 0:
      if (n) s[pos()] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 1: {
      static const char bytes[] = {0, '\xff', '"', '{', '[', '9', '-', ',', ':', '}', '\\'};
      if (n) s[pos()] = bytes[rng() % sizeof bytes];
      break;
    }
    case 2: {
      std::string ins(1 + rng() % 16, '\0');
      for (char& c : ins) c = static_cast<char>(rng());
      s.insert(n ? pos() : 0, ins);
      break;
    }
    case 3:
      if (n) {
        const size_t p = pos();
        s.erase(p, 1 + rng() % std::min<size_t>(64, n - p));
      }
      break;
    case 4:
      s.resize(n ? pos() : 0);
      break;
    case 5:
      if (n) {
        const size_t p = pos(), len = 1 + rng() % std::min<size_t>(256, n - p);
        s.insert(pos(), s.substr(p, len));
      }
      break;
    default: {  // a digit run -> an extreme number
      for (int tries = 0; tries < 8 && n; ++tries) {
        size_t p = pos();
        if (!std::isdigit(static_cast<unsigned char>(s[p]))) continue;
        size_t e = p;
        while (e < s.size() && (std::isdigit(static_cast<unsigned char>(s[e])) || s[e] == '.')) ++e;
        while (p > 0 && std::isdigit(static_cast<unsigned char>(s[p - 1]))) --p;
        s.replace(p, e - p, kNumbers[rng() % kNumbers.size()]);
        break;
      }
    }
  }
}

struct Counts {
  int64_t inputs = 0, accepted = 0, clean_errors = 0, other_exceptions = 0, hangs = 0;
  double slowest_s = 0;
  std::string first_other;
};

// Runs `load` on `inputs` mutants of `seed`; `json_aware` mixes in JSON tree mutations.
Counts fuzz(const std::string& name, const std::string& seed, bool json_aware, uint64_t rng_seed,
            const std::function<void(const std::string&)>& load) {
  Rng rng(rng_seed);
  Counts c;
  const int n = inputs_per_loader();
  for (int i = 0; i < n; ++i) {
    std::string input = seed;
    const int rounds = 1 + static_cast<int>(rng() % 4);
    for (int r = 0; r < rounds; ++r) {
      if (json_aware && rng() % 2 == 0) {
        json j = json::parse(input, nullptr, false);
        if (!j.is_discarded()) {
          mutate_json(j, rng);
          input = j.dump();
          continue;
        }
      }
      mutate_bytes(input, rng);
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
      load(input);
      ++c.accepted;
    } catch (const ember::Error&) {
      ++c.clean_errors;
    } catch (const std::exception& e) {
      if (c.other_exceptions++ == 0) c.first_other = e.what();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    c.slowest_s = std::max(c.slowest_s, s);
    if (s > 2.0) ++c.hangs;
    ++c.inputs;
  }
  std::printf(
      "fuzz %-22s %6lld mutations: %6lld clean errors, %5lld accepted, %lld other exceptions, "
      "%lld hangs, 0 crashes; slowest %.1f ms\n",
      name.c_str(), static_cast<long long>(c.inputs), static_cast<long long>(c.clean_errors),
      static_cast<long long>(c.accepted), static_cast<long long>(c.other_exceptions),
      static_cast<long long>(c.hangs), c.slowest_s * 1e3);
  return c;
}

void expect_clean(const Counts& c) {
  EXPECT_EQ(c.other_exceptions, 0) << "first: " << c.first_other;
  EXPECT_EQ(c.hangs, 0);
  EXPECT_GT(c.clean_errors, c.inputs / 4);  // the mutations reach the checks
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path work_dir() {
  const fs::path d = fs::temp_directory_path() / ("ember-fuzz-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

rl::PolicyOptions small_options() {
  rl::PolicyOptions o;
  o.hidden = 4;
  o.layers = 1;
  return o;
}

TEST(LoaderFuzz, Safetensors) {
  const fs::path dir = work_dir();
  const fs::path seed_path = dir / "seed.safetensors", input = dir / "input.safetensors";
  rl::save_policy(rl::ActorCritic(small_options()), seed_path.string(), {{"epoch", "3"}});
  const std::string seed = read_all(seed_path);
  ASSERT_NO_THROW(rl::load_policy(seed_path.string()));
  auto load = [&](const std::string& bytes) {
    {
      std::ofstream f(input, std::ios::binary | std::ios::trunc);
      f << bytes;
    }
    rl::load_policy(input.string());  // load_file, then the metadata check, then the network
  };
  // Raw bytes, then the header's JSON mutated and re-framed with a correct length prefix, so that
  // the mutations reach past the length check.
  expect_clean(fuzz("safetensors (bytes)", seed, false, 1401, load));
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(seed[i]);
  const std::string header = seed.substr(8, header_len), data = seed.substr(8 + header_len);
  expect_clean(fuzz("safetensors (header)", header, true, 1402, [&](const std::string& h) {
    std::string framed(8, '\0');
    for (int i = 0; i < 8; ++i) framed[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
    load(framed + h + data);
  }));
  fs::remove_all(dir);
}

TEST(LoaderFuzz, CheckpointManifests) {
  rl::CheckpointManifest m;
  m.epoch = 6;
  m.transitions = 120000;
  m.policy_file = "epoch_0006.policy.safetensors";
  m.optimizer_file = "epoch_0006.optimizer.safetensors";
  m.scaler_mean = 1.5;
  m.scaler_var = 2.25;
  m.scaler_count = 120000;
  m.curve = {{0, 20000, -150.0, 30.0}, {5, 120000, 20.0, 50.0}};
  m.config = rl::to_json(rl::TrainConfig{});
  const fs::path dir = work_dir();
  const std::string seed = read_all(rl::write_checkpoint_manifest(dir.string(), "epoch_0006", m));
  auto load = [&](const std::string& text) {
    const rl::CheckpointManifest p = rl::parse_checkpoint_manifest(text, "fuzz.json");
    rl::resume_config(p.config, rl::TrainConfig{}, {"--max-transitions"});
  };
  ASSERT_NO_THROW(load(seed));
  expect_clean(fuzz("checkpoint manifests", seed, true, 1403, load));
  fs::remove_all(dir);
}

TEST(LoaderFuzz, RunConfigurations) {
  const std::string seed = rl::to_json(rl::TrainConfig{}).dump(2);
  auto load = [](const std::string& text) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw ember::ValueError("not JSON");
    rl::checked_train_config(j);
  };
  ASSERT_NO_THROW(load(seed));
  expect_clean(fuzz("run configurations", seed, true, 1404, load));
}

TEST(LoaderFuzz, KernelCacheEntryCheck) {
  // A stand-in object: the check reads bytes only (nothing here is loaded).
  std::string object(6000, '\0');
  Rng rng(7);
  for (char& ch : object) ch = static_cast<char>(rng());
  object.replace(0, 4,
                 "\x7f"
                 "ELF");
  const runtime::CacheKey key = runtime::make_cache_key("kernel source\ncc\nflags\ncpu");
  const std::string seed = object + runtime::cache_entry_trailer(object, key);
  ASSERT_FALSE(runtime::check_cache_entry(seed, key).has_value());
  Counts c = fuzz("kernel cache entries", seed, false, 1405, [&](const std::string& bytes) {
    if (auto why = runtime::check_cache_entry(bytes, key))
      throw ember::CompileError(*why);  // rejected: would be recompiled
    // Accepted: only the unchanged entry may pass.
    EXPECT_EQ(bytes, seed) << "a changed entry passed the check";
  });
  expect_clean(c);
}

}  // namespace

#include "ember/rl/checkpoint.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ember/error.h"
#include "ember/support/atomic_file.h"

namespace ember::rl {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kMaxEpoch = 1'000'000'000;
constexpr int64_t kMaxTransitions = 1'000'000'000'000'000;

int64_t int_in(const json& j, const char* key, int64_t lo, int64_t hi, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number_integer())
    throw IOError(where + ": \"" + key + "\" is not an integer (" + v.dump() + ")");
  const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)
                        ? INT64_MAX
                        : v.get<int64_t>();
  if (x < lo || x > hi)
    throw IOError(where + ": \"" + key + "\" = " + std::to_string(x) + " is outside [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

double finite(const json& j, const char* key, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number()) throw IOError(where + ": \"" + key + "\" is not a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw IOError(where + ": \"" + key + "\" is not finite");
  return x;
}

std::string plain_file_name(const json& j, const char* key, const std::string& where) {
  const std::string s = j.at(key).get<std::string>();
  if (s.empty() || s == "." || s == ".." || s.find('/') != std::string::npos ||
      s.find('\0') != std::string::npos)
    throw IOError(where + ": \"" + key + "\" must be a file name next to the manifest (got " +
                  json(s).dump() + ")");
  return s;
}

// CLI option -> its place in to_json(TrainConfig).
const std::map<std::string, std::string>& option_pointers() {
  static const std::map<std::string, std::string> m = {
      {"--seed", "/seed"},
      {"--threads", "/threads"},
      {"--env-threads", "/env_threads"},
      {"--out", "/out_dir"},
      {"--resume", "/resume"},
      {"--max-transitions", "/max_transitions"},
      {"--target", "/target"},
      {"--checkpoint-every", "/checkpoint_every"},
      {"--progress", "/progress"},
      {"--no-jit", "/jit"},
      {"--check-replicas", "/check_replicas"},
      {"--envs", "/envs"},
      {"--steps-per-env", "/steps_per_env"},
      {"--max-episode-steps", "/max_episode_steps"},
      {"--eval-every", "/eval_every"},
      {"--eval-envs", "/eval_envs"},
      {"--eval-episodes-per-env", "/eval_episodes_per_env"},
      {"--final-eval-episodes-per-env", "/final_eval_episodes_per_env"},
      {"--hidden", "/policy/hidden"},
      {"--layers", "/policy/layers"},
      {"--log-std-init", "/policy/log_std_init"},
      {"--hidden-gain", "/policy/hidden_gain"},
      {"--actor-output-gain", "/policy/actor_output_gain"},
      {"--critic-output-gain", "/policy/critic_output_gain"},
      {"--lr", "/update/lr"},
      {"--adam-eps", "/update/adam_eps"},
      {"--adam-beta1", "/update/adam_beta1"},
      {"--adam-beta2", "/update/adam_beta2"},
      {"--gamma", "/gamma"},
      {"--gae-lambda", "/gae_lambda"},
      {"--clip", "/update/clip"},
      {"--value-coef", "/update/value_coef"},
      {"--entropy-coef", "/update/entropy_coef"},
      {"--max-grad-norm", "/update/max_grad_norm"},
      {"--global-grad-clip", "/update/separate_grad_clip"},
      {"--passes", "/update/passes"},
      {"--minibatch", "/update/minibatch"},
      {"--no-reward-scaling", "/reward_scaling"},
      {"--no-adv-norm", "/update/normalize_advantages"},
  };
  return m;
}

// Checks each key of `j` that `like` (a default configuration's JSON) has: the same kind of value
// (integer, number, bool, string, object), and integers within int32 where the field is an int.
void check_config_json(const json& j, const json& like, const std::string& at) {
  if (!j.is_object())
    throw ValueError("train config: " + (at.empty() ? "the configuration" : at) +
                     " is not a JSON object");
  static const std::set<std::string> int32_fields = {"threads", "env_threads", "max_episode_steps"};
  for (const auto& [key, def] : like.items()) {
    if (!j.contains(key)) continue;
    const json& v = j.at(key);
    const std::string name = at.empty() ? key : at + "." + key;
    auto bad = [&](const char* want) {
      throw ValueError("train config: \"" + name + "\" must be " + want + " (got " + v.dump() +
                       ")");
    };
    if (def.is_object()) {
      check_config_json(v, def, name);
    } else if (def.is_boolean()) {
      if (!v.is_boolean()) bad("true or false");
    } else if (def.is_string()) {
      if (!v.is_string()) bad("a string");
    } else if (def.is_number_integer()) {
      if (!v.is_number_integer()) bad("an integer");
      if (def.is_number_unsigned() && !v.is_number_unsigned()) bad("a non-negative integer");
      if (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(INT64_MAX)) {
        const int64_t x = v.get<int64_t>();
        if (int32_fields.count(key) && (x < INT32_MIN || x > INT32_MAX)) bad("a 32-bit integer");
      } else if (!def.is_number_unsigned()) {
        bad("an integer below 2^63");
      }
    } else if (def.is_number()) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) bad("a finite number");
    }
  }
}

}  // namespace

TrainConfig checked_train_config(const json& j) {
  check_config_json(j, to_json(TrainConfig{}), "");
  TrainConfig c = train_config_from_json(j);
  check_config_limits(c);  // first: validate() multiplies envs by steps per env
  c.validate();
  return c;
}

const std::set<std::string> kResumeOverridable = {
    "--max-transitions",  "--target",
    "--checkpoint-every", "--progress",
    "--threads",          "--env-threads",
    "--no-jit",           "--out",
    "--resume",           "--final-eval-episodes-per-env",
    "--check-replicas"};

namespace {

CheckpointManifest::ScalerStatistics scaler_statistics(const json& j, const std::string& where) {
  CheckpointManifest::ScalerStatistics s;
  s.mean = finite(j, "mean", where);
  s.var = finite(j, "var", where);
  s.count = finite(j, "count", where);
  if (s.var < 0 || s.count <= 0) throw IOError(where + ": var must be >= 0 and count > 0");
  return s;
}

}  // namespace

CheckpointManifest parse_checkpoint_manifest(std::string_view text, const std::string& path) {
  const std::string where = "checkpoint '" + path + "'";
  CheckpointManifest m;
  m.path = path;
  const fs::path dir = fs::path(path).parent_path();
  m.run_dir = dir.filename() == "checkpoints" ? dir.parent_path().string() : dir.string();
  if (m.run_dir.empty()) m.run_dir = ".";
  try {
    const json j = json::parse(text);
    if (!j.is_object() || j.value("format", "") != "ember.ppo.checkpoint/1")
      throw IOError(where + ": not an ember.ppo.checkpoint/1 manifest");
    m.epoch = int_in(j, "epoch", 0, kMaxEpoch, where);
    m.transitions = int_in(j, "transitions", 0, kMaxTransitions, where);
    const std::string base = dir.empty() ? "" : dir.string() + "/";
    m.policy_file = base + plain_file_name(j, "policy", where);
    m.optimizer_file = base + plain_file_name(j, "optimizer", where);
    const CheckpointManifest::ScalerStatistics rank0 =
        scaler_statistics(j.at("reward_scaler"), where + " reward_scaler");
    m.scaler_mean = rank0.mean;
    m.scaler_var = rank0.var;
    m.scaler_count = rank0.count;
    m.world_size = j.contains("world_size") ? int_in(j, "world_size", 1, 1 << 20, where) : 1;
    if (m.world_size > 1) {
      const json& all = j.at("rank_reward_scalers");
      if (!all.is_array() || static_cast<int64_t>(all.size()) != m.world_size)
        throw IOError(where + ": \"rank_reward_scalers\" must hold one entry per rank (" +
                      std::to_string(m.world_size) + ")");
      for (const json& r : all)
        m.rank_scalers.push_back(scaler_statistics(r, where + " rank_reward_scalers"));
    }
    const json& curve = j.at("curve");
    if (!curve.is_array() || static_cast<int64_t>(curve.size()) > m.epoch)
      throw IOError(where + ": \"curve\" must be an array of at most \"epoch\" points");
    for (const json& p : curve) {
      CurvePoint c;
      c.epoch = int_in(p, "epoch", 0, m.epoch - 1, where + " curve");
      c.transitions = int_in(p, "transitions", 0, m.transitions, where + " curve");
      c.mean = finite(p, "mean", where + " curve");
      c.std = finite(p, "std", where + " curve");
      if (c.std < 0) throw IOError(where + ": curve std < 0");
      m.curve.push_back(c);
    }
    m.config = j.at("config");
    if (!m.config.is_object()) throw IOError(where + ": \"config\" is not an object");
    if (j.contains("record")) {
      m.record = j.at("record");
      if (!m.record.is_null() && !(m.record.is_object() && m.record.contains("epoch") &&
                                   m.record["epoch"].is_number_integer() &&
                                   m.record["epoch"].get<int64_t>() == m.epoch - 1))
        throw IOError(where + ": \"record\" is not the record of epoch " +
                      std::to_string(m.epoch - 1));
    }
  } catch (const json::exception& e) {
    throw IOError(where + ": malformed manifest (" + e.what() + ")");
  }
  return m;
}

CheckpointManifest read_checkpoint_manifest(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw IOError("cannot open checkpoint '" + path + "': " + ec.message());
  if (size > (64u << 20))
    throw IOError("checkpoint '" + path + "': " + std::to_string(size) +
                  " bytes is too large for a manifest");
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f) throw IOError("cannot read checkpoint '" + path + "'");
  return parse_checkpoint_manifest(ss.str(), path);
}

std::string find_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  fs::path dir = path;
  if (fs::is_directory(dir / "checkpoints", ec)) dir /= "checkpoints";
  // The manifest with the highest epoch (final.json on a tie); unreadable ones are skipped.
  std::string best;
  int64_t best_epoch = -1;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const bool candidate = n == "final.json" || (n.size() == 15 && n.rfind("epoch_", 0) == 0 &&
                                                 e.path().extension() == ".json");
    if (!candidate) continue;
    try {
      const int64_t epoch = read_checkpoint_manifest(e.path().string()).epoch;
      if (epoch > best_epoch || (epoch == best_epoch && n == "final.json")) {
        best = e.path().string();
        best_epoch = epoch;
      }
    } catch (const IOError&) {
    }
  }
  if (best.empty())
    throw IOError("no readable checkpoint in '" + path +
                  "' (looked for final.json and epoch_NNNN.json)");
  return best;
}

std::string write_checkpoint_manifest(const std::string& dir, const std::string& stem,
                                      const CheckpointManifest& m) {
  const json manifest = {
      {"format", "ember.ppo.checkpoint/1"},
      {"epoch", m.epoch},
      {"transitions", m.transitions},
      {"policy", fs::path(m.policy_file).filename().string()},
      {"optimizer", fs::path(m.optimizer_file).filename().string()},
      {"reward_scaler",
       {{"mean", m.scaler_mean}, {"var", m.scaler_var}, {"count", m.scaler_count}}},
      {"curve", m.curve},
      {"config", m.config},
      {"record", m.record}};
  json out = manifest;
  if (m.world_size > 1) {
    out["world_size"] = m.world_size;
    json all = json::array();
    for (const auto& r : m.rank_scalers)
      all.push_back({{"mean", r.mean}, {"var", r.var}, {"count", r.count}});
    out["rank_reward_scalers"] = all;
  }
  const std::string path = dir + "/" + stem + ".json";
  support::write_file_atomic(path, out.dump(2) + "\n");
  return path;
}

void check_config_limits(const TrainConfig& c) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw ValueError("train config: " + what);
  };
  require(c.envs >= 1 && c.envs <= 4096 && c.eval_envs <= 4096,
          "envs must lie in [1, 4096] and eval-envs be <= 4096");
  require(c.steps_per_env >= 1 && c.steps_per_env <= 10'000'000,
          "steps-per-env must lie in [1, 10^7]");
  require(c.envs * c.steps_per_env <= 100'000'000, "transitions per epoch must be <= 10^8");
  require(c.max_episode_steps <= 10'000'000, "max-episode-steps must be <= 10^7");
  require(c.policy.hidden <= 65536 && c.policy.layers <= 256,
          "hidden must be <= 65536 and layers <= 256");
  require(c.policy.obs_dim >= 1 && c.policy.obs_dim <= 4096 && c.policy.act_dim >= 1 &&
              c.policy.act_dim <= 4096,
          "obs_dim and act_dim must lie in [1, 4096]");
  require(c.update.passes <= 10'000, "passes must be <= 10^4");
  require(c.threads <= 1024 && c.env_threads <= 1024, "threads must be <= 1024");
  require(c.eval_episodes_per_env <= 1'000'000 && c.final_eval_episodes_per_env <= 1'000'000,
          "episodes per env must be <= 10^6");
  require(c.eval_every <= kMaxEpoch && c.checkpoint_every <= kMaxEpoch,
          "eval-every and checkpoint-every must be <= 10^9");
  require(c.max_transitions <= kMaxTransitions, "max-transitions must be <= 10^15");
}

TrainConfig resume_config(const json& saved, const TrainConfig& cli,
                          const std::set<std::string>& given) {
  // Normalise the saved configuration through TrainConfig so both sides print alike.
  const TrainConfig base = checked_train_config(saved);
  json merged = to_json(base);
  const json typed = to_json(cli);
  for (const std::string& opt : given) {
    auto it = option_pointers().find(opt);
    if (it == option_pointers().end()) throw ValueError(opt + " cannot be combined with --resume");
    const json::json_pointer ptr(it->second);
    if (kResumeOverridable.count(opt)) {
      merged[ptr] = typed.at(ptr);
    } else if (typed.at(ptr) != merged.at(ptr)) {
      std::string allowed;
      for (const auto& o : kResumeOverridable)
        if (o != "--resume") allowed += (allowed.empty() ? "" : ", ") + o;
      throw ValueError(opt + " " + typed.at(ptr).dump() +
                       " conflicts with the checkpoint's configuration (" + it->second.substr(1) +
                       " = " + merged.at(ptr).dump() +
                       "): a resumed run keeps the configuration it started with; only " + allowed +
                       " may change");
    }
  }
  TrainConfig c = train_config_from_json(merged);
  c.resume = cli.resume;
  c.out_dir = cli.out_dir;
  check_config_limits(c);
  return c;
}

}  // namespace ember::rl

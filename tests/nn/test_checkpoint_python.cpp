// Interop with Python's `safetensors` package in both directions (the project venv's Python, set
// up by scripts/python-venv.sh; skipped when it is missing).
#include "checkpoint_fixture.h"

namespace {

using namespace ember_checkpoint_test;
using namespace ember;
namespace fs = std::filesystem;

// ---- interop with Python's safetensors ----------------------------------------------------------

// The SPEC format of scripts/safetensors_interop.py: each element's raw bits as an integer.
std::string spec_json(const nn::NamedTensors& ts, const Metadata& md) {
  std::string s = "{\"tensors\": {";
  for (size_t i = 0; i < ts.size(); i++) {
    const Tensor& t = ts[i].second;
    const std::string b = raw_bytes(t);
    const size_t w = element_size(t.dtype());
    s += (i ? ", \"" : "\"") + ts[i].first + "\": {\"dtype\": \"" + safetensors_dtype(t.dtype()) +
         "\", \"shape\": [";
    for (size_t d = 0; d < t.sizes().size(); d++) {
      if (d) s += ",";
      s += std::to_string(t.sizes()[d]);
    }
    s += "], \"bits\": [";
    for (size_t k = 0; k < b.size() / w; k++) {
      uint64_t v = 0;
      std::memcpy(&v, b.data() + k * w, w);
      if (k) s += ",";
      s += std::to_string(v);
    }
    s += "]}";
  }
  s += "}, \"metadata\": {";
  size_t i = 0;
  for (auto& [k, v] : md) s += (i++ ? ", \"" : "\"") + k + "\": \"" + v + "\"";
  return s + "}}";
}

class PythonInterop : public Checkpoint {
 protected:
  void SetUp() override {
    const char* env = std::getenv("EMBER_SOURCE_DIR");  // set by ctest; else the configure-time dir
    const std::string source_dir = env ? env : EMBER_SOURCE_DIR;
    python = source_dir + "/.venv/bin/python";
    if (!fs::exists(python))
      GTEST_SKIP() << python << " is missing: run `bash scripts/python-venv.sh` (make test does)";
    Checkpoint::SetUp();
    script = source_dir + "/scripts/safetensors_interop.py";
  }
  RunResult interop(const std::string& args) {
    return run("'" + python + "' '" + script + "' " + args);
  }
  std::string python, script;
};

nn::NamedTensors every_dtype() {
  nn::NamedTensors ts = state(Net(3));
  ts.emplace_back("f64_matrix",
                  from_vector<double>({-0.0, 1e-310, std::numbers::pi, -1e300}, IntList{2, 2}));
  return ts;
}

TEST_F(PythonInterop, EmberFileLoadsInPython) {
  const nn::NamedTensors ts = every_dtype();
  const Metadata md{{"format", "pt"}, {"written_by", "ember"}};
  const fs::path file = dir / "ember.safetensors", spec = dir / "spec.json";
  save(ts, file.string(), md);
  std::ofstream(spec) << spec_json(ts, md);
  RunResult r = interop("check '" + file.string() + "' '" + spec.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ok: 12 tensors match"), std::string::npos) << r.output;
}

TEST_F(PythonInterop, PythonFileLoadsInEmber) {
  const nn::NamedTensors ts = every_dtype();
  const Metadata md{{"source", "python"}};
  const fs::path file = dir / "python.safetensors", spec = dir / "spec.json";
  std::ofstream(spec) << spec_json(ts, md);
  RunResult r = interop("write '" + spec.string() + "' '" + file.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  TensorFile f = load_file(file.string());
  EXPECT_EQ(f.metadata, md);
  EXPECT_EQ(values(f.tensors), values(ts));
  // And into a module's existing buffers, in place.
  Net n(1), want(3);
  std::ofstream(spec) << spec_json(state(want), {});
  r = interop("write '" + spec.string() + "' '" + file.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto before = snapshot(state(n));
  load(n, file.string());
  EXPECT_EQ(values(state(n)), values(state(want)));
  for (auto& [name, s] : snapshot(state(n))) EXPECT_EQ(s.storage, before.at(name).storage) << name;
}

}  // namespace

// `ember onnx test DIR`. The comparison is ONNX's backend test's (onnx/backend/test/runner):
// dtypes and shapes equal, strings equal, and numpy.testing.assert_allclose's |got - expected| <=
// atol + rtol * |expected| for every element, NaN matching NaN.
#include "onnx_test.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>

#include "ember/context.h"
#include "ember/onnx/model.h"
#include "ember/support/shape_str.h"

namespace ember::app {
namespace {

namespace fs = std::filesystem;

// Files named PREFIX<N>.pb in dir, by N.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::map<int, fs::path> found;
  const std::regex re(prefix + "([0-9]+)\\.pb");
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, re)) found[std::stoi(m[1])] = e.path();
  }
  std::vector<fs::path> r;
  for (auto& [i, p] : found) r.push_back(p);
  return r;
}

// A file's value, read as the model declares it (a tensor when it does not say).
onnx::Value read_value(const fs::path& file, const onnx::ValueInfo* declared) {
  if (!declared || declared->type == "unknown") return onnx::load_tensor(file.string());
  return onnx::load_value(file.string(), declared->type);
}

std::string index_text(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string r = "[";
  for (size_t i = 0; i < idx.size(); i++) r += (i ? ", " : "") + std::to_string(idx[i]);
  return r + "]";
}

// Messages from ONNX's checker span lines ("==> Context: ..."); the result is one line.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// "" when got matches expected, else the reason (with the worst element).
std::string compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " +
           dtype_name(want.dtype());
  if (got.sizes() != want.sizes())
    return "shape " + support_shape(got) + ", expected " + support_shape(want);
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  int64_t bad = 0, worst = -1;
  double worst_excess = -1;
  for (size_t i = 0; i < g.size(); i++) {
    const double diff = std::abs(g[i] - w[i]), tol = atol + rtol * std::abs(w[i]);
    const bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (same || diff <= tol) continue;
    bad++;
    const double excess = std::isnan(diff) ? INFINITY : diff / tol;
    if (excess > worst_excess) worst_excess = excess, worst = static_cast<int64_t>(i);
  }
  if (!bad) return "";
  const double diff = std::abs(g[worst] - w[worst]);
  return std::to_string(bad) + " of " + std::to_string(g.size()) + " elements differ; worst at " +
         index_text(worst, want.shape()) + ": got " + number(g[worst]) + ", expected " +
         number(w[worst]) + " (|diff| " + number(diff) + ", allowed " +
         number(atol + rtol * std::abs(w[worst])) + ")";
}

// "" when the string tensors match: the same shape and equal strings.
std::string compare_strings(const onnx::StringTensor& got, const onnx::StringTensor& want) {
  if (got.shape != want.shape)
    return "shape " + support::shape_str(got.shape) + ", expected " +
           support::shape_str(want.shape);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.data.size(); i++)
    if (got.data[i] != want.data[i] && bad++ == 0) first = static_cast<int64_t>(i);
  if (!bad) return "";
  return std::to_string(bad) + " of " + std::to_string(got.data.size()) +
         " strings differ; first at " + index_text(first, want.shape) + ": got \"" +
         got.data[first] + "\", expected \"" + want.data[first] + "\"";
}

// "" when the values match: the same kind, sequences item by item, optionals both empty or
// holding matching values.
std::string compare_values(const onnx::Value& got, const onnx::Value& want, double rtol,
                           double atol) {
  if (got.kind() != want.kind()) return "a " + got.kind_name() + ", expected a " + want.kind_name();
  if (got.is_tensor()) return compare(got.tensor(), want.tensor(), rtol, atol);
  if (got.is_strings()) return compare_strings(got.strings(), want.strings());
  if (got.kind() == onnx::Value::Kind::Optional) {
    if (got.has_element() != want.has_element())
      return got.has_element() ? "a value, expected an empty optional" : "empty, expected a value";
    return got.has_element() ? compare_values(got.element(), want.element(), rtol, atol) : "";
  }
  const auto &g = got.items(), &w = want.items();
  if (g.size() != w.size())
    return "a sequence of " + std::to_string(g.size()) + ", expected " + std::to_string(w.size());
  for (size_t i = 0; i < g.size(); i++) {
    const std::string why = compare(g[i], w[i], rtol, atol);
    if (!why.empty()) return "item " + std::to_string(i) + ": " + why;
  }
  return "";
}

// Every tensor a value holds.
void tensors_of(const onnx::Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) out.push_back(v.tensor());
  if (v.kind() == onnx::Value::Kind::Sequence)
    out.insert(out.end(), v.items().begin(), v.items().end());
  if (v.kind() == onnx::Value::Kind::Optional && v.has_element()) tensors_of(v.element(), out);
}

const onnx::ValueInfo* find_info(const std::vector<onnx::ValueInfo>& v, const std::string& name) {
  for (const auto& i : v)
    if (i.name == name) return &i;
  return nullptr;
}

// The mismatch of one data set, or "".
std::string run_data_set(const onnx::Model& m, const fs::path& set, const OnnxTestOptions& o) {
  // input_N.pb belongs to the N-th input without a default (the backend runner's order).
  std::vector<const onnx::ValueInfo*> formal;
  for (const auto& i : m.inputs())
    if (!i.has_default) formal.push_back(&i);
  const auto in_files = numbered(set, "input_");
  if (in_files.size() > formal.size())
    for (const auto& i : m.inputs())
      if (i.has_default) formal.push_back(&i);
  if (in_files.size() > formal.size())
    throw ValueError(std::to_string(in_files.size()) + " input files for a model with " +
                     std::to_string(m.inputs().size()) + " inputs");
  onnx::NamedValues given;
  for (size_t i = 0; i < in_files.size(); i++)
    given.emplace_back(formal[i]->name, read_value(in_files[i], formal[i]));
  const onnx::NamedValues out = m.run_values(given);
  const auto out_files = numbered(set, "output_");
  if (out_files.size() != out.size())
    throw ValueError(std::to_string(out_files.size()) + " output files for a model with " +
                     std::to_string(out.size()) + " outputs");
  std::vector<onnx::Value> expected;
  for (size_t i = 0; i < out_files.size(); i++)
    expected.push_back(read_value(out_files[i], find_info(m.outputs(), out[i].first)));
  std::vector<Tensor> all;
  for (const auto& [name, v] : out) tensors_of(v, all);
  realize(all);
  for (size_t i = 0; i < out.size(); i++) {
    const std::string why = compare_values(out[i].second, expected[i], o.rtol, o.atol);
    if (!why.empty())
      return "output '" + out[i].first + "' (" + set.filename().string() + "): " + why;
  }
  return "";
}

}  // namespace

int run_onnx_test(const OnnxTestOptions& o) {
  const std::string dir = o.dir;
  try {
    if (!o.device.empty()) Context::get().device = o.device;
    const onnx::Model m = onnx::load((fs::path(dir) / "model.onnx").string());
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw ValueError("no test_data_set_* folder in '" + dir + "'");
    for (const auto& s : sets) {
      const std::string why = run_data_set(m, s, o);
      if (!why.empty()) {
        std::printf("FAIL %s: mismatch: %s\n", dir.c_str(), why.c_str());
        return 1;
      }
    }
    std::printf("ok %s (%zu data set%s)\n", dir.c_str(), sets.size(), sets.size() == 1 ? "" : "s");
    return 0;
  } catch (const onnx::UnsupportedError& e) {
    std::printf("FAIL %s: unsupported: %s\n", dir.c_str(), one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::printf("FAIL %s: error: %s\n", dir.c_str(), one_line(e.what()).c_str());
    return 3;
  }
}

}  // namespace ember::app

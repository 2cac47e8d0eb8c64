// The parity framework's out-of-line parts: host data conversion, the backends' data access and
// the comparison.
#include "parity.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace parity {

namespace {

// Test kernels are cached on disk under the build tree, not in the user's home (set before the
// first kernel compiles; an EMBER_CACHE_DIR given by the caller wins).
[[maybe_unused]] const bool kCacheDirSet = [] {
#ifdef EMBER_PARITY_CACHE_DIR
  setenv("EMBER_CACHE_DIR", EMBER_PARITY_CACHE_DIR, 0);
#endif
  return true;
}();

}  // namespace

std::vector<std::string> parity_devices() {
  const char* e = std::getenv("EMBER_PARITY_DEVICES");
  if (!e || !*e) return {"cpu", "interp"};
  std::vector<std::string> out;
  std::string s = e;
  for (size_t at = 0; at <= s.size();) {
    size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

namespace {

template <class T>
std::vector<uint8_t> encode_as(const std::vector<double>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); i++) {
    T x = static_cast<T>(v[i]);
    std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
  }
  return out;
}

ember::ScalarType from_torch(c10::ScalarType t) {
  static const std::pair<c10::ScalarType, ember::ScalarType> kDtypes[] = {
      {torch::kBool, ember::kBool},       {torch::kUInt8, ember::kUInt8},
      {torch::kInt32, ember::kInt32},     {torch::kInt64, ember::kInt64},
      {torch::kFloat32, ember::kFloat32}, {torch::kFloat64, ember::kFloat64},
      {torch::kInt8, ember::kInt8},       {torch::kInt16, ember::kInt16},
      {torch::kHalf, ember::kFloat16},    {torch::kBFloat16, ember::kBFloat16}};
  for (const auto& [torch_dtype, ember_dtype] : kDtypes)
    if (t == torch_dtype) return ember_dtype;
  throw std::runtime_error(std::string("parity: unexpected torch dtype ") + c10::toString(t));
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string index_str(size_t flat, const Shape& s) {
  Shape idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = static_cast<int64_t>(flat) % s[d];
    flat /= static_cast<size_t>(s[d]);
  }
  return shape_str(idx);
}

// encode_as<T>(v) for the T of those listed whose dtype is t (an empty vector for none).
template <class... Ts>
std::vector<uint8_t> encode_as_one_of(const std::vector<double>& v, ember::ScalarType t) {
  std::vector<uint8_t> out;
  ((t == ember::dtype_of<Ts>() && (out = encode_as<Ts>(v), true)) || ...);
  return out;
}

}  // namespace

std::vector<uint8_t> encode(const std::vector<double>& v, ember::ScalarType t) {
  switch (t) {
    case ember::kBool:  // one byte a value
      return encode_as<uint8_t>(v);
    case ember::kFloat16:
    case ember::kBFloat16: {  // the 16-bit words of c10::Half / c10::BFloat16 (rounded by libtorch)
      std::vector<uint8_t> out(v.size() * 2);
      for (size_t i = 0; i < v.size(); i++) {
        const uint16_t w = t == ember::kFloat16 ? c10::Half(static_cast<float>(v[i])).x
                                                : c10::BFloat16(static_cast<float>(v[i])).x;
        std::memcpy(out.data() + i * 2, &w, 2);
      }
      return out;
    }
    default:
      return encode_as_one_of<uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t,
                              uint64_t, float, double>(v, t);
  }
}

// ---- ember ------------------------------------------------------------------------------------
ember::Tensor EmberB::from_host(const std::vector<double>& v, const Shape& s, DT dt) {
  std::vector<double> w = v;
  if (dt == ember::kBool)
    for (auto& x : w) x = x != 0;
  auto bytes = encode(w, dt);
  return ember::from_blob(bytes.data(), s, dt);
}

Host EmberB::host(const T& t) {
  Host h;
  h.shape = t.sizes();
  h.dtype = t.scalar_type();
  if (ember::is_floating_point(h.dtype))
    h.f = t.to_vector<double>();
  else
    h.i = t.to_vector<int64_t>();
  return h;
}

// ---- torch ------------------------------------------------------------------------------------
torch::Tensor TorchB::from_host(const std::vector<double>& v, const Shape& s, DT dt) {
  ember::ScalarType et = from_torch(dt);
  std::vector<double> w = v;
  if (et == ember::kBool)
    for (auto& x : w) x = x != 0;
  auto bytes = encode(w, et);
  return torch::from_blob(bytes.data(), s, torch::TensorOptions().dtype(dt)).clone();
}

torch::Tensor TorchB::scalar_tensor(Scalar v, std::optional<DT> dt) {
  return torch::scalar_tensor(v, opts(dt));
}

Host TorchB::host(const T& t) {
  Host h;
  h.shape = Shape(t.sizes().begin(), t.sizes().end());
  h.dtype = from_torch(t.scalar_type());
  if (ember::is_floating_point(h.dtype)) {
    auto c = t.detach().to(torch::kFloat64).contiguous();
    h.f.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  } else {
    auto c = t.detach().to(torch::kInt64).contiguous();
    h.i.assign(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
  }
  return h;
}

// ---- comparison -------------------------------------------------------------------------------
std::string compare(const std::vector<Host>& got, const std::vector<Host>& ref, Tol tol) {
  std::ostringstream o;
  if (got.size() != ref.size()) {
    o << "ember returned " << got.size() << " results, torch " << ref.size();
    return o.str();
  }
  for (size_t r = 0; r < got.size(); r++) {
    const Host &a = got[r], &b = ref[r];
    std::string which = got.size() > 1 ? "result " + std::to_string(r) + ": " : "";
    if (a.shape != b.shape) {
      o << which << "shape " << shape_str(a.shape) << " != torch " << shape_str(b.shape) << "\n";
      continue;
    }
    if (a.dtype != b.dtype) {
      o << which << "dtype " << ember::dtype_name(a.dtype) << " != torch "
        << ember::dtype_name(b.dtype) << "\n";
      continue;
    }
    int bad = 0;
    size_t n = a.f.size() + a.i.size();
    for (size_t k = 0; k < n; k++) {
      bool ok;
      std::string av, bv;
      if (!a.f.empty()) {
        double x = a.f[k], y = b.f[k];
        ok = (std::isnan(x) && std::isnan(y)) || x == y ||
             (std::isfinite(x) && std::isfinite(y) &&
              std::abs(x - y) <= tol.atol + tol.rtol * std::abs(y));
        av = std::to_string(x);
        bv = std::to_string(y);
      } else {
        ok = a.i[k] == b.i[k];
        av = std::to_string(a.i[k]);
        bv = std::to_string(b.i[k]);
      }
      if (!ok && bad++ < 6)
        o << which << "at " << index_str(k, a.shape) << ": ember " << av << " torch " << bv << "\n";
    }
    if (bad)
      o << which << bad << " of " << n << " elements differ (shape " << shape_str(a.shape) << ", "
        << ember::dtype_name(a.dtype) << ", atol " << tol.atol << " rtol " << tol.rtol << ")\n";
  }
  return o.str();
}

uint64_t seed_of(const std::string& name) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across runs and builds
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace parity

// safetensors files (include/ember/io/safetensors.h documents the format and the errors).
// Reading parses and validates the whole header and the data layout before any tensor is made or
// written; loading into existing tensors copies the bytes straight into their realized storage.
#include "ember/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "ember/jit.h"
#include "ember/support/atomic_file.h"
#include "ember/support/shape_str.h"

namespace ember {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; ember's serializer assumes a little-endian host");

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit

// One line: errors from the JSON parser or the OS must not break the "one-line message" promise.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw IOError("safetensors file '" + path + "': " + one_line(what));
}

struct DTypeName {
  const char* name;
  ScalarType dtype;
};
constexpr DTypeName kDTypes[] = {
    {"F32", kFloat32}, {"F64", kFloat64}, {"F16", kFloat16}, {"BF16", kBFloat16}, {"I8", kInt8},
    {"I16", kInt16},   {"I32", kInt32},   {"I64", kInt64},   {"U8", kUInt8},      {"U16", kUInt16},
    {"U32", kUInt32},  {"U64", kUInt64},  {"BOOL", kBool}};
// safetensors dtypes that ember has no tensor type for.
constexpr const char* kUnsupported[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                        "F6_E3M2", "F4",      "C64"};

const char* st_dtype(ScalarType t) {
  for (auto& d : kDTypes)
    if (d.dtype == t) return d.name;
  return "?";
}

std::string range_text(uint64_t b, uint64_t e) {
  std::string r = "[";  // (built step by step: GCC 12 warns falsely on "[" + std::string)
  r += std::to_string(b);
  r += ", ";
  r += std::to_string(e);
  return r += ")";
}

// One tensor of a parsed file; `begin`/`end` are offsets into the data buffer.
struct Entry {
  std::string name;
  ScalarType dtype;
  Shape shape;
  uint64_t begin, end;
};

struct Parsed {
  std::vector<Entry> entries;  // ascending offsets
  Metadata metadata;
  std::vector<char> data;
};

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

ScalarType parse_dtype(const std::string& path, const std::string& name, const json& v) {
  if (!v.is_string()) fail(path, "tensor '" + name + "': \"dtype\" is not a string");
  const std::string s = v.get<std::string>();
  for (auto& d : kDTypes)
    if (s == d.name) return d.dtype;
  for (const char* u : kUnsupported)
    if (s == u)
      fail(path, "tensor '" + name + "': dtype " + s +
                     " is not supported by ember (supported: F16, BF16, F32, F64, I8, I16, I32, "
                     "I64, U8, U16, "
                     "U32, U64, BOOL)");
  fail(path, "tensor '" + name + "': unknown dtype '" + s + "'");
}

uint64_t parse_unsigned(const std::string& path, const std::string& what, const json& v) {
  if (!v.is_number_unsigned()) fail(path, what + " is not a non-negative integer: " + v.dump());
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v) {
  if (!v.is_object()) fail(path, "tensor '" + name + "': entry is not a JSON object");
  for (auto& [k, _] : v.items())
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      fail(path, "tensor '" + name + "': unexpected field '" + k + "'");
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!v.contains(k)) fail(path, "tensor '" + name + "': missing field '" + k + "'");
  Entry e{name, parse_dtype(path, name, v["dtype"]), {}, 0, 0};

  const json& shape = v["shape"];
  if (!shape.is_array()) fail(path, "tensor '" + name + "': \"shape\" is not an array");
  uint64_t numel = 1;
  bool overflow = false;
  for (auto& d : shape) {
    uint64_t n = parse_unsigned(path, "tensor '" + name + "': a shape entry", d);
    if (n > static_cast<uint64_t>(INT64_MAX)) overflow = true;
    e.shape.push_back(static_cast<int64_t>(n));
    overflow |= __builtin_mul_overflow(numel, n, &numel);
  }
  uint64_t nbytes = 0;
  overflow |= __builtin_mul_overflow(numel, element_size(e.dtype), &nbytes);
  if (overflow)
    fail(path, "tensor '" + name + "': shape " + support::shape_str(e.shape) + " is too large");

  const json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    fail(path, "tensor '" + name + "': \"data_offsets\" is not a [begin, end] pair");
  e.begin = parse_unsigned(path, "tensor '" + name + "': data_offsets begin", off[0]);
  e.end = parse_unsigned(path, "tensor '" + name + "': data_offsets end", off[1]);
  if (e.begin > e.end)
    fail(path, "tensor '" + name + "': data_offsets " + range_text(e.begin, e.end) +
                   " end before they begin");
  if (e.end - e.begin != nbytes)
    fail(path, "tensor '" + name + "': data_offsets " + range_text(e.begin, e.end) + " hold " +
                   std::to_string(e.end - e.begin) + " bytes but shape " +
                   support::shape_str(e.shape) + " of " + st_dtype(e.dtype) + " needs " +
                   std::to_string(nbytes));
  return e;
}

Metadata parse_metadata(const std::string& path, const json& v) {
  if (!v.is_object()) fail(path, "\"__metadata__\" is not a JSON object");
  Metadata m;
  for (auto& [k, val] : v.items()) {
    if (!val.is_string()) fail(path, "\"__metadata__\" value of '" + k + "' is not a string");
    m[k] = val.get<std::string>();
  }
  return m;
}

// Checks that the tensors tile [0, data_size) exactly; sorts the entries by offset.
void check_layout(const std::string& path, std::vector<Entry>& es, uint64_t data_size) {
  for (auto& e : es)
    if (e.end > data_size)
      fail(path, "tensor '" + e.name + "': data_offsets " + range_text(e.begin, e.end) +
                     " run past the end of the data (" + std::to_string(data_size) +
                     " bytes; file truncated?)");
  std::stable_sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (auto& e : es) {
    if (e.begin < pos)
      fail(path, "tensors '" + prev->name + "' " + range_text(prev->begin, prev->end) + " and '" +
                     e.name + "' " + range_text(e.begin, e.end) + " overlap");
    if (e.begin > pos)
      fail(path, "data bytes " + range_text(pos, e.begin) +
                     " belong to no tensor (data_offsets do not cover the data)");
    prev = &e;
    pos = e.end;
  }
  if (pos != data_size)
    fail(path, "data has " + std::to_string(data_size) + " bytes but the tensors cover only " +
                   std::to_string(pos) + " (data_offsets do not cover the data)");
}

Parsed read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  f.seekg(0, std::ios::end);
  const auto end = f.tellg();
  if (end < 0) fail(path, "cannot determine the file size");
  const uint64_t size = static_cast<uint64_t>(end);
  f.seekg(0);
  if (size < 8)
    fail(path,
         "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  unsigned char len_bytes[8];
  if (!f.read(reinterpret_cast<char*>(len_bytes), 8)) fail(path, "read error");
  const uint64_t n = read_u64_le(len_bytes);
  if (n > size - 8)
    fail(path, "header length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes)");
  if (n > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(n) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  std::string header(n, '\0');
  if (!f.read(header.data(), static_cast<std::streamsize>(n))) fail(path, "read error in header");

  // A key repeated in any object of the header is an error, as in the reference parser (serde):
  // nlohmann's parser would silently keep the last value. One key set per open object, with the
  // key that holds the object (for the message).
  struct OpenObject {
    std::set<std::string> keys;
    std::string under;
  };
  std::vector<OpenObject> open;
  std::string last_key, duplicate, duplicate_in;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) {
      open.push_back({{}, depth == 0 ? std::string() : last_key});
    } else if (ev == json::parse_event_t::object_end) {
      open.pop_back();
    } else if (ev == json::parse_event_t::key) {
      last_key = parsed.get<std::string>();
      if (duplicate.empty() && !open.back().keys.insert(last_key).second) {
        duplicate = last_key;
        duplicate_in = open.back().under.empty() ? "the header" : "'" + open.back().under + "'";
      }
    }
    return true;
  };
  json h;
  try {
    h = json::parse(header, cb);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); msg.starts_with("[json.exception") && p != std::string::npos)
      msg = msg.substr(p + 2);
    fail(path, "header is not valid JSON: " + msg);
  }
  if (!h.is_object()) fail(path, "header is not a JSON object");
  if (!duplicate.empty())
    fail(path, "key '" + duplicate + "' appears twice in " + duplicate_in +
                   " (a JSON object may not repeat a key)");

  Parsed out;
  for (auto& [k, v] : h.items()) {
    if (k == "__metadata__")
      out.metadata = parse_metadata(path, v);
    else
      out.entries.push_back(parse_entry(path, k, v));
  }
  const uint64_t data_size = size - 8 - n;
  check_layout(path, out.entries, data_size);
  out.data.resize(data_size);
  if (data_size && !f.read(out.data.data(), static_cast<std::streamsize>(data_size)))
    fail(path, "truncated: could not read " + std::to_string(data_size) + " data bytes");
  return out;
}

// ---- writing
// ---------------------------------------------------------------------------------------

struct Blob {
  std::string name;
  ScalarType dtype;
  Shape shape;
  Tensor buffer;  // a realized contiguous tensor: holds the bytes alive
  size_t nbytes;
};

// A realized, contiguous tensor with t's elements (t itself when it is a buffer of its own).
Tensor contiguous_buffer(const Tensor& t) {
  if (t.is_realized()) return t;
  Tensor c = t.clone();
  c.realize();
  return c;
}

void check_not_capturing(const char* what) {
  if (jit_capturing())
    throw Error(std::string(what) + ": checkpoint I/O inside a jit capture is not allowed");
}

}  // namespace

const char* safetensors_dtype(ScalarType t) { return st_dtype(t); }

void throw_safetensors_error(const std::string& path, const std::string& what) { fail(path, what); }

void save(const NamedTensors& tensors, const std::string& path, const Metadata& metadata) {
  check_not_capturing("save");
  std::set<std::string> names;
  std::vector<Tensor> all;
  for (auto& [name, t] : tensors) {
    if (name == "__metadata__") fail(path, "'__metadata__' cannot be a tensor name");
    if (!names.insert(name).second) fail(path, "tensor name '" + name + "' appears twice");
    if (!t.defined()) fail(path, "tensor '" + name + "' is undefined");
    all.push_back(t);
  }
  realize(all);
  std::vector<Blob> blobs;
  uint64_t offset = 0;
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json m = ordered_json::object();
    for (auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = std::move(m);
  }
  for (auto& [name, t] : tensors) {
    Blob b{name, t.dtype(), t.sizes(), contiguous_buffer(t), 0};
    b.nbytes = static_cast<size_t>(t.numel()) * element_size(t.dtype());
    header[name] = {{"dtype", st_dtype(b.dtype)},
                    {"shape", b.shape},
                    {"data_offsets", {offset, offset + static_cast<uint64_t>(b.nbytes)}}};
    offset += b.nbytes;
    blobs.push_back(std::move(b));
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    fail(path, "a tensor name or metadata string is not valid UTF-8");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char len[8];
  for (int i = 0; i < 8; i++) len[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));
  std::vector<std::string_view> parts{{reinterpret_cast<const char*>(len), 8}, text};
  for (auto& b : blobs)
    if (b.nbytes) parts.emplace_back(static_cast<const char*>(b.buffer.data_ptr()), b.nbytes);
  support::write_file_atomic(path, parts, "safetensors file '" + path + "': ");
}

TensorFile load_file(const std::string& path) {
  Parsed p = read_file(path);
  TensorFile out;
  out.metadata = std::move(p.metadata);
  for (auto& e : p.entries) {
    const char* src = p.data.data() + e.begin;
    Tensor t;
    if (e.dtype == kBool) {
      std::vector<uint8_t> b(src, src + (e.end - e.begin));
      for (auto& x : b) x = x != 0;
      t = from_blob(b.data(), e.shape, kBool);
    } else {
      t = from_blob(src, e.shape, e.dtype);
    }
    out.tensors.emplace_back(e.name, std::move(t));
  }
  return out;
}

Metadata load_into(const NamedTensors& targets, const std::string& path,
                   const std::function<void(const Metadata&)>& validate) {
  check_not_capturing("load");
  Parsed p = read_file(path);

  // 1. Validate everything: names, dtypes, shapes, the caller's metadata check, and that every
  //    target is a realized buffer we can write into.
  std::map<std::string, const Entry*> by_name;
  for (auto& e : p.entries) by_name[e.name] = &e;
  std::set<std::string> wanted;
  std::vector<std::string> missing, unexpected;
  for (auto& [name, t] : targets) {
    if (!wanted.insert(name).second)
      throw ValueError("load: target name '" + name + "' appears twice");
    if (!by_name.count(name)) missing.push_back(name);
  }
  for (auto& e : p.entries)
    if (!wanted.count(e.name)) unexpected.push_back(e.name);
  if (!missing.empty() || !unexpected.empty()) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size() && i < 8; i++) s += (i ? ", '" : "'") + v[i] + "'";
      if (v.size() > 8) s += ", ... (" + std::to_string(v.size()) + " in all)";
      return s;
    };
    std::string msg;
    if (!missing.empty()) msg += "missing key(s) " + list(missing);
    if (!unexpected.empty())
      msg += (msg.empty() ? "" : "; ") + ("unexpected key(s) " + list(unexpected));
    fail(path, msg);
  }
  for (auto& [name, t] : targets) {
    const Entry& e = *by_name.at(name);
    if (e.dtype != t.dtype())
      fail(path, "tensor '" + name + "': dtype mismatch: file has " + st_dtype(e.dtype) +
                     ", the tensor is " + st_dtype(t.dtype()) + " (" + dtype_name(t.dtype()) + ")");
    if (e.shape != t.sizes())
      fail(path, "tensor '" + name + "': shape mismatch: file has " + support::shape_str(e.shape) +
                     ", the tensor is " + support::shape_str(t.sizes()));
  }
  if (validate) validate(p.metadata);
  std::vector<Tensor> all;
  for (auto& [name, t] : targets) all.push_back(t);
  realize(all);  // pending in-place updates land first; values are replaced below
  for (auto& [name, t] : targets) {
    if (!t.is_realized())
      throw ValueError("load: tensor '" + name +
                       "' is not a realized buffer (a view?); load into the tensor that owns it");
  }

  // 2. Write in place (cannot fail); lazy values built on the old contents keep them.
  overwrite_in_place(all, [&] {
    for (auto& [name, t] : targets) {
      const Entry& e = *by_name.at(name);
      const size_t nbytes = e.end - e.begin;
      if (!nbytes) continue;
      char* dst = static_cast<char*>(t.data_ptr());
      std::memcpy(dst, p.data.data() + e.begin, nbytes);
      if (e.dtype == kBool)
        for (size_t i = 0; i < nbytes; i++) dst[i] = dst[i] != 0;
    }
  });
  return std::move(p.metadata);
}

}  // namespace ember

// One 2-d convolution, float32, paired in one process: ember (conv2d with bias under ember::jit,
// a replay per call, as `ember onnx run` times a network) against oneDNN's convolution primitive
// (forward inference, direct algorithm, with the layouts oneDNN prefers: the input and weights
// are reordered to them once, outside the timing, as an inference engine keeps them). Used by
// scripts/onnx_bench.py for each network's largest layer, and for the machine's measured peak.
//
// Usage:
//   bench_conv_paired peak [--threads T]
//     {"isa", "threads", "peak_gflops"}: bench/peak.h at $EMBER_ISA (else the CPU's best level).
//   bench_conv_paired conv --input N,C,H,W --weight O,I,KH,KW [--stride S] [--pad P]
//                          [--group G] [--threads T] [--rounds R] [--reps K]
//     {"flops", "ember_ms", "onednn_ms", "ratio", "check", "onednn_impl", ...}: each round times a
//     batch of K calls of each (after 3 warm-up calls), ember first on even rounds; a batch's
//     median counts; ember_ms and onednn_ms are medians over the R rounds, ratio the median of the
//     per-round ember / oneDNN. check: the largest |ember - oneDNN| / (1 + |oneDNN|); over 1e-3
//     the run fails (exit 1). Stride and padding apply to both spatial dims, dilation is 1.
// EMBER_BENCH_CPU_TIME=1 times both by the process's CPU time (one thread) instead of the wall
// clock. Bad arguments print the usage and a reason and exit 2. The caller holds oneDNN to ember's
// ISA level with $DNNL_MAX_CPU_ISA (bench/run.sh's pairs of levels).
#include <omp.h>

#include <ember/ember.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dnnl.hpp>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/build_info.h"
#include "ember/support/clock.h"
#include "host_data.h"
#include "peak.h"

namespace {

const char* kUsage =
    "usage: bench_conv_paired peak [--threads T]\n"
    "       bench_conv_paired conv --input N,C,H,W --weight O,I,KH,KW [--stride S] [--pad P]\n"
    "                              [--group G] [--threads T] [--rounds R] [--reps K]\n";

struct Args {
  std::string mode;
  std::vector<int64_t> input, weight;
  int64_t stride = 1, pad = 0, group = 1;
  int threads = 1, rounds = 7, reps = 5;
};

int64_t positive(const std::string& flag, const std::string& text) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || v < 0 || (v == 0 && flag != "--pad"))
    throw std::invalid_argument(flag + " " + text + ": expected a " +
                                (flag == "--pad" ? "non-negative" : "positive") + " integer");
  return v;
}

std::vector<int64_t> dims4(const std::string& flag, const std::string& text) {
  std::vector<int64_t> d;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    d.push_back(positive(flag, text.substr(start, comma - start)));
    start = comma + 1;
  }
  if (d.size() != 4) throw std::invalid_argument(flag + " " + text + ": expected 4 sizes");
  return d;
}

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) throw std::invalid_argument("no mode (peak or conv)");
  a.mode = argv[1];
  if (a.mode != "peak" && a.mode != "conv")
    throw std::invalid_argument("unknown mode '" + a.mode + "' (peak or conv)");
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string v = argv[i + 1];
    if (flag == "--threads")
      a.threads = static_cast<int>(positive(flag, v));
    else if (a.mode == "peak")
      throw std::invalid_argument("peak takes only --threads, not " + flag);
    else if (flag == "--input")
      a.input = dims4(flag, v);
    else if (flag == "--weight")
      a.weight = dims4(flag, v);
    else if (flag == "--stride")
      a.stride = positive(flag, v);
    else if (flag == "--pad")
      a.pad = positive(flag, v);
    else if (flag == "--group")
      a.group = positive(flag, v);
    else if (flag == "--rounds")
      a.rounds = static_cast<int>(positive(flag, v));
    else if (flag == "--reps")
      a.reps = static_cast<int>(positive(flag, v));
    else
      throw std::invalid_argument("unknown option " + flag);
  }
  if (a.mode == "peak") return a;
  if (a.input.empty() || a.weight.empty())
    throw std::invalid_argument("conv needs --input and --weight");
  if (a.input[1] != a.weight[1] * a.group || a.weight[0] % a.group != 0)
    throw std::invalid_argument("input channels " + std::to_string(a.input[1]) +
                                " must be weight's " + std::to_string(a.weight[1]) + " x group " +
                                std::to_string(a.group) +
                                ", and the output channels a multiple of the group");
  for (int d : {2, 3})
    if (a.input[d] + 2 * a.pad < a.weight[d])
      throw std::invalid_argument("the window is larger than the padded input");
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds on the wall clock, or with EMBER_BENCH_CPU_TIME set the process's CPU time: on a
// machine shared with builds, time-slicing inflates wall time (oneDNN's 2.4 ms stem read 2.4-7 ms
// between rounds) where one thread's CPU time stays near it (2.4-2.9 ms).
double bench_now() {
  if (!getenv("EMBER_BENCH_CPU_TIME")) return ember::support::now_seconds();
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

double batch_ms(int reps, const std::function<void()>& call) {
  for (int i = 0; i < 3; i++) call();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    const double t0 = bench_now();
    call();
    t.push_back((bench_now() - t0) * 1e3);
  }
  return median(t);
}

// oneDNN's convolution on the same data: the primitive and its memories in its preferred layouts.
struct OneDnnConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::memory dst_plain;
  std::string impl;

  OneDnnConv(const Args& a, int64_t oh, int64_t ow, std::vector<float>& x, std::vector<float>& w,
             std::vector<float>& b, std::vector<float>& y) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t g = a.group, o = a.weight[0];
    const dnnl::memory::dims src{a.input[0], a.input[1], a.input[2], a.input[3]},
        dst{a.input[0], o, oh, ow}, bias{o}, st{a.stride, a.stride}, pd{a.pad, a.pad};
    const dnnl::memory::dims wd =
        g == 1 ? dnnl::memory::dims{o, a.weight[1], a.weight[2], a.weight[3]}
               : dnnl::memory::dims{g, o / g, a.weight[1], a.weight[2], a.weight[3]};
    const dnnl::memory::desc any_src(src, dt::f32, tag::any), any_w(wd, dt::f32, tag::any),
        any_dst(dst, dt::f32, tag::any), bias_md(bias, dt::f32, tag::x);
    const dnnl::convolution_forward::primitive_desc pdesc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, any_src, any_w,
                                        bias_md, any_dst, st, pd, pd),
        eng);
    impl = pdesc.impl_info_str();
    conv = dnnl::convolution_forward(pdesc);
    dnnl::memory x_plain({src, dt::f32, tag::nchw}, eng, x.data());
    dnnl::memory w_plain({wd, dt::f32, g == 1 ? tag::oihw : tag::goihw}, eng, w.data());
    dnnl::memory xs(pdesc.src_desc(), eng), ws(pdesc.weights_desc(), eng),
        ys(pdesc.dst_desc(), eng);
    dnnl::reorder(x_plain, xs).execute(strm, x_plain, xs);
    dnnl::reorder(w_plain, ws).execute(strm, w_plain, ws);
    strm.wait();
    args = {{DNNL_ARG_SRC, xs},
            {DNNL_ARG_WEIGHTS, ws},
            {DNNL_ARG_BIAS, dnnl::memory(bias_md, eng, b.data())},
            {DNNL_ARG_DST, ys}};
    dst_plain = dnnl::memory({dst, dt::f32, tag::nchw}, eng, y.data());
  }
  void run() {
    conv.execute(strm, args);
    strm.wait();
  }
  void read_out() {  // into y, in NCHW
    dnnl::reorder(args[DNNL_ARG_DST], dst_plain).execute(strm, args[DNNL_ARG_DST], dst_plain);
    strm.wait();
  }
};

int run_conv(const Args& a) {
  const int64_t n = a.input[0], o = a.weight[0];
  const int64_t oh = (a.input[2] + 2 * a.pad - a.weight[2]) / a.stride + 1;
  const int64_t ow = (a.input[3] + 2 * a.pad - a.weight[3]) / a.stride + 1;
  const auto count = [](const std::vector<int64_t>& d) { return d[0] * d[1] * d[2] * d[3]; };
  std::vector<float> x = host_data(count(a.input), 1), w = host_data(count(a.weight), 2),
                     b = host_data(o, 3), y(static_cast<size_t>(n * o * oh * ow));
  OneDnnConv ref(a, oh, ow, x, w, b, y);

  ember::NoGradGuard no_grad;
  ember::Tensor xt = ember::from_blob(x.data(), a.input, ember::kFloat32),
                wt = ember::from_blob(w.data(), a.weight, ember::kFloat32),
                bt = ember::from_blob(b.data(), {o}, ember::kFloat32);
  ember::realize({xt, wt, bt});
  ember::Jit conv([&](const std::vector<ember::Tensor>& in) {
    return std::vector<ember::Tensor>{
        ember::conv2d(in[0], in[1], in[2], {a.stride, a.stride}, {a.pad, a.pad}, {1, 1}, a.group)};
  });
  ember::Tensor out;
  auto ember_call = [&] { out = conv({xt, wt, bt})[0].realize(); };
  std::vector<double> te, td, ratio;
  for (int r = 0; r < a.rounds; r++) {
    double e = 0, d = 0;
    if (r % 2 == 0) e = batch_ms(a.reps, ember_call);
    d = batch_ms(a.reps, [&] { ref.run(); });
    if (r % 2 == 1) e = batch_ms(a.reps, ember_call);
    te.push_back(e), td.push_back(d), ratio.push_back(e / d);
  }
  ref.read_out();
  const std::vector<float> got = out.to_vector<float>();
  double check = 0;
  for (size_t i = 0; i < y.size(); i++)
    check = std::max(check, std::fabs(double(got[i]) - y[i]) / (1 + std::fabs(double(y[i]))));
  const double flops =
      2.0 * double(n * o * oh * ow) * double(a.weight[1] * a.weight[2] * a.weight[3]);
  const char* dn = std::getenv("DNNL_MAX_CPU_ISA");
  std::printf(
      "{\"isa\": \"%s\", \"dnnl_max_cpu_isa\": \"%s\", \"threads\": %d, \"output\": [%lld, %lld, "
      "%lld, %lld], \"flops\": %.0f, \"ember_ms\": %.4f, \"onednn_ms\": %.4f, \"ratio\": %.4f, "
      "\"check\": %.3g, \"jit_replays\": %lld, \"onednn_impl\": \"%s\"}\n",
      ember::build_info().isa.c_str(), dn ? dn : "", a.threads, static_cast<long long>(n),
      static_cast<long long>(o), static_cast<long long>(oh), static_cast<long long>(ow), flops,
      median(te), median(td), median(ratio), check, static_cast<long long>(conv.replays()),
      ref.impl.c_str());
  if (!(check <= 1e-3)) {
    std::fprintf(stderr, "bench_conv_paired: ember and oneDNN differ by %.3g (over 1e-3)\n", check);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bench_conv_paired: %s\n%s", e.what(), kUsage);
    return 2;
  }
  ember::set_num_threads(a.threads);
  omp_set_num_threads(a.threads);
  if (a.mode == "peak") {
    const std::string level = ember::build_info().isa;
    std::printf("{\"isa\": \"%s\", \"threads\": %d, \"peak_gflops\": %.2f}\n", level.c_str(),
                a.threads, ember::bench::measured_peak_gflops(level, a.threads));
    return 0;
  }
  return run_conv(a);
}

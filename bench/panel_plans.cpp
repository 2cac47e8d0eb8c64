// Two plans of each product whose row operand is read transposed, in one process (issue 42):
// ResNet-18's convolutions' cols^T W^T (3x3 at batch 1 and 8, two layers; the 7x7 stem) and weight
// gradients dz^T h (the step's, and with a column count that packs h). Plans are plan_text lines
// (codegen/plan_text.h), so that plans another build's heuristic chose can be timed by this one.
//   bench_panel_plans print > FILE       the heuristic's plan of each case, one line each
//   bench_panel_plans time A B [rounds] [threads]
//                                        each case's plans from files A and B, launched in turn
//                                        (A B, B A, ...), 2 + 7 launches each round, median of
//                                        the 7; the calling thread's CPU time at 1 thread (the
//                                        default; use it on a loaded machine), else the least
//                                        wall-clock time of the 7; medians and the median
//                                        per-round B/A.
//                                        A line "-" leaves its case out.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel_plan.h"
#include "codegen/plan_text.h"
#include "ember/ember.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/target.h"
#include "schedule/schedule.h"

namespace {

using namespace ember;

struct Case {
  std::string name;
  std::function<Tensor()> product;
};

Tensor in(IntList shape) { return randn(shape).realize(); }

// A convolution's product cols^T W^T: rows (positions) x cols (output channels), K deep.
Case conv_case(const char* name, int64_t rows, int64_t cols, int64_t k) {
  return {name, [=] { return matmul(in({k, rows}).t(), in({cols, k}).t()); }};
}

// A pointwise convolution's product W x: rows (output channels) x cols (positions), K deep, per
// image of the batch (none at batch 1).
Case short_case(const char* name, int64_t batch, int64_t rows, int64_t cols, int64_t k) {
  return {name, [=] {
            return matmul(in({rows, k}), batch > 1 ? in({batch, k, cols}) : in({k, cols}));
          }};
}

// A bottleneck's expansion W x + bias + residual, then ReLU (ResNet's conv3 with its epilogue).
Case expansion_case(const char* name, int64_t batch, int64_t rows, int64_t cols, int64_t k) {
  return {name, [=] {
            const Tensor x = batch > 1 ? in({batch, k, cols}) : in({k, cols});
            const Tensor res = batch > 1 ? in({batch, rows, cols}) : in({rows, cols});
            return (matmul(in({rows, k}), x) + in({rows, 1}) + res).relu();
          }};
}

std::vector<Case> cases() {
  return {
      {"conv b1 r_3136_64_576",
       [] {
         return matmul(in({576, 3136}).t(), in({64, 576}).t());
       }},
      {"conv b8 r_25088_64_576",
       [] {
         return matmul(in({576, 25088}).t(), in({64, 576}).t());
       }},
      {"conv stem b1 r_12544_64_147",
       [] {
         return matmul(in({147, 12544}).t(), in({64, 147}).t());
       }},
      {"conv b1 r_784_128_1152",
       [] {
         return matmul(in({1152, 784}).t(), in({128, 1152}).t());
       }},
      {"dz^T h 128x128x10000",
       [] {
         return matmul(in({10000, 128}).t(), in({10000, 128}));
       }},
      {"dz^T h 129x127x10001",
       [] {
         return matmul(in({10001, 129}).t(), in({10001, 127}));
       }},
      {"(2dz-1)^T h 129x127x10001",
       [] {
         return matmul((in({10001, 129}) * 2 - 1).t(), in({10001, 127}));
       }},
      {"x^T W^T 10001x128x128",
       [] {
         return matmul(in({128, 10001}).t(), in({128, 128}).t());
       }},
      // ResNet-18's deep layers at batch 1: few rows (7x7, 14x14 maps), a large weight; and the
      // layer4 3x3 at batch 8.
      conv_case("conv b1 r_49_512_4608", 49, 512, 4608),
      conv_case("conv b1 r_196_256_2304", 196, 256, 2304),
      conv_case("conv b1 r_49_512_2304", 49, 512, 2304),
      conv_case("conv b1 r_196_256_1152", 196, 256, 1152),
      conv_case("conv b8 r_392_512_4608", 392, 512, 4608),
      // The same with the weight [K, OC], read in place (prod_shapes.py's layout).
      {"cols^T W r_49_512_4608",
       [] {
         return matmul(in({4608, 49}).t(), in({4608, 512}));
       }},
      // BERT-mini's feed-forward output x W at batch 1 (sequence 64): 64 rows, K = 1024.
      {"bert b1 r_64_256_1024",
       [] {
         return matmul(in({64, 1024}), in({1024, 256}));
       }},
      // MobileNets' pointwise convolutions with a short reduce, W x (channels-first) per image.
      short_case("mbv2 b8 r_8_96_12544_16", 8, 96, 12544, 16),
      short_case("mbv2 b1 r_96_12544_16", 1, 96, 12544, 16),
      short_case("mbv2 b8 r_8_144_3136_24", 8, 144, 3136, 24),
      short_case("mbv3 b8 r_8_72_3136_16", 8, 72, 3136, 16),
      short_case("stem-like b8 r_8_32_12544_27", 8, 32, 12544, 27),
      // ResNet-50's bottleneck expansions (K = 64, 256 -> 4x the channels) at batch 1 and 8.
      expansion_case("r50 b1 r_256_3136_64", 1, 256, 3136, 64),
      expansion_case("r50 b8 r_8_256_3136_64", 8, 256, 3136, 64),
      expansion_case("r50 b1 r_1024_196_256", 1, 1024, 196, 256),
      expansion_case("r50 b8 r_8_1024_196_256", 8, 1024, 196, 256),
      expansion_case("r50 b1 r_2048_49_512", 1, 2048, 49, 512),
      expansion_case("r50 b1 r_64_3136_64", 1, 64, 3136, 64),
      // ResNet-50's bottleneck reductions (1x1, 256 -> 64 and 128 at 56x56): few rows, a deep K
      // over columns read in place, 12.5 KB apart along k.
      short_case("r50 b1 r_64_3136_256", 1, 64, 3136, 256),
      short_case("r50 b1 r_128_3136_256", 1, 128, 3136, 256),
      short_case("r50 b8 r_8_64_3136_256", 8, 64, 3136, 256),
      // The stems' few-channel products W @ cols (convolution.cpp's few_channels_product):
      // MobileNetV3's 16x3x3x3 and ResNet's 64x3x7x7, stride 2 at 224x224.
      short_case("mbv3 stem b1 r_16_12544_27", 1, 16, 12544, 27),
      short_case("mbv3 stem b8 r_8_16_12544_27", 8, 16, 12544, 27),
      short_case("resnet stem b1 r_64_12544_147", 1, 64, 12544, 147),
      // 3x3 convolutions' channel-major cols^T W^T past 64 output channels: ResNet's 28x28x128
      // at batch 8, SqueezeNet's 27x27 Fire expansion (32 -> 128 channels).
      conv_case("conv b8 r_6272_128_1152", 6272, 128, 1152),
      conv_case("squeezenet b1 r_729_128_288", 729, 128, 288),
  };
}

// The product's kernel: the last one the realize of `y` would launch.
schedule::Kernel product_kernel(const Tensor& y) {
  const schedule::NameBuffer name = [](const ir::Node& n) {
    return static_cast<schedule::BufferName>(ir::buffer_id(n));
  };
  auto items = schedule::create_schedule({{y.node().get(), 0}}, name).items;
  return schedule::simplify(items.back().kernel);
}

// The calling thread's CPU time, or with more than one thread the wall-clock time.
int g_threads = 1;
double now_ms() {
  timespec t{};
  clock_gettime(g_threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<std::string> lines(const char* path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// The median of 7 timed launches (after 2 untimed) of `p` on `bufs`; with more than one thread
// the least (wall-clock time on a shared machine: the launches other processes interrupted least).
double time_launches(const runtime::Program& p, std::vector<void*>& bufs) {
  std::vector<double> v;
  for (int i = 0; i < 9; i++) {
    const double t0 = now_ms();
    p.launch(bufs.data());
    if (i >= 2) v.push_back(now_ms() - t0);
  }
  return g_threads > 1 ? *std::min_element(v.begin(), v.end()) : median(v);
}

int time_pairs(const char* fa, const char* fb, int rounds) {
  const auto a = lines(fa), b = lines(fb);
  const auto cs = cases();
  for (size_t c = 0; c < cs.size() && c < a.size() && c < b.size(); c++) {
    if (a[c] == "-" || b[c] == "-") continue;  // a case left out
    manual_seed(3);
    const schedule::Kernel k = product_kernel(cs[c].product());
    std::vector<std::vector<float>> store;
    std::vector<void*> bufs;
    for (const auto& kb : k.buffers) store.emplace_back(static_cast<size_t>(kb.numel), 0.5f);
    for (auto& s : store) bufs.push_back(s.data());
    std::shared_ptr<runtime::Program> p[2];
    const std::string* text[2] = {&a[c], &b[c]};
    for (int i = 0; i < 2; i++) {
      p[i] = runtime::prepare_cpu_program(k, *codegen::plan_from_text(*text[i]));
      runtime::cpu_device().build({p[i]});
    }
    std::vector<double> t[2], ratio;
    for (int r = 0; r < rounds; r++) {
      double got[2];
      for (int j = 0; j < 2; j++) {
        const int i = (r + j) % 2;  // A B, then B A
        got[i] = time_launches(*p[i], bufs);
      }
      for (int i = 0; i < 2; i++) t[i].push_back(got[i]);
      ratio.push_back(got[1] / got[0]);
    }
    std::printf("%-28s A %9.3f ms  B %9.3f ms  B/A %.2fx (min %.2f, max %.2f)\n",
                cs[c].name.c_str(), median(t[0]), median(t[1]), median(ratio),
                *std::min_element(ratio.begin(), ratio.end()),
                *std::max_element(ratio.begin(), ratio.end()));
    std::printf("  A %s\n  B %s\n", a[c].c_str(), b[c].c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g_threads = argc > 5 ? std::max(1, std::atoi(argv[5])) : 1;
  set_num_threads(g_threads);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "print") {
    manual_seed(3);
    for (const Case& c : cases())
      std::printf("%s\n", codegen::plan_text(
                              codegen::plan(product_kernel(c.product()), runtime::host_target()))
                              .c_str());
    return 0;
  }
  if (mode == "time" && argc >= 4)
    return time_pairs(argv[2], argv[3], argc > 4 ? std::atoi(argv[4]) : 7);
  std::fprintf(stderr, "usage: %s print | time A B [rounds]\n", argv[0]);
  return 2;
}

// bench_ops: kernel benchmark (CPU, or CUDA with --device cuda). Every op is first checked against a plain reference
// (naive double-precision loops: dot products for SGEMM, a direct convolution and its
// gradients for conv2d and conv_transpose2d, scalar loops for the element-wise ops and
// sum); only then is it timed (best of --repeat runs); a row that fails its check is reported
// as failed, not timed, and the run goes on (exit status 1 at the end). Prints a table, and with
// --json one JSON object as the last stdout line (bench/compare_ops.py reads it and runs the
// same ops in PyTorch).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include "common/device.h"
#include "common/tolerance.h"
#include "core/native/activation.h"
#include "core/native/conv2d.h"
#include <gradring/gradring.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using gr::Tensor;

// Where the timed ops run (--device); references and checks always run on the CPU.
gr::Device g_device;
Tensor dev(const Tensor& t) { return t.defined() ? t.to(g_device) : t; }
Tensor host(const Tensor& t) { return t.defined() ? t.to(gr::Device(gr::kCPU)) : t; }
// Waits for the GPU's queued work (kernels are asynchronous), so a timing covers it.
void sync() {
  if (g_device.is_cuda()) gr::cuda::synchronize(g_device.index());
}

// One benchmark: `check` returns the largest relative error against the reference and
// the tolerance it must stay under; `run` is what gets timed; `work` is FLOPs or bytes.
struct Bench {
  std::string op, shape;
  std::function<std::pair<double, double>()> check;
  std::function<void()> run;
  double work;
  bool bytes;  // work counts bytes moved (GB/s), else FLOPs (GFLOP/s)
};

struct Result {
  std::string op, shape;
  double ms, rate, max_err;
  bool bytes;
};

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best of `repeat` runs after one warm-up; quick ops run more often (up to ~0.3 s).
double best_ms(const std::function<void()>& run, int repeat) {
  run();
  sync();
  double best = 1e30, total = 0;
  for (int i = 0; i < repeat || (total < 0.3 && i < 50 * repeat); ++i) {
    const double t0 = seconds();
    run();
    sync();
    const double dt = seconds() - t0;
    best = std::min(best, dt);
    total += dt;
  }
  return best * 1e3;
}

Tensor rnd(std::vector<int64_t> shape, uint64_t seed) {
  gr::Generator g(seed);
  return gr::randn(shape, gr::TensorOptions(gr::kFloat32), &g);
}

const float* f32(const Tensor& t) { return t.data_ptr<float>(); }

// ---- SGEMM: C = op(A) B, checked on sampled entries against double dot products ----
// M x N x K; with trans_a, A is stored K x M and read transposed (a weight gradient dY^T X).
Bench sgemm(int64_t M, int64_t N, int64_t K, bool trans_a, const std::string& label) {
  Tensor a = rnd(trans_a ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, 1), b = rnd({K, N}, 2);
  Tensor da = dev(a), db = dev(b);
  auto product = [=] { return gr::mm(trans_a ? da.t() : da, db); };
  auto check = [=] {
    Tensor c = host(product());
    const int64_t samples = M * N <= 65536 ? M * N : 4096;
    gr::Generator g(3);
    Tensor idx = gr::randint(0, M * N, {samples}, gr::kInt64, &g);
    double worst = 0;
    for (int64_t s = 0; s < samples; ++s) {
      const int64_t e = M * N <= 65536 ? s : idx.data_ptr<int64_t>()[s], i = e / N, j = e % N;
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double x = double(f32(a)[trans_a ? k * M + i : i * K + k]) * f32(b)[k * N + j];
        ref += x;
        mag += std::abs(x);
      }
      worst = std::max(worst, std::abs(f32(c)[e] - ref) / mag);
    }
    return std::make_pair(worst, 1e-5);
  };
  return {"sgemm", label, check, [=] { product(); }, 2.0 * M * N * K, false};
}
// ---- bfloat16 GEMM (bfloat16 operands and result, float accumulation): train_gpt's
// linear products under --dtype bf16, checked like sgemm with one bfloat16 rounding allowed.
// A is stored K x M when trans_a, B N x K when trans_b (linear's weight in the forward).
Bench bgemm(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, const std::string& label) {
  auto bf16 = [](const Tensor& t) { return t.to(gr::kBFloat16); };
  Tensor a = bf16(rnd(trans_a ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, 1));
  Tensor b = bf16(rnd(trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, 2));
  Tensor da = dev(a), db = dev(b);
  auto product = [=] { return gr::mm(trans_a ? da.t() : da, trans_b ? db.t() : db); };
  auto check = [=] {
    Tensor c = host(product()).to(gr::kFloat32), a32 = a.to(gr::kFloat32), b32 = b.to(gr::kFloat32);
    double worst = 0;
    for (int64_t e = 0; e < M * N; e += std::max<int64_t>(1, M * N / 4096)) {
      const int64_t i = e / N, j = e % N;
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double x = double(f32(a32)[trans_a ? k * M + i : i * K + k]) * f32(b32)[trans_b ? j * K + k : k * N + j];
        ref += x;
        mag += std::abs(x);
      }
      worst = std::max(worst, std::abs(f32(c)[e] - ref) / mag);
    }
    return std::make_pair(worst, 4e-3);  // half a bfloat16 step (2^-8 relative) plus the float sums
  };
  return {"bgemm", label, check, [=] { product(); }, 2.0 * M * N * K, false};
}

Bench sgemm(int64_t n) {
  const std::string s = std::to_string(n);
  return sgemm(n, n, n, false, s + "x" + s + "x" + s);
}

// ---- conv2d (stride 1, no padding), checked against a direct convolution in double ----
struct ConvShape {
  const char* label;
  int64_t N, C, H, W, O, k;
  bool bias, input_grad;
};

struct DirectConv {  // y, and gx, gw, gb for a given gy
  std::vector<double> y, gx, gw, gb;
};
DirectConv direct_conv(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& gy) {
  const int64_t Ho = s.H - s.k + 1, Wo = s.W - s.k + 1;
  DirectConv r{std::vector<double>(s.N * s.O * Ho * Wo), std::vector<double>(s.N * s.C * s.H * s.W),
               std::vector<double>(s.O * s.C * s.k * s.k), std::vector<double>(s.O)};
  const float *px = f32(x), *pw = f32(w), *pb = b.defined() ? f32(b) : nullptr, *pg = f32(gy);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t o = 0; o < s.O; ++o)
      for (int64_t c = 0; c < s.C; ++c)
        for (int64_t i = 0; i < s.k; ++i)
          for (int64_t j = 0; j < s.k; ++j) {
            const int64_t wi = ((o * s.C + c) * s.k + i) * s.k + j;
            const double wv = pw[wi];
            double gw = 0;
            for (int64_t h = 0; h < Ho; ++h)
              for (int64_t v = 0; v < Wo; ++v) {
                const int64_t yi = ((n * s.O + o) * Ho + h) * Wo + v, xi = ((n * s.C + c) * s.H + h + i) * s.W + v + j;
                r.y[yi] += px[xi] * wv;
                r.gx[xi] += pg[yi] * wv;
                gw += pg[yi] * double(px[xi]);
              }
            r.gw[wi] += gw;
          }
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t o = 0; o < s.O; ++o)
      for (int64_t p = 0; p < Ho * Wo; ++p) {
        const int64_t yi = (n * s.O + o) * Ho * Wo + p;
        r.y[yi] += pb ? pb[o] : 0.0;
        r.gb[o] += pg[yi];
      }
  return r;
}

// Largest |got - ref| relative to the largest |ref|: a convolution's validation passes when
// this is at most conv_tol(), i.e. Note [Comparison tolerances]'s rule with rtol 0 and atol
// conv_tol() x the largest |ref| (the error of a float32 convolution follows its output's scale).
double rel_err(const Tensor& got, const std::vector<double>& ref) {
  Tensor c = host(got).contiguous();
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::abs(f32(c)[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return worst / scale;
}

// The tolerance of a convolution pass: 1e-5 of the largest value, but a backward pass (data
// or filter) on CUDA runs cuDNN's algorithm, whose FFT and Winograd variants lose more
// (apps::kCudnnBackwardOfMax states why and what was measured).
double conv_tol(bool backward_pass) { return backward_pass && g_device.is_cuda() ? gr::apps::kCudnnBackwardOfMax : 1e-5; }

std::vector<Bench> conv2d(const ConvShape& s) {
  Tensor x = rnd({s.N, s.C, s.H, s.W}, 10), w = rnd({s.O, s.C, s.k, s.k}, 11);
  Tensor b = s.bias ? rnd({s.O}, 12) : Tensor();
  const int64_t Ho = s.H - s.k + 1, Wo = s.W - s.k + 1;
  Tensor gy = rnd({s.N, s.O, Ho, Wo}, 13);
  const double fwd = 2.0 * s.N * s.O * Ho * Wo * s.C * s.k * s.k;
  Tensor dx = dev(x), dw = dev(w), dbias = dev(b), dgy = dev(gy);
  auto train_step = [=]() mutable {
    Tensor xi = s.input_grad ? dx.detach().requires_grad_(true) : dx;
    Tensor wi = dw.detach().requires_grad_(true), bi = s.bias ? dbias.detach().requires_grad_(true) : Tensor();
    gr::conv2d(xi, wi, bi).backward(dgy);
    return std::vector<Tensor>{xi.grad(), wi.grad(), bi.defined() ? bi.grad() : Tensor()};
  };
  auto check_fwd = [=] {
    DirectConv ref = direct_conv(s, x, w, b, gy);
    gr::NoGradGuard no_grad;
    return std::make_pair(rel_err(gr::conv2d(dx, dw, dbias), ref.y), conv_tol(false));
  };
  auto check_bwd = [=]() mutable {
    DirectConv ref = direct_conv(s, x, w, b, gy);
    std::vector<Tensor> g = train_step();
    double err = rel_err(g[1], ref.gw);
    if (s.input_grad) err = std::max(err, rel_err(g[0], ref.gx));
    if (s.bias) err = std::max(err, rel_err(g[2], ref.gb));
    return std::make_pair(err, conv_tol(true));
  };
  const double bwd = fwd * (s.input_grad ? 2 : 1);
  return {{"conv2d_fwd", s.label, check_fwd, [=] {
             gr::NoGradGuard no_grad;
             gr::conv2d(dx, dw, dbias);
           }, fwd, false},
          {"conv2d_fwdbwd", s.label, check_bwd, [=]() mutable { train_step(); }, fwd + bwd, false}};
}

// ---- conv_transpose2d: the input gradient of the conv2d of shape s (its input t is that
// conv's output, its output the conv's input), checked against the same direct convolution:
// conv_transpose2d(t, w) = gx for gy = t; for an upstream gradient u, t's gradient is conv2d(u, w)
// and w's the conv's weight gradient sum(t * u) ----
std::vector<Bench> conv_transpose2d(const ConvShape& s) {
  const int64_t Ho = s.H - s.k + 1, Wo = s.W - s.k + 1;
  Tensor t = rnd({s.N, s.O, Ho, Wo}, 14), w = rnd({s.O, s.C, s.k, s.k}, 11), u = rnd({s.N, s.C, s.H, s.W}, 15);
  const std::string label = std::to_string(s.N) + "x" + std::to_string(s.O) + "x" + std::to_string(Ho) + "x" +
                            std::to_string(Wo) + ",w" + std::to_string(s.O) + "x" + std::to_string(s.C) + "x" +
                            std::to_string(s.k) + "x" + std::to_string(s.k);
  const double fwd = 2.0 * s.N * s.O * Ho * Wo * s.C * s.k * s.k;
  Tensor dt = dev(t), dw = dev(w), du = dev(u);
  auto train_step = [=] {
    Tensor ti = dt.detach().requires_grad_(true), wi = dw.detach().requires_grad_(true);
    gr::conv_transpose2d(ti, wi).backward(du);
    return std::vector<Tensor>{ti.grad(), wi.grad()};
  };
  auto check_fwd = [=] {
    DirectConv ref = direct_conv(s, u, w, Tensor(), t);
    gr::NoGradGuard no_grad;
    return std::make_pair(rel_err(gr::conv_transpose2d(dt, dw), ref.gx), conv_tol(true));  // cuDNN's backward data
  };
  auto check_bwd = [=] {
    DirectConv ref = direct_conv(s, u, w, Tensor(), t);
    std::vector<Tensor> g = train_step();
    return std::make_pair(std::max(rel_err(g[0], ref.y), rel_err(g[1], ref.gw)), conv_tol(true));
  };
  return {{"conv_transpose2d_fwd", label, check_fwd, [=] {
             gr::NoGradGuard no_grad;
             gr::conv_transpose2d(dt, dw);
           }, fwd, false},
          {"conv_transpose2d_fwdbwd", label, check_bwd, [=] { train_step(); }, 3 * fwd, false}};
}

// ---- element-wise and reduction, in GB/s of tensor data read + written ----
std::vector<Bench> elementwise(int64_t n) {
  Tensor a = rnd({n}, 20), b = rnd({n}, 21), da = dev(a), db = dev(b);
  const std::string s = std::to_string(n);
  auto check_map = [=](std::function<Tensor()> f, std::function<double(float, float)> ref) {
    return [=] {
      Tensor c = host(f());
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(f32(c)[i] - ref(f32(a)[i], f32(b)[i])));
      return std::make_pair(worst, 0.0);
    };
  };
  auto check_sum = [=] {
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += f32(a)[i];
      mag += std::abs(f32(a)[i]);
    }
    return std::make_pair(std::abs(da.sum().item<float>() - ref) / mag, 1e-5);
  };
  const double e = sizeof(float) * double(n);
  return {{"add", s, check_map([=] { return da + db; }, [](float x, float y) { return double(x + y); }),
           [=] { da + db; }, 3 * e, true},
          {"relu", s, check_map([=] { return gr::relu(da); }, [](float x, float) { return double(x > 0 ? x : 0); }),
           [=] { gr::relu(da); }, 2 * e, true},
          {"sum", s, check_sum, [=] { da.sum(); }, e, true}};
}

// ---- the breadth ops on a [4096, 1024] float matrix (issue 15's hot kernels, and gelu) ----
// Each is checked against a scalar double loop over the same data; GB/s of tensor data
// read + written (index tensors included).
std::vector<Bench> breadth() {
  const int64_t R = 4096, C = 1024, K = 256;
  Tensor x = rnd({R, C}, 30), src = rnd({R, K}, 31), grad = rnd({R, C}, 32);
  gr::Generator g(33);
  Tensor idx = gr::randint(0, C, {R, K}, gr::kInt64, &g), rows = gr::randint(0, R, {R / 2}, gr::kInt64, &g);
  Tensor mask = gr::rand({R, C}, gr::TensorOptions(gr::kFloat32), &g).lt(0.5);
  Tensor dx = dev(x), dsrc = dev(src), dgrad = dev(grad), didx = dev(idx), drows = dev(rows), dmask = dev(mask);
  const int64_t* ix = idx.data_ptr<int64_t>();
  const int64_t* rw = rows.data_ptr<int64_t>();
  const bool* mk = mask.data_ptr<bool>();
  // The largest |got - ref| / (1 + |ref|) over every element of `out` (row-major).
  auto worst_of = [](const Tensor& out, const std::function<double(int64_t)>& ref) {
    Tensor h = host(out).contiguous();
    double worst = 0;
    for (int64_t e = 0; e < h.numel(); ++e) {
      const double r = ref(e);
      worst = std::max(worst, std::abs(f32(h)[e] - r) / (1 + std::abs(r)));
    }
    return worst;
  };
  auto row_reduce = [=](int64_t r, auto&& step, double init) {
    double acc = init;
    for (int64_t c = 0; c < C; ++c) acc = step(acc, double(f32(x)[r * C + c]));
    return acc;
  };
  const double f = sizeof(float), i64 = sizeof(int64_t), full = double(R) * C, part = double(R) * K;
  const std::string sh = std::to_string(R) + "x" + std::to_string(C);
  std::vector<Bench> b;
  b.push_back({"gather", sh + ",dim1,index" + std::to_string(R) + "x" + std::to_string(K),
               [=] { return std::make_pair(worst_of(dx.gather(1, didx), [=](int64_t e) {
                                              return f32(x)[e / K * C + ix[e]]; }), 0.0); },
               [=] { dx.gather(1, didx); }, part * (2 * f + i64), true});
  b.push_back({"scatter_add", sh + ",dim1,index" + std::to_string(R) + "x" + std::to_string(K),
               [=] {
                 std::vector<double> ref(f32(x), f32(x) + R * C);
                 for (int64_t e = 0; e < R * K; ++e) ref[e / K * C + ix[e]] += f32(src)[e];
                 return std::make_pair(worst_of(dx.scatter_add(1, didx, dsrc), [&](int64_t e) { return ref[e]; }), 1e-6);
               },
               [=] { dx.scatter_add(1, didx, dsrc); }, 2 * full * f + part * (f + i64), true});
  b.push_back({"index_select", sh + ",dim0,index" + std::to_string(R / 2),
               [=] { return std::make_pair(worst_of(dx.index_select(0, drows), [=](int64_t e) {
                                              return f32(x)[rw[e / C] * C + e % C]; }), 0.0); },
               [=] { dx.index_select(0, drows); }, full * f + R / 2 * i64, true});
  b.push_back({"sum_lastdim", sh, [=] { return std::make_pair(worst_of(dx.sum(-1), [=](int64_t r) {
                                           return row_reduce(r, [](double a, double v) { return a + v; }, 0.0); }), 1e-5); },
               [=] { dx.sum(-1); }, full * f, true});
  b.push_back({"amax_lastdim", sh, [=] { return std::make_pair(worst_of(dx.amax(-1), [=](int64_t r) {
                                            return row_reduce(r, [](double a, double v) { return std::max(a, v); }, -1e300); }), 0.0); },
               [=] { dx.amax(-1); }, full * f, true});
  b.push_back({"logsumexp_lastdim", sh, [=] { return std::make_pair(worst_of(dx.logsumexp(-1), [=](int64_t r) {
                                                 return std::log(row_reduce(r, [](double a, double v) { return a + std::exp(v); }, 0.0)); }), 1e-5); },
               [=] { dx.logsumexp(-1); }, full * f, true});
  b.push_back({"softmax_lastdim", sh, [=] {
                 std::vector<double> z(R);  // each row's sum of exp, once
                 for (int64_t r = 0; r < R; ++r) z[r] = row_reduce(r, [](double a, double v) { return a + std::exp(v); }, 0.0);
                 return std::make_pair(worst_of(dx.softmax(-1), [&](int64_t e) {
                   return std::exp(double(f32(x)[e])) / z[e / C]; }), 1e-5); },
               [=] { dx.softmax(-1); }, 2 * full * f, true});
  b.push_back({"masked_fill", sh + ",bool mask", [=] { return std::make_pair(worst_of(dx.masked_fill(dmask, 0.0), [=](int64_t e) {
                                                      return mk[e] ? 0.0 : f32(x)[e]; }), 0.0); },
               [=] { dx.masked_fill(dmask, 0.0); }, full * (2 * f + 1), true});
  auto gelu_ref = [](double v) { return v * 0.5 * (1 + std::erf(v / std::sqrt(2.0))); };
  b.push_back({"gelu_fwd", sh, [=] { return std::make_pair(worst_of(gr::gelu(dx), [=](int64_t e) { return gelu_ref(f32(x)[e]); }), 1e-6); },
               [=] { gr::gelu(dx); }, 2 * full * f, true});
  b.push_back({"gelu_bwd", sh, [=] {
                 return std::make_pair(worst_of(gr::native::gelu_backward(dgrad, dx, "none"), [=](int64_t e) {
                   const double v = f32(x)[e];
                   const double d = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
                   return f32(grad)[e] * d; }), 1e-6); },
               [=] { gr::native::gelu_backward(dgrad, dx, "none"); }, 3 * full * f, true});
  return b;
}

// ---- bool selects and predicates on [4096, 1024] (issue 15: bool read as bytes) ----
// Checked against scalar loops; GB/s of tensor data read + written (bool 1 byte, int64 8).
std::vector<Bench> bool_selects() {
  const int64_t R = 4096, C = 1024;
  Tensor x = rnd({R, C}, 40), y = rnd({R, C}, 41);
  gr::Generator g(42);
  Tensor mask = gr::rand({R, C}, gr::TensorOptions(gr::kFloat32), &g).lt(0.5);
  Tensor other = gr::rand({R, C}, gr::TensorOptions(gr::kFloat32), &g).lt(0.5);
  Tensor dx = dev(x), dy = dev(y), dmask = dev(mask), dother = dev(other), dsparse = dev(x.gt(3.5));
  const bool* mk = mask.data_ptr<bool>();
  const bool* ot = other.data_ptr<bool>();
  std::vector<int64_t> set;  // the flat positions of mask's set elements, in order
  for (int64_t e = 0; e < R * C; ++e)
    if (mk[e]) set.push_back(e);
  const double nnz = double(set.size());
  // The largest |got - ref| over every element of `out` (row-major), as float64.
  auto worst_of = [](const Tensor& out, int64_t numel, const std::function<double(int64_t)>& ref) {
    Tensor h = host(out).to(gr::kFloat64).contiguous();
    if (h.numel() != numel) return 1e30;
    const double* v = h.data_ptr<double>();
    double worst = 0;
    for (int64_t e = 0; e < numel; ++e) worst = std::max(worst, std::abs(v[e] - ref(e)));
    return worst;
  };
  const double f = sizeof(float), i64 = sizeof(int64_t), full = double(R) * C;
  const std::string sh = std::to_string(R) + "x" + std::to_string(C);
  const int64_t n = R * C;
  std::vector<Bench> b;
  b.push_back({"where", sh + ",bool cond", [=] { return std::make_pair(worst_of(gr::where(dmask, dx, dy), n, [=](int64_t e) {
                                                 return mk[e] ? f32(x)[e] : f32(y)[e]; }), 0.0); },
               [=] { gr::where(dmask, dx, dy); }, full * (3 * f + 1), true});
  b.push_back({"where_scalar", sh + ",bool cond", [=] { return std::make_pair(worst_of(gr::where(dmask, dx, 0.0), n, [=](int64_t e) {
                                                        return mk[e] ? f32(x)[e] : 0.0; }), 0.0); },
               [=] { gr::where(dmask, dx, 0.0); }, full * (2 * f + 1), true});
  b.push_back({"logical_and", sh + ",bool", [=] { return std::make_pair(worst_of(dmask.logical_and(dother), n, [=](int64_t e) {
                                                   return double(mk[e] && ot[e]); }), 0.0); },
               [=] { dmask.logical_and(dother); }, 3 * full, true});
  b.push_back({"lt_scalar", sh, [=] { return std::make_pair(worst_of(dx.lt(0.5), n, [=](int64_t e) {
                                       return double(f32(x)[e] < 0.5f); }), 0.0); },
               [=] { dx.lt(0.5); }, full * (f + 1), true});
  b.push_back({"any_lastdim", sh + ",bool", [=] {
                 // The rows of a sparse mask (x > 3.5: about one set element in 4000), so
                 // neither side can stop a row early.
                 return std::make_pair(worst_of(dx.gt(3.5).any(-1), R, [=](int64_t r) {
                   bool a = false;
                   for (int64_t c = 0; c < C; ++c) a = a || f32(x)[r * C + c] > 3.5f;
                   return double(a); }), 0.0); },
               [=] { dsparse.any(-1); }, full, true});
  b.push_back({"nonzero", sh + ",bool", [=] { return std::make_pair(worst_of(dmask.nonzero(), 2 * int64_t(set.size()), [=](int64_t e) {
                                               const int64_t at = set[e / 2];
                                               return double(e % 2 ? at % C : at / C); }), 0.0); },
               [=] { dmask.nonzero(); }, full + nnz * 2 * i64, true});
  b.push_back({"masked_select", sh + ",bool mask", [=] {
                 return std::make_pair(worst_of(dx.masked_select(dmask), int64_t(set.size()), [=](int64_t e) {
                   return f32(x)[set[e]]; }), 0.0); },
               [=] { dx.masked_select(dmask); }, full * (f + 1) + nnz * f, true});
  b.push_back({"masked_scatter", sh + ",bool mask", [=] {
                 std::vector<double> ref(f32(x), f32(x) + n);
                 for (size_t k = 0; k < set.size(); ++k) ref[set[k]] = f32(y)[k];
                 return std::make_pair(worst_of(dx.masked_scatter(dmask, dy), n, [&](int64_t e) { return ref[e]; }), 0.0); },
               [=] { dx.masked_scatter(dmask, dy); }, full * (2 * f + 1) + nnz * f, true});
  return b;
}

const std::vector<std::string> kOps = {"sgemm", "bgemm", "conv2d_fwd", "conv2d_fwdbwd", "conv_transpose2d_fwd",
                                       "conv_transpose2d_fwdbwd", "add", "relu", "sum",
                                       "gather", "scatter_add", "index_select", "sum_lastdim", "amax_lastdim",
                                       "logsumexp_lastdim", "softmax_lastdim", "masked_fill", "gelu_fwd", "gelu_bwd",
                                       "where", "where_scalar", "logical_and", "lt_scalar", "any_lastdim", "nonzero",
                                       "masked_select", "masked_scatter"};

// A filter token selects an op by its full name or its family (the part before the last '_').
bool selected(const std::vector<std::string>& filter, const std::string& op) {
  if (filter.empty()) return true;
  const std::string family = op.substr(0, op.rfind('_'));
  return std::any_of(filter.begin(), filter.end(), [&](const std::string& f) { return f == op || f == family; });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_ops: validate each kernel (CPU, or CUDA with --device cuda) against a reference, then time it (best of N)"};
  int threads = 1, repeat = 10;
  bool json = false;
  std::string ops_arg;
  app.add_option("--threads", threads, "CPU threads (gr::set_num_threads)")->check(CLI::Range(1, 1024));
  app.add_option("--repeat", repeat, "timed runs per op; the best is reported")->check(CLI::Range(1, 100000));
  app.add_option("--ops", ops_arg, "comma-separated ops or families (the name before its last '_'): sgemm, bgemm, conv2d, conv_transpose2d, "
                 "add, relu, sum, gather, scatter, index, amax, logsumexp, softmax, masked, gelu, where, logical, lt, any, nonzero");
  app.add_flag("--json", json, "also print one JSON object as the last line");
  std::string device_spec = "cpu";
  app.add_option("--device", device_spec, "cpu, cuda or cuda:N (without a CUDA device: a notice, then the CPU)")
      ->capture_default_str();
  std::string conv_algorithm = "auto";
  app.add_option("--conv-algorithm", conv_algorithm, "CPU conv2d algorithm: auto, im2col, winograd or direct")
      ->check(CLI::IsMember({"auto", "im2col", "winograd", "direct"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    g_device = gr::apps::pick_device(device_spec, "bench_ops");
  } catch (const gr::Error& e) {
    std::cerr << "bench_ops: " << e.message() << "\n";
    return 2;
  }
  using gr::native::Conv2dCpuAlgorithm;
  gr::native::set_conv2d_cpu_algorithm(conv_algorithm == "im2col"     ? Conv2dCpuAlgorithm::kIm2col
                                       : conv_algorithm == "winograd" ? Conv2dCpuAlgorithm::kWinograd
                                       : conv_algorithm == "direct"   ? Conv2dCpuAlgorithm::kDirect
                                                                      : Conv2dCpuAlgorithm::kAuto);

  std::vector<std::string> filter;
  for (std::stringstream ss(ops_arg); ss.good();) {
    std::string tok;
    std::getline(ss, tok, ',');
    if (tok.empty()) continue;
    if (!std::any_of(kOps.begin(), kOps.end(), [&](const std::string& op) { return selected({tok}, op); })) {
      std::cerr << "bench_ops: --ops: unknown op '" << tok << "'; choose from";
      for (const auto& op : kOps) std::cerr << ' ' << op;
      std::cerr << " (or a family: sgemm, conv2d, conv_transpose2d)\n";
      return 2;
    }
    filter.push_back(tok);
  }
  gr::set_num_threads(threads);

  std::vector<Bench> benches;
  if (selected(filter, "sgemm")) {
    for (int64_t n : {256, 512, 1024, 2048}) benches.push_back(sgemm(n));
    // train_gpt tiny's weight gradients (768 tokens): dW [out, in] = dY^T X, A transposed.
    for (auto [out, in] : {std::pair<int64_t, int64_t>{384, 128}, {128, 128}, {512, 128}, {128, 512}, {256, 128}})
      benches.push_back(sgemm(out, in, 768, true, std::to_string(out) + "x" + std::to_string(in) + "x768,A^T"));
  }
  if (selected(filter, "bgemm")) {
    // train_gpt tiny's products under --dtype bf16 (768 tokens): the forward x W^T, the input
    // gradient dY W and the weight gradient dY^T X of c_attn (128 -> 384) and c_fc (128 -> 512).
    for (auto [out, in] : {std::pair<int64_t, int64_t>{384, 128}, {512, 128}, {128, 512}}) {
      const std::string o = std::to_string(out), i = std::to_string(in);
      benches.push_back(bgemm(768, out, in, false, true, "768x" + o + "x" + i + ",B^T"));
      benches.push_back(bgemm(768, in, out, false, false, "768x" + i + "x" + o));
      benches.push_back(bgemm(out, in, 768, true, false, o + "x" + i + "x768,A^T"));
    }
    benches.push_back(bgemm(1024, 1024, 1024, false, false, "1024x1024x1024"));
  }
  for (const ConvShape& s : {ConvShape{"64x32x13x13,w64x32x3x3", 64, 32, 13, 13, 64, 3, false, true},
                             ConvShape{"mnist.conv1:64x1x28x28,w32x1x3x3,bias", 64, 1, 28, 28, 32, 3, true, false},
                             ConvShape{"mnist.conv2:64x32x13x13,w64x32x3x3,bias", 64, 32, 13, 13, 64, 3, true, true}})
    for (Bench& b : conv2d(s))
      if (selected(filter, b.op)) benches.push_back(std::move(b));
  for (Bench& b : conv_transpose2d(ConvShape{"", 64, 32, 13, 13, 64, 3, false, true}))
    if (selected(filter, b.op)) benches.push_back(std::move(b));
  for (Bench& b : elementwise(int64_t(1) << 22))
    if (selected(filter, b.op)) benches.push_back(std::move(b));
  for (Bench& b : breadth())
    if (selected(filter, b.op)) benches.push_back(std::move(b));
  for (Bench& b : bool_selects())
    if (selected(filter, b.op)) benches.push_back(std::move(b));

  if (g_device.is_cuda())
    std::printf("bench_ops: gradring %s, %s, best of %d\n", gr::kVersion, g_device.str().c_str(), repeat);
  else
    std::printf("bench_ops: gradring %s, %d thread(s), best of %d\n", gr::kVersion, threads, repeat);
  std::printf("%-24s %-42s %10s %16s  %s\n", "op", "shape", "time_ms", "rate", "check (rel err)");
  std::vector<Result> results;
  std::vector<std::pair<std::string, std::string>> failed;  // (row, why): reported, not timed; the run goes on
  for (const Bench& b : benches) {
    std::string why;
    double err = NAN, tol = 0, ms = 0;
    try {
      std::tie(err, tol) = b.check();
      if (const char* t = std::getenv("GRADRING_TEST_FAIL_ROW"); t != nullptr && b.op == t) err = INFINITY;  // a test hook
      if (!(err <= tol)) {
        char text[96];
        std::snprintf(text, sizeof text, "validation: relative error %.3g > %.3g", err, tol);
        why = text;
      } else {
        ms = best_ms(b.run, repeat);
      }
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    if (!why.empty()) {
      std::printf("%-24s %-42s %10s %16s  FAILED %s; not timed\n", b.op.c_str(), b.shape.c_str(), "-", "-", why.c_str());
      std::fflush(stdout);
      failed.emplace_back(b.op + " " + b.shape, why);
      continue;
    }
    const double rate = b.work / (ms * 1e-3) / 1e9;
    std::printf("%-24s %-42s %10.3f %10.1f %-5s  ok (%.1e)\n", b.op.c_str(), b.shape.c_str(), ms, rate,
                b.bytes ? "GB/s" : "GF/s", err);
    std::fflush(stdout);
    results.push_back({b.op, b.shape, ms, rate, err, b.bytes});
  }
  if (json) {
    nlohmann::json out = {{"bench", "bench_ops"},   {"threads", threads}, {"repeat", repeat},
                          {"device", g_device.str()}, {"results", nlohmann::json::array()}};
    for (const Result& r : results)
      out["results"].push_back({{"op", r.op}, {"shape", r.shape}, {"ms", r.ms}, {r.bytes ? "gbps" : "gflops", r.rate},
                                {"max_rel_err", r.max_err}});
    out["failed"] = nlohmann::json::array();
    for (const auto& [row, why] : failed) out["failed"].push_back({{"row", row}, {"error", why}});
    std::cout << out.dump() << std::endl;
  }
  if (failed.empty()) return 0;
  std::fprintf(stderr, "bench_ops: %zu of %zu rows failed (not timed):\n", failed.size(), benches.size());
  for (const auto& [row, why] : failed) std::fprintf(stderr, "  %s: %s\n", row.c_str(), why.c_str());
  return 1;
}

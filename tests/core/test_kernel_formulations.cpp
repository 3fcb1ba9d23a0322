// The per-element formulations the CUDA kernels run (pooling.h's *_at gathers, ArgExtreme's
// tree-order max), checked on the CPU against the CPU kernels, bit for bit: this is the
// arithmetic of cuda_kernels/pooling.cu and reduce.cu, tested where no device is needed.
#include "test_util.h"

#include <cmath>
#include <cstring>
#include <gradring/core/functors.h>
#include <gradring/core/native/pooling/pooling.h>
#include <gradring/core/native/reduce/reduce.h>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

using namespace gr;
namespace N = gr::native;

namespace {

// Random values on a coarse grid (so max windows have ties), in float64 or float32.
Tensor grid_values(std::vector<int64_t> shape, ScalarType t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(rng) * 0.25;
  return tensor(v, kFloat64).reshape(shape).to(t);
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

struct PoolCase {
  std::vector<int64_t> input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;
};

std::string describe(const PoolCase& c) {
  std::ostringstream s;
  s << "input " << IntArrayRef(c.input) << " kernel " << IntArrayRef(c.kernel) << " stride " << IntArrayRef(c.stride)
    << " padding " << IntArrayRef(c.padding) << " dilation " << IntArrayRef(c.dilation) << " ceil " << c.ceil_mode;
  return s.str();
}

const PoolCase kPoolCases[] = {
    {{2, 3, 8, 8}, {2}, {}, {0}, {1}, false},             // the common 2x2 / 2 (the AVX-512 path for float32)
    {{1, 2, 7, 9}, {2}, {}, {0}, {1}, false},             // odd sizes: a last row/column in no window
    {{2, 2, 9, 7}, {3}, {2}, {1}, {1}, false},            // overlapping windows with padding
    {{1, 3, 10, 11}, {3, 2}, {1, 2}, {1, 0}, {1}, true},  // 1-stride rows, ceil mode
    {{1, 1, 12, 13}, {3}, {2}, {1}, {2}, false},          // dilation
    {{2, 1, 5, 6}, {2, 3}, {3, 4}, {1}, {1}, true},       // stride larger than the window
    {{3, 11, 5}, {5, 3}, {1}, {2, 1}, {1, 2}, true},      // 3-D input
};

}  // namespace

TEST_CASE("max_pool2d_at and its gather backward match the CPU kernels bit for bit") {
  for (const PoolCase& c : kPoolCases) {
    for (ScalarType t : {kFloat32, kFloat64}) {
      INFO(describe(c), " ", dtype_name(t));
      Tensor x = grid_values(c.input, t, 11);
      const N::Pool2dGeometry g = N::pool2d_geometry("test", x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      auto [out, idx] = N::max_pool2d_with_indices(x, g);
      Tensor go = grid_values(out.sizes().vec(), t, 12);
      Tensor gi = N::max_pool2d_backward(go, idx, x.sizes(), g);
      dispatch_floating(t, "test", [&]<class T>() {
        const T* px = x.data_ptr<T>();
        const T* pout = out.data_ptr<T>();
        const int64_t* pidx = idx.data_ptr<int64_t>();
        const T* pgo = go.data_ptr<T>();
        const T* pgi = gi.data_ptr<T>();
        int64_t bad = 0;
        for (int64_t p = 0; p < g.planes; ++p) {
          for (int64_t oh = 0; oh < g.oH; ++oh)
            for (int64_t ow = 0; ow < g.oW; ++ow) {
              const int64_t k = (p * g.oH + oh) * g.oW + ow;
              const N::MaxAt<T> m = N::max_pool2d_at(px + p * g.H * g.W, g, oh, ow);
              bad += !same_bits(m.value, pout[k]) || m.index != pidx[k];
            }
          for (int64_t h = 0; h < g.H; ++h)
            for (int64_t w = 0; w < g.W; ++w) {
              const T v = N::max_pool2d_backward_at(pgo + p * g.oH * g.oW, pidx + p * g.oH * g.oW, g, h, w);
              bad += !same_bits(v, pgi[(p * g.H + h) * g.W + w]);
              // CUDA's 32-bit index arithmetic gives the same values.
              const T v32 = N::max_pool2d_backward_at<T, int32_t>(pgo + p * g.oH * g.oW, pidx + p * g.oH * g.oW, g, h, w);
              bad += !same_bits(v32, v);
            }
        }
        CHECK(bad == 0);
      });
    }
  }
}

TEST_CASE("max_pool2d_at: NaN wins and ties keep the first maximum, as the CPU kernel") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor({1.0, 3.0, 3.0, nan, 2.0, 3.0, 0.0, 1.0, 1.0}, kFloat64).reshape({1, 3, 3});
  const N::Pool2dGeometry g = N::pool2d_geometry("test", x, {2}, {1}, {0}, {1}, false);
  auto [out, idx] = N::max_pool2d_with_indices(x, g);
  for (int64_t oh = 0; oh < 2; ++oh)
    for (int64_t ow = 0; ow < 2; ++ow) {
      const N::MaxAt<double> m = N::max_pool2d_at(x.data_ptr<double>(), g, oh, ow);
      const int64_t k = oh * 2 + ow;
      CHECK(m.index == idx.data_ptr<int64_t>()[k]);
      CHECK(same_bits(m.value, out.data_ptr<double>()[k]));
    }
  CHECK(idx.data_ptr<int64_t>()[0] == 3);  // the NaN
  CHECK(idx.data_ptr<int64_t>()[1] == 1);  // 3 at 1 before 3 at 2 and 5
}

TEST_CASE("avg_pool2d_at and its gather backward match the CPU kernels bit for bit") {
  for (const PoolCase& c : kPoolCases) {
    if (c.dilation != std::vector<int64_t>{1}) continue;  // average pooling has no dilation
    for (bool include_pad : {true, false}) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        INFO(describe(c), " count_include_pad ", include_pad, " ", dtype_name(t));
        Tensor x = grid_values(c.input, t, 21);
        const N::Pool2dGeometry g = N::pool2d_geometry("test", x, c.kernel, c.stride, c.padding, {1}, c.ceil_mode);
        Tensor out = N::avg_pool2d(x, g, include_pad);
        Tensor go = grid_values(out.sizes().vec(), t, 22);
        Tensor gi = N::avg_pool2d_backward(go, x.sizes(), g, include_pad);
        dispatch_floating(t, "test", [&]<class T>() {
          int64_t bad = 0;
          for (int64_t p = 0; p < g.planes; ++p) {
            for (int64_t oh = 0; oh < g.oH; ++oh)
              for (int64_t ow = 0; ow < g.oW; ++ow)
                bad += !same_bits(N::avg_pool2d_at(x.data_ptr<T>() + p * g.H * g.W, g, oh, ow, include_pad),
                                  out.data_ptr<T>()[(p * g.oH + oh) * g.oW + ow]);
            for (int64_t h = 0; h < g.H; ++h)
              for (int64_t w = 0; w < g.W; ++w)
                bad += !same_bits(N::avg_pool2d_backward_at(go.data_ptr<T>() + p * g.oH * g.oW, g, h, w, include_pad),
                                  gi.data_ptr<T>()[(p * g.H + h) * g.W + w]);
          }
          CHECK(bad == 0);
        });
      }
    }
  }
}

TEST_CASE("adaptive_avg_pool2d gather backward matches the CPU kernel bit for bit") {
  const std::vector<int64_t> out_sizes[] = {{1, 1}, {3, 3}, {4, 5}, {7, 9}, {2, 13}};
  for (const std::vector<int64_t>& os : out_sizes) {
    for (ScalarType t : {kFloat32, kFloat64}) {
      INFO("output ", IntArrayRef(os), " ", dtype_name(t));
      Tensor x = grid_values({2, 3, 5, 7}, t, 31);  // outputs larger than the input overlap
      const N::Pool2dGeometry g = N::adaptive_pool2d_geometry("test", x, os);
      Tensor out = N::adaptive_avg_pool2d(x, g);
      Tensor go = grid_values(out.sizes().vec(), t, 32);
      Tensor gi = N::adaptive_avg_pool2d_backward(go, x.sizes(), g);
      dispatch_floating(t, "test", [&]<class T>() {
        int64_t bad = 0;
        for (int64_t p = 0; p < g.planes; ++p)
          for (int64_t h = 0; h < g.H; ++h)
            for (int64_t w = 0; w < g.W; ++w)
              bad += !same_bits(N::adaptive_avg_pool2d_backward_at(go.data_ptr<T>() + p * g.oH * g.oW, g, h, w),
                                gi.data_ptr<T>()[(p * g.H + h) * g.W + w]);
        CHECK(bad == 0);
      });
    }
  }
}

TEST_CASE("windows_holding lists exactly the windows that hold an input") {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t pad = 0; pad <= k / 2; ++pad)
          for (int64_t d = 1; d <= 2; ++d) {
            const int64_t extent = (k - 1) * d + 1;
            const int64_t out = N::pool_output_size(in, k, s, pad, d, true);
            for (int64_t i = 0; i < in; ++i) {
              const N::OutputRange r = N::windows_holding(i, pad, extent, s, out);
              const N::OutputRange r32 = N::windows_holding<int32_t>(int32_t(i), int32_t(pad), int32_t(extent),
                                                                     int32_t(s), int32_t(out));
              CHECK((r32.lo == r.lo && r32.hi == r.hi));
              for (int64_t o = 0; o < out; ++o) {
                const bool holds = o * s - pad <= i && i < o * s - pad + extent;
                CHECK_MESSAGE(holds == (o >= r.lo && o < r.hi), "in ", in, " k ", k, " s ", s, " pad ", pad, " d ", d,
                              " i ", i, " o ", o);
              }
            }
          }
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t out = 1; out <= 11; ++out)
      for (int64_t i = 0; i < in; ++i) {
        const N::OutputRange r = N::adaptive_windows_holding(i, in, out);
        for (int64_t o = 0; o < out; ++o) {
          const bool holds = N::adaptive_start(o, in, out) <= i && i < N::adaptive_end(o, in, out);
          CHECK_MESSAGE(holds == (o >= r.lo && o < r.hi), "in ", in, " out ", out, " i ", i, " o ", o);
        }
      }
}

TEST_CASE("ArgExtreme picks the same element in any combination order as one forward scan") {
  // The CUDA block reduction combines strided partial results in a tree; the order is total,
  // so a random tree must pick what max() (a forward scan) picks.
  std::mt19937_64 rng(5);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) {
      const int r = static_cast<int>(rng() % 12);
      x = r == 0 ? nan : r == 1 ? -0.0 : r == 2 ? 0.0 : static_cast<double>(r % 4);  // ties, signed zeros, NaN
    }
    for (bool is_max : {true, false}) {
      Tensor xt = tensor(v, kFloat64);
      auto [values, indices] = is_max ? N::max(xt, 0) : N::min(xt, 0);
      const double want_v = values.data_ptr<double>()[0];
      const int64_t want_i = indices.data_ptr<int64_t>()[0];
      const functors::ArgExtreme<double> beats{is_max};
      struct Cand {
        double v;
        int64_t i;
      };
      std::vector<Cand> c;
      for (int i = 0; i < n; ++i) c.push_back({v[static_cast<size_t>(i)], i});
      while (c.size() > 1) {  // merge two random neighbours (either order) until one is left
        const size_t a = rng() % (c.size() - 1);
        Cand x = c[a], y = c[a + 1];
        if (rng() & 1) std::swap(x, y);
        c[a] = beats(y.v, y.i, x.v, x.i) ? y : x;
        c.erase(c.begin() + static_cast<std::ptrdiff_t>(a) + 1);
      }
      CHECK(c[0].i == want_i);
      CHECK(same_bits(c[0].v, want_v));
    }
  }
}

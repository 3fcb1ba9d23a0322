// Winograd F(2x2, 3x3) (Lavin & Gray 2016). Per 2x2 output tile t and 4x4 input patch d_t:
//   y_t = A^T [ sum_c U[c] .* V_t[c] ] A,  U = G g G^T (weights),  V_t = B^T d_t B (input)
// so for each of the 16 transformed positions xi one GEMM does the channel sums:
//   forward       M[xi] (og x T)  = U[xi] (og x cg) x V[xi] (cg x T)
//   weight grad   dU[xi]         += Z[xi] (og x T) x V[xi]^T,   Z_t = A gy_t A^T
//   input grad    dV[xi] (cg x T) = U[xi]^T x Z[xi],  gx = sum_t B dV_t B^T (overlapping patches)
// and gw = G^T dU G. T counts the tiles of a chunk of images, sized so the transformed data
// stays in cache between the transforms and the GEMMs. V and Z are plain [rows][T] matrices
// per xi; no GEMM copies them: panel_gemm reads them in place as B (the small U is laid out
// in panels once), and gemm_nt reads Z's rows in place for the weight gradient.
#include "core/native/conv/conv2d_winograd.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "core/native/conv/conv2d_workspace.h"
#include "core/native/gemm/gemm.h"
#include "core/native/gemm/gemm_packed.h"
#include "core/native/conv/winograd_transforms.h"
#include "core/parallel.h"

namespace gr::native {

namespace {

using winograd::Geo;

// Calls put(xi, o, c, value) with U[xi][o][c] = (G g G^T)[xi] for weights w [og, cg, 3, 3].
template <class T, class Put>
void weight_transform(const T* w, int64_t og, int64_t cg, Put put) {
  for (int64_t o = 0; o < og; ++o)
    for (int64_t c = 0; c < cg; ++c) {
      const T* k = w + (o * cg + c) * 9;
      T p[4][3];
      for (int j = 0; j < 3; ++j) {
        p[0][j] = k[j];
        p[1][j] = T(0.5) * (k[j] + k[3 + j] + k[6 + j]);
        p[2][j] = T(0.5) * (k[j] - k[3 + j] + k[6 + j]);
        p[3][j] = k[6 + j];
      }
      for (int a = 0; a < 4; ++a) {
        put(4 * a, o, c, p[a][0]);
        put(4 * a + 1, o, c, T(0.5) * (p[a][0] + p[a][1] + p[a][2]));
        put(4 * a + 2, o, c, T(0.5) * (p[a][0] - p[a][1] + p[a][2]));
        put(4 * a + 3, o, c, p[a][2]);
      }
    }
}

// The adjoint of weight_transform: gw [og, cg, 3, 3] = G^T du G, du[xi * xs + o * cg + c].
template <class T>
void weight_adjoint(const T* du, int64_t xs, int64_t og, int64_t cg, T* gw) {
  for (int64_t oc = 0; oc < og * cg; ++oc) {
    T r[3][4];
    for (int b = 0; b < 4; ++b) {
      const T d0 = du[b * xs + oc], d1 = du[(4 + b) * xs + oc], d2 = du[(8 + b) * xs + oc], d3 = du[(12 + b) * xs + oc];
      r[0][b] = d0 + T(0.5) * (d1 + d2);
      r[1][b] = T(0.5) * (d1 - d2);
      r[2][b] = T(0.5) * (d1 + d2) + d3;
    }
    T* k = gw + oc * 9;
    for (int i = 0; i < 3; ++i) {
      k[3 * i] = r[i][0] + T(0.5) * (r[i][1] + r[i][2]);
      k[3 * i + 1] = T(0.5) * (r[i][1] - r[i][2]);
      k[3 * i + 2] = T(0.5) * (r[i][1] + r[i][2]) + r[i][3];
    }
  }
}

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// Distance between the 16 transformed matrices: their size plus 32 elements, so the 16
// streams a transform writes never sit a multiple of 4 KiB apart (4K aliasing stalls).
int64_t xi_stride(int64_t matrix_elements) { return matrix_elements + 32; }

constexpr int64_t kChunkBytes = int64_t(1) << 20;

// Images per chunk: the chunk's transformed data (floats_per_tile per tile and xi) about
// 1 MiB, so it is still in L2 when the GEMMs and the inverse transforms read it; within a
// factor of two of that, the count whose tiles fill the GEMM's column panels best.
int64_t chunk_images(const Conv2dArgs& a, const Geo& g, int64_t floats_per_tile, size_t elem, int64_t nr) {
  const int64_t per_image = 16 * floats_per_tile * g.TT * static_cast<int64_t>(elem);
  const int64_t target = std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(a.N, 1));
  const int64_t lo = std::max<int64_t>(1, target / 2), hi = std::min<int64_t>(2 * target, std::max<int64_t>(a.N, 1));
  auto waste = [&](int64_t nb) {
    const int64_t tiles = nb * g.TT, padded = round_up(tiles, nr);
    return static_cast<double>(padded - tiles) / static_cast<double>(padded);
  };
  double least = 1;
  for (int64_t nb = lo; nb <= hi; ++nb) least = std::min(least, waste(nb));
  int64_t best = target;
  for (int64_t nb = hi; nb >= lo; --nb)
    if (waste(nb) <= least + 0.02 && (waste(best) > least + 0.02 || std::abs(nb - target) < std::abs(best - target)))
      best = nb;
  return best;
}

// fn(i) for i in [0, n) (the 16 xi), in parallel when each item has enough work.
template <class Fn>
void for_each(int64_t n, int64_t work_per_item, Fn fn) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_item, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

// fn(row, image, buf) over the planes (rows x nb images) of a chunk, in parallel, image by
// image so the NCHW planes are visited in memory order. buf: 8 Ub elements for the transforms.
template <class T, class Fn>
void for_planes(int64_t nb, int64_t rows, const Geo& g, Fn fn) {
  parallel_for(0, nb * rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(16 * g.TT, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<T> buf(static_cast<size_t>(8 * g.Ub));  // zeroed: the slack stays zero
                 for (int64_t p = b; p < e; ++p) fn(p % rows, p / rows, buf.data());
               });
}

}  // namespace

bool winograd_applicable(const Conv2dArgs& a) {
  return a.kH == 3 && a.kW == 3 && a.stride_h == 1 && a.stride_w == 1 && a.dil_h == 1 && a.dil_w == 1;
}

// Runs chunk(n0, nb, first, last) over the minibatch in chunks of nb_max images; first and
// last mark the ends of the run of chunks one thread does. With several threads and at
// least two chunks per thread, each thread takes whole chunks (one barrier per call; the
// transforms and GEMMs inside then run on that thread); otherwise the chunks run in turn,
// each with its own parallel loops.
template <class Chunk>
void for_chunks(int64_t N, int64_t nb_max, Chunk chunk) {
  const int64_t chunks = (N + nb_max - 1) / nb_max;
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) chunk(i * nb_max, std::min(nb_max, N - i * nb_max), i == b, i == e - 1);
  };
  if (!in_parallel_region() && get_num_threads() > 1 && chunks >= 2 * get_num_threads()) parallel_for(0, chunks, 1, run);
  else run(0, chunks);
}

template <class T>
void winograd_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y) {
  constexpr int MR = kPanelMR<T>;
  const Geo g(a);
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G;
  // U[xi] as A panels: [og / MR][cg][MR].
  const int64_t us = round_up(og, MR) * cg;
  Workspace<T> u_ws(0, 16 * us);
  T* u = u_ws.get();
  const int64_t nb_max = chunk_images(a, g, cg + og, sizeof(T), kPanelNR<T>);
  const int64_t tc_max = nb_max * g.TT;
  for (int64_t gi = 0; gi < G; ++gi) {
    std::fill(u, u + 16 * us, T(0));
    weight_transform(w + gi * og * cg * 9, og, cg, [&](int xi, int64_t o, int64_t c, T val) {
      u[xi * us + (o / MR) * cg * MR + c * MR + o % MR] = val;
    });
    for_chunks(a.N, nb_max, [&](int64_t n0, int64_t nb, bool, bool) {
      Workspace<T> v_ws(1, 16 * xi_stride(cg * tc_max)), m_ws(2, 16 * xi_stride(og * tc_max));
      T *v = v_ws.get(), *m = m_ws.get();
      const int64_t Tc = nb * g.TT, xv = xi_stride(cg * Tc), xm = xi_stride(og * Tc);
      for_planes<T>(nb, cg, g, [&](int64_t c, int64_t n, T* buf) {
        winograd::input_transform(x + ((n0 + n) * a.C_in + gi * cg + c) * g.H * g.W, g,
                                  winograd::PlainOut<T>{v + c * Tc + n * g.TT, xv}, buf);
      });
      for_each(16, og * cg * Tc, [&](int64_t xi) {
        panel_gemm(og, Tc, cg, u + xi * us, v + xi * xv, Tc, m + xi * xm, Tc, false);
      });
      for_planes<T>(nb, og, g, [&](int64_t o, int64_t n, T* buf) {
        const int64_t oo = gi * og + o;
        winograd::output_transform(m + o * Tc + n * g.TT, xm, g, bias ? bias[oo] : T(0),
                                   y + ((n0 + n) * a.C_out + oo) * g.Ho * g.Wo, buf);
      });
    });
  }
}

template <class T>
void winograd_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw) {
  constexpr int MR = kPanelMR<T>;
  const Geo g(a);
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G;
  // U[xi]^T as A panels [cg / MR][og][MR] (input gradient); dU[xi] plain [og][cg], summed
  // over the threads' partial sums.
  const int64_t us = round_up(cg, MR) * og, dus = og * cg;
  Workspace<T> ut_ws(0, gx ? 16 * us : 0), du_ws(1, gw ? 16 * dus : 0);
  T *ut = ut_ws.get(), *du = du_ws.get();
  const int64_t nb_max = chunk_images(a, g, cg + og, sizeof(T), kPanelNR<T>);
  const int64_t tc_max = nb_max * g.TT;
  std::mutex du_mutex;
  for (int64_t gi = 0; gi < G; ++gi) {
    if (gx) {
      std::fill(ut, ut + 16 * us, T(0));
      weight_transform(w + gi * og * cg * 9, og, cg, [&](int xi, int64_t o, int64_t c, T val) {
        ut[xi * us + (c / MR) * og * MR + o * MR + c % MR] = val;
      });
    }
    if (gw) std::fill(du, du + 16 * dus, T(0));
    for_chunks(a.N, nb_max, [&](int64_t n0, int64_t nb, bool first, bool last) {
      // z: Z [og][Tc]; v: V [cg][Tc] for the weight gradient, then dV for the input gradient.
      Workspace<T> z_ws(2, 16 * xi_stride(og * tc_max)), v_ws(3, 16 * xi_stride(cg * tc_max));
      Workspace<T> dp_ws(4, gw ? 16 * dus : 0);  // this thread's share of dU, kept across its chunks
      T *z = z_ws.get(), *v = v_ws.get(), *dp = dp_ws.get();
      const int64_t Tc = nb * g.TT, xz = xi_stride(og * Tc), xv = xi_stride(cg * Tc);
      for_planes<T>(nb, og, g, [&](int64_t o, int64_t n, T* buf) {
        winograd::output_adjoint(gy + ((n0 + n) * a.C_out + gi * og + o) * g.Ho * g.Wo, g,
                                 winograd::PlainOut<T>{z + o * Tc + n * g.TT, xz}, buf);
      });
      if (gw) {
        for_planes<T>(nb, cg, g, [&](int64_t c, int64_t n, T* buf) {
          winograd::input_transform(x + ((n0 + n) * a.C_in + gi * cg + c) * g.H * g.W, g,
                                    winograd::PlainOut<T>{v + c * Tc + n * g.TT, xv}, buf);
        });
        for_each(16, og * cg * Tc, [&](int64_t xi) {
          gemm_nt(og, cg, Tc, z + xi * xz, Tc, v + xi * xv, Tc, dp + xi * dus, cg, !first);
        });
        if (last) {
          std::lock_guard<std::mutex> lock(du_mutex);
          for (int64_t i = 0; i < 16 * dus; ++i) du[i] += dp[i];
        }
      }
      if (gx) {
        for_each(16, og * cg * Tc, [&](int64_t xi) {  // dV, into v
          panel_gemm(cg, Tc, og, ut + xi * us, z + xi * xz, Tc, v + xi * xv, Tc, false);
        });
        for_planes<T>(nb, cg, g, [&](int64_t c, int64_t n, T* buf) {
          winograd::input_adjoint(v + c * Tc + n * g.TT, xv, g,
                                  gx + ((n0 + n) * a.C_in + gi * cg + c) * g.H * g.W, buf);
        });
      }
    });
    if (gw) weight_adjoint(du, dus, og, cg, gw + gi * og * cg * 9);
  }
}

template void winograd_forward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*);
template void winograd_forward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*);
template void winograd_backward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*, float*);
template void winograd_backward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*,
                                        double*);

}  // namespace gr::native

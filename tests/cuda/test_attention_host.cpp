// Host tests of the CUDA attention kernels' bookkeeping, no device needed (suite "cuda_host",
// run by `test_cuda --no-device` too): the mma.sync fragment and ldmatrix address arithmetic
// of cuda_kernels/attention_fragments.h, checked by emulating ldmatrix and mma from the PTX
// ISA's tables (written out here, independently of the header) on every product the kernels
// form; and the shared schedule of core/native/attention_flash.h (which tiles a tile visits,
// which need masking, the online softmax across tiles, the dropout flags) against the plain
// formulas.
#include <gradring/core/native/attention_flash.h>

#include <cmath>
#include <random>
#include <vector>

#include "cuda_kernels/attention_fragments.h"
#include "parity.h"

using namespace gr;
using namespace gr::native;
namespace F = gr::cuda::mma;

namespace {

// A warp's registers as the emulation holds them: value[lane][register][half].
template <int R>
using Regs = std::vector<std::array<std::array<double, 2>, R>>;

// A row-major matrix in "shared memory".
struct Smem {
  int rows, cols;
  std::vector<double> v;
  double at(int r, int c) const { return v[static_cast<size_t>(r * cols + c)]; }
};
Smem random_smem(int rows, int cols, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  Smem s{rows, cols, std::vector<double>(static_cast<size_t>(rows * cols))};
  for (double& x : s.v) x = d(rng);
  return s;
}

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 (PTX ISA): lanes 8i .. 8i + 7 give the
// addresses of rows 0..7 of matrix i; lane l receives, in register i, row l / 4, elements
// 2 (l % 4) and +1 of matrix i; with .trans, element l / 4 of rows 2 (l % 4) and +1. `addr`
// maps a lane to the (row, column) of the block whose address it gives, from (r0, c0).
template <class Addr>
Regs<4> ldmatrix_x4(const Smem& s, int r0, int c0, bool trans, Addr addr) {
  Regs<4> out(32);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) {
        const int row_lane = 8 * i + (trans ? 2 * (l % 4) + h : l / 4);
        const auto [r, c] = addr(row_lane);
        out[l][i][h] = s.at(r0 + r, c0 + c + (trans ? l / 4 : 2 * (l % 4) + h));
      }
  return out;
}
auto lo = [](int lane) { return std::pair{F::lo_row(lane), F::lo_col(lane)}; };
auto hi = [](int lane) { return std::pair{F::hi_row(lane), F::hi_col(lane)}; };

// mma.sync.aligned.m16n8k16.row.col, from the PTX ISA's fragment tables (groupID = l >> 2,
// threadID_in_group = l % 4; element i of a: register i / 2, half i % 2):
//   a_i: row groupID (+8 for i in {2, 3, 6, 7}), col 2 tig + (i & 1) (+8 for i >= 4);
//   b_i: row 2 tig + (i & 1) (+8 for i >= 2), col groupID;  c_i: row groupID (+8 for i >= 2),
//   col 2 tig + (i & 1).
void mma(std::vector<std::array<double, 4>>& c, const Regs<4>& a, const std::array<std::array<double, 2>, 2>* b) {
  double A[16][16], B[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l % 4;
    for (int i = 0; i < 8; ++i) {
      const int row = g + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0), col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = a[l][i / 2][i % 2];
    }
    for (int i = 0; i < 4; ++i) B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = b[l][i / 2][i % 2];
  }
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const int row = (l >> 2) + (i >= 2 ? 8 : 0), col = 2 * (l % 4) + (i & 1);
      for (int k = 0; k < 16; ++k) c[l][i] += A[row][k] * B[k][col];
    }
}
// The B operands of n-tile `second` (0 or 1) of an ldmatrix.x4 pair: registers 2 second, +1.
std::vector<std::array<std::array<double, 2>, 2>> b_of(const Regs<4>& r, int second) {
  std::vector<std::array<std::array<double, 2>, 2>> b(32);
  for (int l = 0; l < 32; ++l) b[l] = {r[l][2 * second], r[l][2 * second + 1]};
  return b;
}
// The accumulators of a 16 x 8 C tile as a matrix, through the header's c_row / c_col.
void expect_c(const std::vector<std::array<double, 4>>& c, const std::function<double(int, int)>& want,
              const char* what) {
  INFO(what);
  double worst = 0;
  for (int l = 0; l < 32; ++l)
    for (int e = 0; e < 4; ++e) worst = std::max(worst, std::fabs(c[l][e] - want(F::c_row(l, e), F::c_col(l, e))));
  CHECK(worst < 1e-12);
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("attention fragments: the header's layouts are the PTX ISA's") {
    for (int l = 0; l < 32; ++l) {
      const int g = l >> 2, t = l % 4;
      for (int i = 0; i < 8; ++i) {
        CHECK(F::a_row(l, i / 2) == g + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0));
        CHECK(F::a_col(l, i / 2, i % 2) == 2 * t + (i & 1) + (i >= 4 ? 8 : 0));
      }
      for (int i = 0; i < 4; ++i) {
        CHECK(F::b_row(l, i / 2, i % 2) == 2 * t + (i & 1) + (i >= 2 ? 8 : 0));
        CHECK(F::c_row(l, i) == g + (i >= 2 ? 8 : 0));
        CHECK(F::c_col(l, i) == 2 * t + (i & 1));
      }
      CHECK(F::b_col(l) == g);
    }
  }

  TEST_CASE("attention fragments: every product the kernels form, emulated, is the matrix product") {
    std::mt19937 rng(7);
    // S = Q K^T (forward; S^T = K Q^T and dP^T = V dO^T in the backward): A from the
    // row-major Q block (kRowsLo), B from K's rows (kRowsHi), over two 16-wide k steps.
    const Smem q = random_smem(16, 32, rng), k = random_smem(16, 32, rng);
    std::vector<std::array<double, 4>> s[2] = {std::vector<std::array<double, 4>>(32),
                                               std::vector<std::array<double, 4>>(32)};
    for (int kk = 0; kk < 2; ++kk) {
      const Regs<4> a = ldmatrix_x4(q, 0, kk * 16, false, lo), b = ldmatrix_x4(k, 0, kk * 16, false, hi);
      for (int nt = 0; nt < 2; ++nt) mma(s[nt], a, b_of(b, nt).data());
    }
    for (int nt = 0; nt < 2; ++nt)
      expect_c(s[nt],
               [&](int i, int j) {
                 double x = 0;
                 for (int d = 0; d < 32; ++d) x += q.at(i, d) * k.at(nt * 8 + j, d);
                 return x;
               },
               "Q K^T");
    // O = P V: A from the C of S's two n-tiles (c_tile, c_elem), B from the row-major V (kRowsLo, .trans).
    Regs<4> p(32);
    for (int l = 0; l < 32; ++l)
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) p[l][r][h] = s[F::c_tile(r)][l][F::c_elem(r, h)];
    for (int l = 0; l < 32; ++l)  // the A layout it must have: P(row, col) = S(row, col)
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) {
          const int row = F::a_row(l, r), col = F::a_col(l, r, h);
          double want = 0;
          for (int d = 0; d < 32; ++d) want += q.at(row, d) * k.at(col, d);
          CHECK(std::fabs(p[l][r][h] - want) < 1e-12);
        }
    const Smem v = random_smem(16, 16, rng);
    const Regs<4> vb = ldmatrix_x4(v, 0, 0, true, lo);
    for (int nt = 0; nt < 2; ++nt) {
      std::vector<std::array<double, 4>> o(32);
      mma(o, p, b_of(vb, nt).data());
      expect_c(o,
               [&](int i, int c) {
                 double x = 0;
                 for (int j = 0; j < 16; ++j) {
                   double sij = 0;
                   for (int d = 0; d < 32; ++d) sij += q.at(i, d) * k.at(j, d);
                   x += sij * v.at(j, nt * 8 + c);
                 }
                 return x;
               },
               "P V");
    }
    // dQ = dS K: A from dS^T stored key-major (kRowsHi, .trans), B from the row-major K (kRowsLo, .trans).
    const Smem dst = random_smem(16, 16, rng), kr = random_smem(16, 16, rng);  // dS^T [key][query], K [key][d]
    const Regs<4> a = ldmatrix_x4(dst, 0, 0, true, hi), b = ldmatrix_x4(kr, 0, 0, true, lo);
    for (int nt = 0; nt < 2; ++nt) {
      std::vector<std::array<double, 4>> dq(32);
      mma(dq, a, b_of(b, nt).data());
      expect_c(dq,
               [&](int i, int c) {
                 double x = 0;
                 for (int j = 0; j < 16; ++j) x += dst.at(j, i) * kr.at(j, nt * 8 + c);
                 return x;
               },
               "dS K");
    }
  }

  TEST_CASE("attention schedule: key ranges, query starts and masked tiles against the plain rule") {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial) {
      AttentionParams p{};
      p.B = 1;
      p.L = 1 + rng() % 150;
      p.S = 1 + rng() % 150;
      p.causal = rng() % 2;
      p.mask = rng() % 4 == 0 ? AttentionMask::Bool : AttentionMask::None;
      const int64_t Br = int64_t(16) << (rng() % 3), Bc = int64_t(16) << (rng() % 3);
      auto visible = [&](int64_t i, int64_t j) { return i < p.L && j < p.S && (!p.causal || j <= i); };
      INFO("L ", p.L, " S ", p.S, " causal ", p.causal, " Br ", Br, " Bc ", Bc);
      std::vector<char> seen_fwd(static_cast<size_t>(p.L * p.S)), seen_bwd(seen_fwd.size());
      // The forward: a query tile visits key tiles up to attention_key_end.
      for (int64_t i0 = 0; i0 < p.L; i0 += Br) {
        const int64_t end = attention_key_end(p, i0, Br);
        for (int64_t i = i0; i < std::min(i0 + Br, p.L); ++i)
          for (int64_t j = end; j < p.S; ++j) REQUIRE_FALSE(visible(i, j));
        if (i0 + Br <= p.L && end > 0) {  // tight: the last key is visible to some query of the tile
          bool some = false;
          for (int64_t i = i0; i < i0 + Br; ++i) some = some || visible(i, end - 1);
          CHECK(some);
        }
        for (int64_t j0 = 0; j0 < end; j0 += Bc) {
          const int64_t nc = std::min(Bc, p.S - j0);
          const bool masked = attention_tile_masked(p, i0, j0, nc, Bc);
          for (int64_t i = i0; i < std::min(i0 + Br, p.L); ++i)
            for (int64_t j = j0; j < j0 + Bc; ++j) {
              if (!masked) REQUIRE((visible(i, j) && p.mask == AttentionMask::None));
              if (visible(i, j)) seen_fwd[static_cast<size_t>(i * p.S + j)] = 1;
            }
        }
      }
      // The backward: a key tile walks the query tiles from attention_query_begin's.
      for (int64_t j0 = 0; j0 < p.S; j0 += Bc) {
        const int64_t begin = attention_query_begin(p, j0);
        for (int64_t i = 0; i < begin; ++i)
          for (int64_t j = j0; j < std::min(j0 + Bc, p.S); ++j) REQUIRE_FALSE(visible(i, j));
        if (begin < p.L) CHECK((visible(begin, j0) || !p.causal));
        for (int64_t i0 = begin / Br * Br; i0 < p.L; i0 += Br) {
          const bool masked = attention_tile_masked(p, i0, j0, std::min(Bc, p.S - j0), Bc);
          for (int64_t i = i0; i < std::min(i0 + Br, p.L); ++i)
            for (int64_t j = j0; j < j0 + Bc; ++j) {
              if (!masked) REQUIRE((visible(i, j) && p.mask == AttentionMask::None));
              if (visible(i, j)) seen_bwd[static_cast<size_t>(i * p.S + j)] = 1;
            }
        }
      }
      for (int64_t i = 0; i < p.L; ++i)
        for (int64_t j = 0; j < p.S; ++j) {
          REQUIRE(bool(seen_fwd[static_cast<size_t>(i * p.S + j)]) == visible(i, j));
          REQUIRE(bool(seen_bwd[static_cast<size_t>(i * p.S + j)]) == visible(i, j));
        }
    }
  }

  TEST_CASE("attention schedule: the online softmax over tiles and split sums is the two-pass softmax") {
    std::mt19937 rng(12);
    std::normal_distribution<float> normal(0, 3);
    auto fexp = [](float x) { return std::exp(x); };
    for (int trial = 0; trial < 400; ++trial) {
      const int n = 1 + static_cast<int>(rng() % 300), lanes = trial % 2 ? 4 : 8;
      const int masked_every = trial % 5 == 0 ? 1 : 2 + static_cast<int>(rng() % 7);  // 1: all masked
      std::vector<float> x(static_cast<size_t>(n)), val(static_cast<size_t>(n));
      for (int j = 0; j < n; ++j) {
        x[j] = (trial % 3 == 0 && j % masked_every == 0) ? -INFINITY : normal(rng);
        val[j] = normal(rng);
      }
      // Plain: m = max, l = sum exp(x - m), out = sum exp(x - m) val / l, lse = m + log l.
      double m = -INFINITY, l = 0, o = 0;
      for (float xi : x) m = std::max(m, double(xi));
      for (int j = 0; j < n; ++j)
        if (m != -INFINITY) l += std::exp(double(x[j]) - m), o += std::exp(double(x[j]) - m) * val[j];
      // Tiles of random widths; within a tile, column j belongs to lane j % lanes, which keeps
      // its part of l (as the CUDA kernels' quads and row groups do) and of the output.
      OnlineSoftmax<float> part[8];
      float out[8] = {};
      for (int j0 = 0; j0 < n;) {
        const int w = std::min(n - j0, 1 + static_cast<int>(rng() % 70));
        float mt = -INFINITY;
        for (int j = j0; j < j0 + w; ++j) mt = std::max(mt, x[j]);
        const float m_new = part[0].next_max(mt);  // the same on every lane
        for (int ln = 0; ln < lanes; ++ln) {
          float sum = 0, add = 0;
          for (int j = j0 + ln; j < j0 + w; j += lanes) {
            const float e = m_new == -INFINITY ? 0.0f : fexp(x[j] - m_new);
            sum += e;
            add += e * val[j];
          }
          const float alpha = m_new == -INFINITY ? 1.0f : part[ln].advance(m_new, sum, fexp);
          out[ln] = out[ln] * alpha + add;
        }
        j0 += w;
      }
      OnlineSoftmax<float> row = part[0];
      float total = 0;
      for (int ln = 1; ln < lanes; ++ln) row.l += part[ln].l;
      for (int ln = 0; ln < lanes; ++ln) total += out[ln];
      INFO("trial ", trial, " n ", n);
      if (m == -INFINITY) {
        CHECK(row.lse() == -INFINITY);
        CHECK(row.inv_sum() == 0.0f);
        CHECK(total * row.inv_sum() == 0.0f);
      } else {
        CHECK(row.m == m);
        CHECK(std::fabs(row.lse() - (m + std::log(l))) <= 1e-5 * std::max(1.0, std::fabs(m)));
        CHECK(std::fabs(total * row.inv_sum() - o / l) <= 1e-5 * (1 + std::fabs(o / l)));
      }
    }
  }

  TEST_CASE("attention dropout rows draw the flags of attention_dropout_factor") {
    AttentionParams p{};
    p.B = 3, p.L = 37, p.S = 53;
    p.dropout_p = 0.3;
    p.dropout_threshold = dropout_threshold(0.3);
    p.dropout_scale = dropout_scale(0.3);
    p.seed = 1234567, p.offset = 89;
    std::mt19937 rng(13);
    int kept = 0, total = 0;
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t i = 0; i < p.L; ++i) {
        AttentionDropoutRow row(p, b, i);
        // Walk as the kernels do: pairs of adjacent keys, strides of 8, and random jumps.
        for (int step = 0; step < 80; ++step) {
          const int64_t j = step < 26 ? 2 * step : static_cast<int64_t>(rng() % p.S);
          for (int64_t jj = j; jj < std::min(j + 2, p.S); ++jj) {
            const float want = attention_dropout_factor<float>(p, b, i, jj);
            REQUIRE(row.factor(jj, static_cast<float>(p.dropout_scale)) == want);
            kept += want != 0.0f;
            ++total;
          }
        }
      }
    CHECK(std::fabs(double(kept) / total - 0.7) < 0.02);  // the flags are a fair draw
  }
}

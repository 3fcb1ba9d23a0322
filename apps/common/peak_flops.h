// The measured float32 FMA peak of one core, the denominator of the apps' MFU figures.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

namespace gr::apps {

// Note [Measured peak]
// MFU is achieved FLOP/s over what the core can do. Rather than trust a datasheet (clock
// boost and the number of FMA pipes vary), this times a loop of fused multiply-adds on 12
// independent accumulators of the widest vector the compiler targets (-march=native: 8
// floats with AVX2, 16 with AVX-512). Twelve chains cover the FMA latency (4 cycles) times
// two pipes, so the loop runs at the pipes' throughput. Best of five 20 ms runs: about 0.1 s.
// With AVX512_BF16, `bf16` times vdpbf16ps instead (two multiply-adds per lane; 16 chains
// cover its longer latency): the peak of a bfloat16 product (Note [bfloat16 pair products]).

// The best of five 20 ms runs of burst() (`flops` each), in GFLOP/s.
template <class Burst>
double best_rate_gflops(double flops, Burst&& burst) {
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    int64_t bursts = 0;
    const auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    while (seconds < 0.02) {
      burst();
      ++bursts;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    best = std::max(best, flops * static_cast<double>(bursts) / seconds / 1e9);
  }
  return best;
}

inline double measured_peak_gflops_per_core(bool bf16 = false) {
  constexpr int kIterations = 4096;
#if defined(__AVX512BF16__)
  if (bf16) {
    constexpr int kChains = 16;
    __m512 acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(c));
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);  // 1, 6e-8
    return best_rate_gflops(64.0 * kChains * kIterations, [&] {
      __m512 v[kChains];  // a local copy stays in registers (the captured array would not)
      for (int c = 0; c < kChains; ++c) v[c] = acc[c];
      for (int i = 0; i < kIterations; ++i) {
#pragma GCC unroll 16
        for (int c = 0; c < kChains; ++c) v[c] = _mm512_dpbf16_ps(v[c], a, b);
      }
#pragma GCC unroll 16
      for (int c = 0; c < kChains; ++c) asm volatile("" : "+v"(v[c]));  // the loop cannot be folded
      for (int c = 0; c < kChains; ++c) acc[c] = v[c];
    });
  }
#else
  (void)bf16;
#endif
#if defined(__AVX512F__)
  constexpr int kLanes = 16;
#elif defined(__AVX__)
  constexpr int kLanes = 8;
#else
  constexpr int kLanes = 4;
#endif
  typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
  constexpr int kChains = 12;
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = Vec{} + 1.0f + 0.001f * static_cast<float>(c);
  const Vec mul = Vec{} + 0.999999f, add = Vec{} + 1e-7f;
  return best_rate_gflops(2.0 * kLanes * kChains * kIterations, [&] {
    Vec v[kChains];  // a local copy stays in registers (the captured array would not)
    for (int c = 0; c < kChains; ++c) v[c] = acc[c];
    for (int i = 0; i < kIterations; ++i) {
#pragma GCC unroll 12
      for (int c = 0; c < kChains; ++c) v[c] = v[c] * mul + add;
    }
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) asm volatile("" : "+x"(v[c]));  // the loop cannot be folded
    for (int c = 0; c < kChains; ++c) acc[c] = v[c];
  });
}

}  // namespace gr::apps

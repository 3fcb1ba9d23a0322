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
inline double measured_peak_gflops_per_core(bool bf16 = false) {
#if defined(__AVX512BF16__)
  if (bf16) {
    constexpr int kChains = 16;
    double best = 0;
    for (int run = 0; run < 5; ++run) {
      __m512 acc[kChains];
      for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(c));
      const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);  // 1, 6e-8
      int64_t iterations = 0;
      const auto start = std::chrono::steady_clock::now();
      double seconds = 0;
      while (seconds < 0.02) {
        for (int i = 0; i < 4096; ++i) {
#pragma GCC unroll 16
          for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
        }
        iterations += 4096;
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      for (int c = 0; c < kChains; ++c) asm volatile("" : : "v"(acc[c]));
      best = std::max(best, 64.0 * kChains * static_cast<double>(iterations) / seconds / 1e9);
    }
    return best;
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
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    Vec acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = Vec{} + 1.0f + 0.001f * static_cast<float>(c);
    const Vec mul = Vec{} + 0.999999f, add = Vec{} + 1e-7f;
    int64_t iterations = 0;
    const auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    while (seconds < 0.02) {
      for (int i = 0; i < 4096; ++i) {
#pragma GCC unroll 12
        for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul + add;
      }
#pragma GCC unroll 12
      for (int c = 0; c < kChains; ++c) asm volatile("" : "+x"(acc[c]));  // the loop cannot be folded
      iterations += 4096;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    float sink = 0;
    for (int c = 0; c < kChains; ++c)
      for (int l = 0; l < kLanes; ++l) sink += acc[c][l];
    asm volatile("" : : "x"(sink));
    best = std::max(best, 2.0 * kLanes * kChains * static_cast<double>(iterations) / seconds / 1e9);
  }
  return best;
}

}  // namespace gr::apps

// Host tests of Note [Fast index division] (suite "cuda_host", no device needed): IntDivider's
// quotient and remainder equal plain division for every divisor up to 4096 and for large and
// power-of-two divisors, at the edges of the 31-bit range and on random dividends.
#include <random>
#include <vector>

#include "cuda_kernels/int_divider.h"
#include "parity.h"

using gr::cuda::IntDivider;

namespace {

// Counts the dividends of `ns` that `d` divides wrongly.
int64_t wrong(uint32_t d, const std::vector<uint32_t>& ns) {
  const IntDivider div(d);
  int64_t bad = 0;
  for (uint32_t n : ns) {
    const gr::cuda::DivMod r = div.divmod(n);
    if (r.div != n / d || r.mod != n % d || div.div(n) != n / d) ++bad;
  }
  return bad;
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("IntDivider divides every 31-bit dividend exactly") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> any(0, 0x7fffffffu);
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
    for (uint32_t s = 12; s < 31; ++s) {
      divisors.push_back(1u << s);
      divisors.push_back((1u << s) - 1);
      divisors.push_back((1u << s) + 1);
    }
    for (uint32_t d : {676u, 121u, 169u, 25u, 784u, 12345u, 1000003u, 0x7fffffffu, 0x40000001u}) divisors.push_back(d);
    int64_t bad = 0, tried = 0;
    for (uint32_t d : divisors) {
      std::vector<uint32_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 0x7fffffffu, 0x7ffffffeu, 0x40000000u};
      ns.push_back(0x7fffffffu - 0x7fffffffu % d);      // the last multiple of d
      ns.push_back(0x7fffffffu - 0x7fffffffu % d - 1);  // one below it
      for (int i = 0; i < 200; ++i) ns.push_back(any(rng));
      for (uint32_t q = 1; q < 64; ++q)
        if (static_cast<uint64_t>(q) * d < 0x80000000u) {
          ns.push_back(q * d);
          ns.push_back(q * d - 1);
        }
      for (uint32_t& n : ns) n &= 0x7fffffffu;
      bad += wrong(d, ns);
      tried += static_cast<int64_t>(ns.size());
    }
    CHECK(bad == 0);
    CHECK(tried > 1000000);
    // Exhaustively for the shapes of the seed CNN's planes and rows, over [0, 2^20).
    for (uint32_t d : {2u, 5u, 11u, 13u, 26u, 121u, 169u, 676u}) {
      std::vector<uint32_t> ns(1u << 20);
      for (uint32_t n = 0; n < ns.size(); ++n) ns[n] = n;
      CHECK(wrong(d, ns) == 0);
    }
    CHECK(IntDivider().div(12345) == 12345);  // the default divides by 1
    CHECK_THROWS_AS(IntDivider(0), gr::Error);
    CHECK(gr::cuda::fits_31_bits(0x7fffffff));
    CHECK_FALSE(gr::cuda::fits_31_bits(int64_t(1) << 31));
  }
}

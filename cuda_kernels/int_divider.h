// Division by a divisor fixed at launch, as a multiply-high and a shift (Granlund and
// Montgomery; PyTorch's IntDivider): the index arithmetic of the element-wise, batch-norm and
// pooling kernels. Plain C++ with GR_HOST_DEVICE, so the CPU suite checks it.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/macros.h"

namespace gr::cuda {

// Note [Fast index division]
// 64-bit integer division is a software routine on NVIDIA GPUs (~70 instructions and
// branches), 32-bit division about 20; a kernel that splits every element's flat index into
// (plane, row, column) that way spends more time dividing than moving its bytes (pooling's
// backward did eight 64-bit divisions per element). With m and s chosen on the host for the
// divisor d, n / d = (umulhi(n, m) + n) >> s exactly for every n < 2^31 (so the sum cannot
// wrap), and n % d = n - (n / d) * d. Kernels use it when their index range fits in 31 bits
// (fits_31_bits) and keep 64-bit arithmetic otherwise.
struct DivMod {
  uint32_t div, mod;
};

class IntDivider {
 public:
  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor_(d) {
    GR_CHECK(d >= 1 && d <= 0x7fffffffu, "IntDivider: divisor ", d, " outside [1, 2^31)");
    while (shift_ < 32 && (uint64_t(1) << shift_) < d) ++shift_;
    const uint64_t one = 1;
    multiplier_ = static_cast<uint32_t>(((one << 32) * ((one << shift_) - d)) / d + 1);
  }
  GR_HOST_DEVICE GR_INLINE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, multiplier_);
#else
    const auto t = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier_) >> 32);
#endif
    return (t + n) >> shift_;
  }
  GR_HOST_DEVICE GR_INLINE DivMod divmod(uint32_t n) const {
    const uint32_t q = div(n);
    return {q, n - q * divisor_};
  }
  GR_HOST_DEVICE GR_INLINE uint32_t divisor() const { return divisor_; }

 private:
  uint32_t divisor_ = 1, multiplier_ = 1, shift_ = 0;
};

// Whether indices [0, n) (and every divisor met splitting them) stay below 2^31.
inline bool fits_31_bits(int64_t n) { return n >= 0 && n < (int64_t(1) << 31); }

}  // namespace gr::cuda

// CUDA random fills (random_stub of core/native/random/random.h): a thread per Philox block, block
// offset + b of subsequence 0 giving elements [b * per_block, (b + 1) * per_block), exactly the
// CPU's stream and random_block_values arithmetic, so uniform and integer fills are
// bit-identical on both devices, and so are Bernoulli fills. Normal, exponential, log-normal,
// Cauchy and geometric fills also go through each side's log/exp/sin/cos/tan in double
// (CUDA's are accurate to 1-2 ulp, glibc's to under 1): a float32 value differs from the
// CPU's only when that double lands next to a rounding boundary (rarely, by 1 ulp); float64
// values agree to a few ulp. See Note [Random streams] in core/native/random.h.
#include "core/native/random/random.h"
#include "core/philox.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;

// out: n contiguous elements; Philox block b gives elements [b * per_block, (b + 1) * per_block).
template <class T>
__global__ void random_kernel(T* out, int64_t n, RandomParams p, int64_t per_block) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b = first_index(); b < blocks; b += grid_stride()) {
    Philox4x32 rng(p.seed, 0, p.offset + static_cast<uint64_t>(b));
    uint32_t r[4];
    rng.next(r);
    random_block_values(p, per_block, r, out + b * per_block, n - b * per_block);
  }
}

void random_cuda(const Tensor& out, const RandomParams& p) {
  GR_CHECK(out.is_contiguous(), "random: output must be contiguous");
  const int64_t n = out.numel();
  if (n == 0) return;
  const int64_t per_block = random_values_per_block(p.kind, out.scalar_type());
  auto fill = [&]<class T>() {
    random_kernel<<<grid_size((n + per_block - 1) / per_block, kThreads), kThreads, 0, current_stream()>>>(
        out.data_ptr<T>(), n, p, per_block);
    GR_CUDA_CHECK_LAUNCH();
  };
  dispatch_all(out.scalar_type(), "random", fill);  // the dtypes of the CPU fill
}

}  // namespace

GR_REGISTER_KERNEL(native::random_stub, kCUDA, &random_cuda);

}  // namespace gr::cuda

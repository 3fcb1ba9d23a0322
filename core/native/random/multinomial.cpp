// CPU multinomial kernels: inverse-CDF sampling per row and the top keys of a row.
#include "core/native/random/multinomial.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SampleCdfFn, multinomial_with_replacement_stub);
GR_DEFINE_DISPATCH(TopKeysFn, multinomial_top_keys_stub);

namespace {

void with_replacement_cpu(const Tensor& p, const Tensor& u, const Tensor& out) {
  const int64_t N = p.size(0), C = p.size(1), S = u.size(1);
  const double* pp = p.data_ptr<double>();
  const double* up = u.data_ptr<double>();
  int64_t* op = out.data_ptr<int64_t>();
  parallel_for(0, N, 1, [&](int64_t r0, int64_t r1) {
    std::vector<double> cdf(static_cast<size_t>(C));
    for (int64_t r = r0; r < r1; ++r) {
      double sum = 0;
      int64_t last = 0;
      for (int64_t c = 0; c < C; ++c) {  // sequential sums: the CUDA kernel adds in this order too
        sum += pp[r * C + c];
        cdf[c] = sum;
        if (pp[r * C + c] > 0) last = c;
      }
      for (int64_t s = 0; s < S; ++s) op[r * S + s] = cdf_search(cdf.data(), C, up[r * S + s] * sum, last);
    }
  });
}

void top_keys_cpu(const Tensor& keys, const Tensor& out) {
  const int64_t N = keys.size(0), C = keys.size(1), K = out.size(1);
  const double* kp = keys.data_ptr<double>();
  int64_t* op = out.data_ptr<int64_t>();
  parallel_for(0, N, 1, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> idx(static_cast<size_t>(C));
    for (int64_t r = r0; r < r1; ++r) {
      const double* row = kp + r * C;
      std::iota(idx.begin(), idx.end(), 0);
      std::partial_sort(idx.begin(), idx.begin() + K, idx.end(),
                        [row](int64_t a, int64_t b) { return key_before(row[a], a, row[b], b); });
      std::copy(idx.begin(), idx.begin() + K, op + r * K);
    }
  });
}

}  // namespace

GR_REGISTER_KERNEL(multinomial_with_replacement_stub, kCPU, &with_replacement_cpu);
GR_REGISTER_KERNEL(multinomial_top_keys_stub, kCPU, &top_keys_cpu);

}  // namespace gr::native

// Cumulative sums and products (cumsum, cumprod) without autograd, forwards or in reverse
// (out[r] combines in[r..R-1]: the adjoint direction backward needs).
#pragma once

#include <optional>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Scan over R of a contiguous in[outer, R, inner] into out of the same layout; out's dtype
// is in's for floats and int64 for integers and bool.
using ScanFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t,
                        bool reverse);
GR_DECLARE_DISPATCH(ScanFn, cumsum_stub);
GR_DECLARE_DISPATCH(ScanFn, cumprod_stub);

// `dtype` converts the input first; integers and bool otherwise give int64.
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt, bool reverse = false);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt, bool reverse = false);

}  // namespace gr::native

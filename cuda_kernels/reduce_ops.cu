// CUDA kernels of the reductions beyond sum and max (core/native/reduce/reduce.h's stubs): mean,
// prod, amax/amin, the vector norms, any/all, count_nonzero and var/std (Welford), each the
// generic reduction of reduce.cuh with an op of core/reduce_functors.h.
#include <cmath>
#include <type_traits>

#include "core/native/reduce/reduce.h"
#include "cuda_kernels/reduce.cuh"

namespace gr::cuda {
namespace {

namespace ops = gr::reduce_ops;

template <class In>
constexpr bool is_floating = std::is_floating_point_v<ops::value_t<In>>;

void mean_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double count) {
  dispatch_all(t, "mean", [&]<class In>() {
    if constexpr (is_floating<In>) {
      using Acc = ops::acc_t<In>;
      launch_reduce(static_cast<const In*>(in), outer, R, inner, ops::Sum<Acc>{},
                    ops::MeanTo<In, Acc>{static_cast<In*>(out), static_cast<Acc>(count)});
    } else {
      GR_ERROR("mean: expected a floating point input, got ", t);
    }
  });
}

void prod_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "prod", [&]<class In>() {
    launch_reduce_to<In, ops::sum_out_t<In>>(in, out, outer, R, inner, ops::Prod<ops::acc_t<In>>{});
  });
}

template <bool IsMax>
void extreme_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, IsMax ? "amax" : "amin", [&]<class In>() {
    using V = ops::value_t<In>;
    using Op = std::conditional_t<IsMax, ops::Max<V>, ops::Min<V>>;
    launch_reduce_to<In, In>(in, out, outer, R, inner, Op{});
  });
}

void norm_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double p) {
  dispatch_all(t, "norm", [&]<class In>() {
    if constexpr (is_floating<In>) {
      using Acc = ops::acc_t<In>;
      if (p == 0) launch_reduce_to<In, In>(in, out, outer, R, inner, ops::Norm0<Acc>{});
      else if (p == 1) launch_reduce_to<In, In>(in, out, outer, R, inner, ops::Norm1<Acc>{});
      else if (p == 2) launch_reduce_to<In, In>(in, out, outer, R, inner, ops::Norm2<Acc>{});
      else if (std::isinf(p) && p > 0) launch_reduce_to<In, In>(in, out, outer, R, inner, ops::NormInf<Acc>{});
      else if (std::isinf(p)) launch_reduce_to<In, In>(in, out, outer, R, inner, ops::NormNegInf<Acc>{});
      else launch_reduce_to<In, In>(in, out, outer, R, inner, ops::NormP<Acc>{{}, static_cast<Acc>(p)});
    } else {
      GR_ERROR("norm: expected a floating point input, got ", t);
    }
  });
}

template <class Op>
void logical_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "any/all", [&]<class In>() {
    using Out = std::conditional_t<std::is_same_v<In, uint8_t>, uint8_t, bool>;  // uint8 stays uint8, as torch
    launch_reduce_to<In, Out>(in, out, outer, R, inner, Op{});
  });
}

void count_nonzero_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "count_nonzero",
               [&]<class In>() { launch_reduce_to<In, int64_t>(in, out, outer, R, inner, ops::CountNonzero{}); });
}

void var_cuda(const void* in, void* out, void* mean_out, int64_t outer, int64_t R, int64_t inner, ScalarType t,
              double correction, bool take_sqrt) {
  dispatch_all(t, "var", [&]<class In>() {
    if constexpr (is_floating<In>) {
      using Acc = ops::acc_t<In>;
      launch_reduce(static_cast<const In*>(in), outer, R, inner, ops::Welford<Acc>{},
                    ops::VarTo<In, Acc>{static_cast<In*>(out), static_cast<In*>(mean_out), correction, take_sqrt});
    } else {
      GR_ERROR("var: expected a floating point input, got ", t);
    }
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::mean_stub, kCUDA, &mean_cuda);
GR_REGISTER_KERNEL(native::prod_stub, kCUDA, &prod_cuda);
GR_REGISTER_KERNEL(native::amax_stub, kCUDA, &extreme_cuda<true>);
GR_REGISTER_KERNEL(native::amin_stub, kCUDA, &extreme_cuda<false>);
GR_REGISTER_KERNEL(native::norm_stub, kCUDA, &norm_cuda);
GR_REGISTER_KERNEL(native::any_stub, kCUDA, &logical_cuda<ops::Any>);
GR_REGISTER_KERNEL(native::all_stub, kCUDA, &logical_cuda<ops::All>);
GR_REGISTER_KERNEL(native::count_nonzero_stub, kCUDA, &count_nonzero_cuda);
GR_REGISTER_KERNEL(native::var_stub, kCUDA, &var_cuda);

}  // namespace gr::cuda

// Copies and conversions without autograd: copy_ (broadcast, dtype, device), contiguous,
// dtype/device conversion, fill. In-place ops here (and in every native/ file) bump the
// destination's version counter.
#pragma once

#include "core/dispatch.h"
#include "core/native/elementwise/strided_loop.h"

namespace gr::native {

// dst[...] = src broadcast to dst's shape, converted to dst's dtype, across devices.
// non_blocking: see cross_device_copy_stub.
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking = false);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);  // always a new contiguous tensor
Tensor to_dtype(const Tensor& t, ScalarType dtype);
Tensor to_device(const Tensor& t, Device device, bool non_blocking = false);
void fill_(const Tensor& t, const Scalar& value);

// Same-device element-wise conversion (loop.data[0] has dtype `out`, data[1] `in`).
using ConvertFn = void (*)(const StridedLoop&, ScalarType out, ScalarType in);
GR_DECLARE_DISPATCH(ConvertFn, convert_stub);
using FillFn = void (*)(const StridedLoop&, ScalarType, const Scalar&);
GR_DECLARE_DISPATCH(FillFn, fill_stub);
// Copy of nbytes between devices (one side is CUDA); src and dst are contiguous. Blocking,
// except a copy from pinned CPU memory with non_blocking (Note [Pinned copies]).
using CrossDeviceCopyFn = void (*)(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                                   bool non_blocking);
GR_DECLARE_DISPATCH(CrossDeviceCopyFn, cross_device_copy_stub);

}  // namespace gr::native

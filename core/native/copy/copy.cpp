// copy_/contiguous/conversion/fill and their CPU kernels.
#include "core/native/copy/copy.h"

#include <cstring>

#include "core/factory.h"
#include "core/functors.h"
#include "core/native/elementwise/cpu_loops.h"

namespace gr::native {

GR_DEFINE_DISPATCH(ConvertFn, convert_stub);
GR_DEFINE_DISPATCH(FillFn, fill_stub);
GR_DEFINE_DISPATCH(CrossDeviceCopyFn, cross_device_copy_stub);

static void convert_cpu(const StridedLoop& L, ScalarType out, ScalarType in) {
  dispatch_all(out, "copy", [&]<class O>() {
    dispatch_all(in, "copy", [&]<class I>() { cpu_map<O, I>(L, functors::Convert<O, I>{}); });
  });
}
GR_REGISTER_KERNEL(convert_stub, kCPU, &convert_cpu);

static void fill_cpu(const StridedLoop& L, ScalarType t, const Scalar& value) {
  dispatch_all(t, "fill_", [&]<class T>() {
    cpu_map<T>(L, functors::Fill<T>{value.to<T>()});
  });
}
GR_REGISTER_KERNEL(fill_stub, kCPU, &fill_cpu);

void copy_(const Tensor& dst, const Tensor& src, bool non_blocking) {
  GR_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  broadcast_shapes(dst.sizes(), src.sizes(), "copy_");
  GR_CHECK(src.dim() <= dst.dim(), "copy_: source shape ", src.sizes(), " cannot be broadcast to ", dst.sizes());
  if (dst.numel() == 0) return;
  if (dst.device() != src.device()) {
    // Move the bytes between devices contiguously, then convert on the destination.
    // One side is always a CUDA device, so the CUDA backend owns this copy.
    Tensor s = contiguous(src);
    Tensor staged = empty(s.sizes(), TensorOptions(s.scalar_type()).device(dst.device()));
    cross_device_copy_stub(kCUDA, staged.data_ptr(), staged.device(), s.data_ptr(), s.device(), s.nbytes(),
                           non_blocking);
    copy_(dst, staged);
    return;
  }
  if (dst.is_same(src)) return;
  dst.unsafe_impl()->storage.bump_version();
  Tensor source = src;
  // A source that overlaps the destination in a different layout is read from a copy.
  if (src.storage().is_same(dst.storage()) &&
      !(src.storage_offset() == dst.storage_offset() && src.sizes() == dst.sizes() && src.strides() == dst.strides()))
    source = clone(src);
  if (source.scalar_type() == dst.scalar_type() && dst.is_contiguous() && source.is_contiguous() &&
      source.sizes() == dst.sizes() && dst.is_cpu()) {
    std::memcpy(dst.data_ptr(), source.data_ptr(), dst.nbytes());
    return;
  }
  StridedLoop L = make_strided_loop({dst, source}, dst.sizes());
  convert_stub(dst.device(), L, dst.scalar_type(), source.scalar_type());
}

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options());
  copy_(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor to_dtype(const Tensor& t, ScalarType dtype) {
  if (t.scalar_type() == dtype) return t;
  Tensor out = empty(t.sizes(), t.options().dtype(dtype));
  copy_(out, t);
  return out;
}

Tensor to_device(const Tensor& t, Device device, bool non_blocking) {
  if (t.device() == device) return t;
  Tensor out = empty(t.sizes(), t.options().device(device));
  copy_(out, t, non_blocking);
  return out;
}

void fill_(const Tensor& t, const Scalar& value) {
  if (t.numel() == 0) return;
  t.unsafe_impl()->storage.bump_version();
  StridedLoop L = make_strided_loop({t}, t.sizes());
  fill_stub(t.device(), L, t.scalar_type(), value);
}

}  // namespace gr::native

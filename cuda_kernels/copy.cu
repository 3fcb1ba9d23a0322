// CUDA copies: element-wise dtype conversion and fill on the device (gpu_map), and the
// byte copy between the CPU and a device or between devices (blocking unless from pinned memory).
#include "core/functors.h"
#include "core/native/copy.h"
#include "cuda_kernels/event.h"
#include "cuda_kernels/loops.cuh"
#include "cuda_kernels/pinned.h"
#include "cuda_kernels/stream.h"

namespace gr::cuda {
namespace {

using native::StridedLoop;

// A same-dtype copy between two dense, identically laid out runs is a plain memcpy.
bool is_dense_copy(const StridedLoop& L) { return L.ndim() == 1 && L.strides[0][0] == 1 && L.strides[1][0] == 1; }

void convert_cuda(const StridedLoop& L, ScalarType out, ScalarType in) {
  if (L.numel == 0) return;
  if (out == in && is_dense_copy(L)) {
    GR_CUDA_CHECK(cudaMemcpyAsync(L.data[0], L.data[1], static_cast<size_t>(L.numel) * element_size(out),
                                  cudaMemcpyDeviceToDevice, current_stream()));
    return;
  }
  dispatch_all(out, "copy", [&]<class O>() {
    dispatch_all(in, "copy", [&]<class I>() { gpu_map<O, I>(L, functors::Convert<O, I>{}, current_stream(), "copy"); });
  });
}

void fill_cuda(const StridedLoop& L, ScalarType t, const Scalar& value) {
  dispatch_all(t, "fill_", [&]<class T>() { gpu_map<T>(L, functors::Fill<T>{value.to<T>()}, current_stream(), "fill_"); });
}

// Blocking, except from pinned memory with non_blocking (Note [Pinned copies]): when it
// returns, a D2H destination holds the data and an H2D source may be freed (a pinned one is
// kept alive by the pinned allocator until the copy has run).
void cross_device_copy_cuda(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                            bool non_blocking) {
  GR_CHECK(dst_device.is_cuda() || src_device.is_cuda(), "copy: internal: no CUDA side in a copy from ", src_device,
           " to ", dst_device);
  if (nbytes == 0) return;
  DeviceGuard guard(dst_device.is_cuda() ? dst_device.index() : src_device.index());
  cudaStream_t stream = current_stream();
  if (src_device.is_cpu() && record_pinned_use(src, stream)) {
    GR_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, stream));
    if (!non_blocking) {
      note_host_sync();
      GR_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return;
  }
  if (dst_device.is_cuda() && src_device.is_cuda()) {
    if (src_device.index() != dst_device.index()) {
      // The source was produced on its own device's stream: order the copy after that work.
      Event produced;
      produced.record(Stream::current(src_device.index()));
      Stream(stream, dst_device.index()).wait(produced);
    }
    GR_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device.index(), src, src_device.index(), nbytes, stream));
  } else {
    cudaMemcpyKind kind = dst_device.is_cuda() ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    GR_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, stream));
  }
  note_host_sync();  // Note [Host synchronisations]
  GR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

GR_REGISTER_KERNEL(native::convert_stub, kCUDA, &convert_cuda);
GR_REGISTER_KERNEL(native::fill_stub, kCUDA, &fill_cuda);
GR_REGISTER_KERNEL(native::cross_device_copy_stub, kCUDA, &cross_device_copy_cuda);

}  // namespace gr::cuda

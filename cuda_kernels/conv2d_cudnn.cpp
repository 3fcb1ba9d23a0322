// conv2d on cuDNN (see conv2d_cudnn.h). Each pass of each problem gets its list of usable
// algorithms once (cuDNN's _v7 heuristics, or cudnnFind*AlgorithmEx timings in benchmark
// mode), each with the workspace cudnnGet*WorkspaceSize reports, and caches it; a call takes
// the first algorithm within the workspace limit whose workspace the device allocator can
// give, falling back to algorithms needing less after a failed allocation and to the next
// one after NOT_SUPPORTED. float32 runs FMA math only (no TF32), like the cuBLAS GEMMs. Under
// deterministic algorithms only those cuDNN rates deterministic, in the heuristics' order.
#include "cuda_kernels/conv2d_cudnn.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "core/deterministic.h"
#include "core/error.h"
#include "core/factory.h"
#include "cuda_kernels/conv2d.h"
#include "cuda_kernels/conv2d_algo_cache.h"
#include "cuda_kernels/cudnn_common.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using native::Conv2dArgs;

ConvAlgoCache& algo_cache() {
  static ConvAlgoCache cache;
  return cache;
}

const float kOneF = 1.0f, kZeroF = 0.0f;
const double kOneD = 1.0, kZeroD = 0.0;
// cuDNN's scaling factors are double for double data and float otherwise.
const void* one(ScalarType t) { return t == kFloat64 ? static_cast<const void*>(&kOneD) : &kOneF; }
const void* zero(ScalarType t) { return t == kFloat64 ? static_cast<const void*>(&kZeroD) : &kZeroF; }

// The legacy descriptors take int dims, and tensors of 2^31 elements or more are not safe
// with every algorithm; such problems (and empty channel counts) go to im2col.
bool fits_cudnn(const Conv2dArgs& a) {
  const int64_t dims[] = {a.N,     a.C_in,  a.H,      a.W,        a.C_out,    a.kH,    a.kW,
                          a.H_out, a.W_out, a.groups, a.stride_h, a.stride_w, a.dil_h, a.dil_w};
  for (int64_t d : dims)
    if (d < 1 || d > INT_MAX) return false;
  return a.pad_h <= INT_MAX && a.pad_w <= INT_MAX && a.N * a.C_in * a.H * a.W <= INT_MAX &&
         a.N * a.C_out * a.H_out * a.W_out <= INT_MAX && a.C_out * (a.C_in / a.groups) * a.kH * a.kW <= INT_MAX;
}

// The descriptors of one problem: x [N, C_in, H, W], y [N, C_out, H_out, W_out] (also dy), w.
struct ConvProblem {
  ConvProblem(const Conv2dArgs& a, ScalarType t)
      : x(t, int(a.N), int(a.C_in), int(a.H), int(a.W)),
        y(t, int(a.N), int(a.C_out), int(a.H_out), int(a.W_out)),
        w(t, int(a.C_out), int(a.C_in / a.groups), int(a.kH), int(a.kW)),
        conv(t, int(a.pad_h), int(a.pad_w), int(a.stride_h), int(a.stride_w), int(a.dil_h), int(a.dil_w),
             int(a.groups)) {}
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
};

// Device buffers of a pass; `out` is y (forward), dx (backward data) or dw (backward filter).
struct Buffers {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* dy = nullptr;
  void* out = nullptr;
};

// The cuDNN calls of each pass, under one interface. Calls whose NOT_SUPPORTED has a
// fallback return false for it (GR_CUDNN_SUPPORTED); the others throw on any failure.
template <ConvPass P>
struct PassCalls;

template <>
struct PassCalls<ConvPass::kForward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static int max_count(cudnnHandle_t h) {
    int n = 0;
    GR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &n));
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvProblem& p, int n, int* got, Perf* perf) {
    GR_CUDNN_CHECK(
        cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(), n, got, perf));
  }
  static bool find(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, int n, int* got, Perf* perf, void* ws,
                   size_t bytes) {
    return GR_CUDNN_SUPPORTED(cudnnFindConvolutionForwardAlgorithmEx(h, p.x.get(), b.x, p.w.get(), b.w, p.conv.get(),
                                                                     p.y.get(), b.out, n, got, perf, ws, bytes));
  }
  static bool workspace(cudnnHandle_t h, const ConvProblem& p, Algo algo, size_t* bytes) {
    return GR_CUDNN_SUPPORTED(
        cudnnGetConvolutionForwardWorkspaceSize(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(), algo, bytes));
  }
  static bool run(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, Algo algo, void* ws, size_t bytes,
                  ScalarType t) {
    return GR_CUDNN_SUPPORTED(cudnnConvolutionForward(h, one(t), p.x.get(), b.x, p.w.get(), b.w, p.conv.get(), algo, ws,
                                                      bytes, zero(t), p.y.get(), b.out));
  }
};

template <>
struct PassCalls<ConvPass::kBackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static int max_count(cudnnHandle_t h) {
    int n = 0;
    GR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &n));
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvProblem& p, int n, int* got, Perf* perf) {
    GR_CUDNN_CHECK(
        cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w.get(), p.y.get(), p.conv.get(), p.x.get(), n, got, perf));
  }
  static bool find(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, int n, int* got, Perf* perf, void* ws,
                   size_t bytes) {
    return GR_CUDNN_SUPPORTED(cudnnFindConvolutionBackwardDataAlgorithmEx(
        h, p.w.get(), b.w, p.y.get(), b.dy, p.conv.get(), p.x.get(), b.out, n, got, perf, ws, bytes));
  }
  static bool workspace(cudnnHandle_t h, const ConvProblem& p, Algo algo, size_t* bytes) {
    return GR_CUDNN_SUPPORTED(
        cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w.get(), p.y.get(), p.conv.get(), p.x.get(), algo, bytes));
  }
  static bool run(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, Algo algo, void* ws, size_t bytes,
                  ScalarType t) {
    return GR_CUDNN_SUPPORTED(cudnnConvolutionBackwardData(h, one(t), p.w.get(), b.w, p.y.get(), b.dy, p.conv.get(),
                                                           algo, ws, bytes, zero(t), p.x.get(), b.out));
  }
};

template <>
struct PassCalls<ConvPass::kBackwardFilter> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static int max_count(cudnnHandle_t h) {
    int n = 0;
    GR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &n));
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvProblem& p, int n, int* got, Perf* perf) {
    GR_CUDNN_CHECK(
        cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.x.get(), p.y.get(), p.conv.get(), p.w.get(), n, got, perf));
  }
  static bool find(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, int n, int* got, Perf* perf, void* ws,
                   size_t bytes) {
    return GR_CUDNN_SUPPORTED(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        h, p.x.get(), b.x, p.y.get(), b.dy, p.conv.get(), p.w.get(), b.out, n, got, perf, ws, bytes));
  }
  static bool workspace(cudnnHandle_t h, const ConvProblem& p, Algo algo, size_t* bytes) {
    return GR_CUDNN_SUPPORTED(
        cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x.get(), p.y.get(), p.conv.get(), p.w.get(), algo, bytes));
  }
  static bool run(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, Algo algo, void* ws, size_t bytes,
                  ScalarType t) {
    return GR_CUDNN_SUPPORTED(cudnnConvolutionBackwardFilter(h, one(t), p.x.get(), b.x, p.y.get(), b.dy, p.conv.get(),
                                                             algo, ws, bytes, zero(t), p.w.get(), b.out));
  }
};

// `bytes` of workspace from the device allocator, or nothing when it cannot give them (out
// of memory). Freed when the tensor goes, after the work using it is queued on the stream.
std::optional<Tensor> try_workspace(size_t bytes, int device) {
  try {
    return empty({static_cast<int64_t>(bytes)}, TensorOptions(kUInt8).device(Device(kCUDA, device)));
  } catch (const Error&) {
    return std::nullopt;
  }
}

// perf[0, got) -> the usable algorithms in cuDNN's order: those it reports as working, that
// keep the descriptor's math (no tensor-op math for float32), that are deterministic when
// that is asked for, and whose workspace it sizes.
template <ConvPass P>
ConvAlgoList usable(cudnnHandle_t h, const ConvProblem& p, const std::vector<typename PassCalls<P>::Perf>& perf,
                    int got, bool deterministic) {
  const bool fma_only = p.conv.math_type() == CUDNN_FMA_MATH;
  ConvAlgoList list;
  for (int i = 0; i < got; ++i) {
    const auto& r = perf[static_cast<size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    if (fma_only && r.mathType != CUDNN_FMA_MATH && r.mathType != CUDNN_DEFAULT_MATH) continue;
    if (!conv_algo_allowed(r.determinism == CUDNN_DETERMINISTIC, deterministic)) continue;
    const int algo = static_cast<int>(r.algo);
    if (std::any_of(list.begin(), list.end(), [&](const ConvAlgoCandidate& c) { return c.algo == algo; })) continue;
    size_t bytes = 0;
    if (!PassCalls<P>::workspace(h, p, r.algo, &bytes)) continue;
    list.push_back({algo, static_cast<int>(r.mathType), bytes});
  }
  return list;
}

// The problem's algorithms in preference order: heuristics, or (benchmark mode, unless
// deterministic) timings with a workspace as large as the largest the heuristics list needs
// within the limit.
template <ConvPass P>
ConvAlgoList search(cudnnHandle_t h, const ConvProblem& p, const Buffers& b, int device, bool deterministic) {
  using Calls = PassCalls<P>;
  const int n = std::max(Calls::max_count(h), 1);
  std::vector<typename Calls::Perf> perf(static_cast<size_t>(n));
  int got = 0;
  Calls::heuristics(h, p, n, &got, perf.data());
  ConvAlgoList list = usable<P>(h, p, perf, got, deterministic);
  if (!conv_algos_timed(cudnn_benchmark(), deterministic) || list.empty()) return list;
  size_t bytes = 0;
  for (const ConvAlgoCandidate& c : list)
    if (c.workspace <= conv2d_workspace_limit()) bytes = std::max(bytes, c.workspace);
  std::optional<Tensor> ws = try_workspace(bytes, device);
  if (!ws) {  // time the algorithms that need no workspace
    bytes = 0;
    ws = try_workspace(0, device);
  }
  got = 0;
  if (!ws || !Calls::find(h, p, b, n, &got, perf.data(), ws->data_ptr(), bytes)) return list;
  ConvAlgoList timed = usable<P>(h, p, perf, got, deterministic);  // fastest first
  return timed.empty() ? list : timed;
}

// Runs pass P with the first algorithm that fits (see the file comment). False when none
// ran: cuDNN supports none of them, or no workspace could be had for any.
template <ConvPass P>
bool run_pass(const Conv2dArgs& a, ScalarType t, cudnnHandle_t h, const ConvProblem& p, const Buffers& b) {
  const int device = current_device();
  const bool deterministic = are_deterministic_algorithms_enabled();
  const ConvAlgoKey key = conv_algo_key(a, t, device, P, deterministic);
  std::optional<ConvAlgoList> cached = algo_cache().find(key);
  const ConvAlgoList list =
      cached ? std::move(*cached) : algo_cache().insert(key, search<P>(h, p, b, device, deterministic));
  ConvAlgoPicker picker(list, conv2d_workspace_limit());
  while (const ConvAlgoCandidate* c = picker.next()) {
    std::optional<Tensor> ws = try_workspace(c->workspace, device);
    if (!ws) {
      picker.allocation_failed(c->workspace);
      continue;
    }
    const auto algo = static_cast<typename PassCalls<P>::Algo>(c->algo);
    if (PassCalls<P>::run(h, p, b, algo, ws->data_ptr(), c->workspace, t)) return true;
  }
  return false;
}

}  // namespace

bool conv2d_forward_cudnn(const Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b, void* y) {
  if (!fits_cudnn(a)) return false;
  cudnnHandle_t h = cudnn_handle();
  ConvProblem p(a, t);
  if (!run_pass<ConvPass::kForward>(a, t, h, p, {x, w, nullptr, y})) return false;
  if (b != nullptr) {
    TensorDescriptor bias(t, 1, static_cast<int>(a.C_out), 1, 1);
    GR_CUDNN_CHECK(cudnnAddTensor(h, one(t), bias.get(), b, one(t), p.y.get(), y));
  }
  return true;
}

void conv2d_backward_cudnn(const Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w, void*& gx,
                           void*& gw, void*& gb) {
  if (!fits_cudnn(a)) return;
  cudnnHandle_t h = cudnn_handle();
  ConvProblem p(a, t);
  if (gb != nullptr) {
    TensorDescriptor bias(t, 1, static_cast<int>(a.C_out), 1, 1);
    if (GR_CUDNN_SUPPORTED(cudnnConvolutionBackwardBias(h, one(t), p.y.get(), gy, zero(t), bias.get(), gb)))
      gb = nullptr;
  }
  if (gx != nullptr && run_pass<ConvPass::kBackwardData>(a, t, h, p, {nullptr, w, gy, gx})) gx = nullptr;
  if (gw != nullptr && run_pass<ConvPass::kBackwardFilter>(a, t, h, p, {x, nullptr, gy, gw})) gw = nullptr;
}

size_t cudnn_algo_cache_size() { return algo_cache().size(); }
void cudnn_clear_algo_cache() { algo_cache().clear(); }

}  // namespace gr::cuda

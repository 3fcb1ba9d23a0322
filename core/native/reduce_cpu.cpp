// CPU reduction kernels: one loop over contiguous [outer, R, inner] blocks runs every op of
// core/reduce_functors.h (see Note [CPU reduction loops]); max/min with indices beside it.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/native/bool_bytes.h"
#include "core/native/lane_sums.h"
#include "core/native/reduce.h"
#include "core/parallel.h"
#include "core/reduce_functors.h"

namespace gr::native {
namespace {

namespace ops = gr::reduce_ops;

// Note [CPU reduction loops]
// A row (inner == 1: the reduced elements are contiguous) is folded by independent lanes,
// which the compiler keeps in vector registers, merged at the end by a fixed tree (See Note
// [Lane folds]; Welford's kLanes are its own). Columns (inner > 1) fold a tile of up to
// kTile neighbouring outputs at once; the loop over the tile vectorises. A long row is cut into chunks of kRowChunk elements, and columns
// with few outputs into at most kMaxChunks runs of R, whose partial results are combined in
// order: threads can share one reduction, and since the cuts depend on the shape only, the
// result never depends on the number of threads.
template <class Acc>
constexpr int kLanes = sizeof(Acc) >= 8 ? 32 : 64;
constexpr int64_t kRowChunk = 16384;
constexpr int64_t kTile = 128;
constexpr int64_t kMaxChunks = 64;

template <class T>
inline ops::value_t<T> load(T v) {
  return static_cast<ops::value_t<T>>(v);
}

// Folds with the op's own reduce (the default). Bools are read as bytes (See Note [Bools
// read as bytes]): every op gives a byte 0 or 1 the value it gives the bool.
template <class Op, class In>
struct LaneFolder {
  using Acc = decltype(std::declval<Op>().identity());
  using S = stored_t<In>;
  Op op;

  Acc combine(Acc a, Acc b) const { return op.combine(a, b); }
  Acc row(const In* p, int64_t n) const { return fold_row(op, reinterpret_cast<const S*>(p), n); }
  // acc[j] = the fold of p[r * inner + j] over r < n, for j < m.
  void cols(const In* p, int64_t n, int64_t inner, int64_t m, Acc* acc) const {
    for (int64_t j = 0; j < m; ++j) acc[j] = op.identity();
    for (int64_t r = 0; r < n; ++r) {
      const S* q = reinterpret_cast<const S*>(p + r * inner);
      for (int64_t j = 0; j < m; ++j) acc[j] = op.reduce(acc[j], load(q[j]));
    }
  }
};

// Welford with the lanes' means and squared deviations in separate arrays: every lane has
// seen the same number of values, so one reciprocal serves them all and the update vectorises.
template <class A, class In>
struct WelfordFolder {
  using Op = ops::Welford<A>;
  using Data = ops::WelfordData<A>;
  using Acc = Data;  // what reduce_loop carries
  Op op;

  Data combine(Data a, Data b) const { return op.combine(a, b); }
  Data row(const In* p, int64_t n) const {
    constexpr int L = kLanes<A>;
    A mean[L] = {}, m2[L] = {};
    const int64_t steps = n / L, tail = n % L;
    for (int64_t s = 0; s < steps; ++s) {
      const A inv = A(1) / static_cast<A>(s + 1);
      for (int k = 0; k < L; ++k) Op::update(mean[k], m2[k], static_cast<A>(load(p[s * L + k])), inv);
    }
    const A inv = A(1) / static_cast<A>(steps + 1);
    for (int k = 0; k < tail; ++k) Op::update(mean[k], m2[k], static_cast<A>(load(p[steps * L + k])), inv);
    Data d[L];
    for (int k = 0; k < L; ++k) d[k] = {mean[k], m2[k], steps + (k < tail ? 1 : 0)};
    for (int w = L / 2; w > 0; w /= 2)
      for (int k = 0; k < w; ++k) d[k] = op.combine(d[k], d[k + w]);
    return d[0];
  }
  void cols(const In* p, int64_t n, int64_t inner, int64_t m, Data* acc) const {
    A mean[kTile] = {}, m2[kTile] = {};
    for (int64_t r = 0; r < n; ++r) {
      const In* q = p + r * inner;
      const A inv = A(1) / static_cast<A>(r + 1);
      for (int64_t j = 0; j < m; ++j) Op::update(mean[j], m2[j], static_cast<A>(load(q[j])), inv);
    }
    for (int64_t j = 0; j < m; ++j) acc[j] = {mean[j], m2[j], n};
  }
};

// Runs a folder over in[outer, R, inner] and hands each output's accumulator to
// store(k, acc), k = o * inner + j. See Note [CPU reduction loops].
template <class Folder, class In, class Store>
void reduce_loop(const Folder& f, const In* in, int64_t outer, int64_t R, int64_t inner, const Store& store) {
  using Acc = typename Folder::Acc;
  if (inner == 1) {
    const int64_t chunks = std::max<int64_t>(1, (R + kRowChunk - 1) / kRowChunk);
    if (chunks == 1) {
      // Note [Prefetching reduced rows] (as Note [Prefetching rows]): a row of 1 to 64 KB
      // prefetches the next while it is folded. A 4 KB row is a page, and the hardware
      // prefetcher, which stays within a page, has to find each row's stream again: sum/amax
      // over [4096, 1024] floats from memory (load 5) took 0.53-0.67 and 0.62-0.76 ms without,
      // 0.42-0.56 and 0.44-0.56 ms with (interleaved in one process; within the noise once the
      // rows sit in L3).
      // Tried at 1 thread over [4096, 1024] floats from L3 (load 5, one binary, variants
      // alternated; issue 15): summing 2, 4 or 8 rows together (cascade_sum's order per row,
      // several streams at once) took 0.35-0.39, 0.38-0.45 and 0.40-0.53 ms against 0.32-0.33
      // row by row (4 rows against PyTorch 2.15 in the same window: 0.41 vs 0.33 ms); prefetching
      // 2 or 3 rows ahead 0.33 ms, as 1 row; no prefetch 0.34-0.38 ms. Row by row, 1 ahead, stays.
      const int64_t row_bytes = R * static_cast<int64_t>(sizeof(In));
      const bool prefetch = row_bytes >= 1024 && row_bytes <= (64 << 10);
      parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          if (prefetch && o + 1 < e) {
            const char* next = reinterpret_cast<const char*>(in + (o + 1) * R);
            for (int64_t k = 0; k < row_bytes; k += 64) __builtin_prefetch(next + k);
          }
          store(o, f.row(in + o * R, R));
        }
      });
      return;
    }
    std::unique_ptr<Acc[]> part(new Acc[outer * chunks]);
    parallel_for(0, outer * chunks, std::max<int64_t>(1, kGrainSize / kRowChunk), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / chunks, r0 = (t % chunks) * kRowChunk;
        part[t] = f.row(in + o * R + r0, std::min(kRowChunk, R - r0));
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      Acc a = part[o * chunks];
      for (int64_t c = 1; c < chunks; ++c) a = f.combine(a, part[o * chunks + c]);
      store(o, a);
    }
    return;
  }
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t width = std::min(inner, kTile);
  // Few tiles of long columns: cut R into runs of about kRowChunk elements per tile.
  const int64_t chunks =
      outer * tiles >= kMaxChunks ? 1 : std::clamp<int64_t>(R * width / kRowChunk, 1, kMaxChunks);
  const int64_t run = (R + chunks - 1) / chunks;
  std::unique_ptr<Acc[]> part(chunks > 1 ? new Acc[outer * chunks * inner] : nullptr);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(run * width, 1));
  parallel_for(0, outer * tiles * chunks, grain, [&](int64_t b, int64_t e) {
    Acc acc[kTile];
    for (int64_t t = b; t < e; ++t) {
      const int64_t c = t % chunks, tile = (t / chunks) % tiles, o = t / (chunks * tiles);
      const int64_t j0 = tile * kTile, m = std::min(kTile, inner - j0);
      const int64_t r0 = std::min(R, c * run), n = std::min(run, R - r0);
      f.cols(in + (o * R + r0) * inner + j0, n, inner, m, acc);
      if (chunks == 1) {
        for (int64_t j = 0; j < m; ++j) store(o * inner + j0 + j, acc[j]);
      } else {
        std::copy(acc, acc + m, part.get() + (o * chunks + c) * inner + j0);
      }
    }
  });
  if (chunks == 1) return;
  parallel_for(0, outer * inner, kGrainSize / chunks, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / inner, j = k % inner;
      Acc a = part[o * chunks * inner + j];
      for (int64_t c = 1; c < chunks; ++c) a = f.combine(a, part[(o * chunks + c) * inner + j]);
      store(k, a);
    }
  });
}

// A reduction whose result is the op's projection converted to Out.
template <class In, class Out, class Op>
void reduce_to(const Op& op, const void* in, void* out, int64_t outer, int64_t R, int64_t inner) {
  reduce_loop(LaneFolder<Op, In>{op}, static_cast<const In*>(in), outer, R, inner,
              ops::ProjectTo<Out, Op>{static_cast<Out*>(out), op});
}

template <class In>
constexpr bool is_floating = std::is_floating_point_v<ops::value_t<In>>;
using ops::sum_out_t;

void sum_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t, ScalarType out_t) {
  dispatch_all(in_t, "sum", [&]<class In>() {
    GR_CHECK(scalar_type_of<sum_out_t<In>> == out_t, "sum: dtype ", in_t, " -> ", out_t, " is not supported");
    reduce_to<In, sum_out_t<In>>(ops::Sum<ops::acc_t<In>>{}, in, out, outer, R, inner);
  });
}

void mean_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double count) {
  dispatch_all(t, "mean", [&]<class In>() {
    if constexpr (is_floating<In>) {
      using Acc = ops::acc_t<In>;
      reduce_loop(LaneFolder<ops::Sum<Acc>, In>{{}}, static_cast<const In*>(in), outer, R, inner,
                  ops::MeanTo<In, Acc>{static_cast<In*>(out), static_cast<Acc>(count)});
    } else {
      GR_ERROR("mean: expected a floating point input, got ", t);
    }
  });
}

void prod_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "prod", [&]<class In>() {
    reduce_to<In, sum_out_t<In>>(ops::Prod<ops::acc_t<In>>{}, in, out, outer, R, inner);
  });
}

template <bool IsMax>
void extreme_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, IsMax ? "amax" : "amin", [&]<class In>() {
    using V = ops::value_t<In>;
    using Op = std::conditional_t<IsMax, ops::Max<V>, ops::Min<V>>;
    reduce_to<In, In>(Op{}, in, out, outer, R, inner);
  });
}

void norm_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double p) {
  dispatch_all(t, "norm", [&]<class In>() {
    if constexpr (is_floating<In>) {
      ops::with_norm_op<ops::acc_t<In>>(p, [&](const auto& op) { reduce_to<In, In>(op, in, out, outer, R, inner); });
    } else {
      GR_ERROR("norm: expected a floating point input, got ", t);
    }
  });
}

template <class Op>
void logical_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "any/all", [&]<class In>() {
    using Out = std::conditional_t<std::is_same_v<In, uint8_t>, uint8_t, bool>;  // uint8 stays uint8, as torch
    reduce_to<In, Out>(Op{}, in, out, outer, R, inner);
  });
}

void count_nonzero_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, double) {
  dispatch_all(t, "count_nonzero",
               [&]<class In>() { reduce_to<In, int64_t>(ops::CountNonzero{}, in, out, outer, R, inner); });
}

void var_cpu(const void* in, void* out, void* mean_out, int64_t outer, int64_t R, int64_t inner, ScalarType t,
             double correction, bool take_sqrt) {
  dispatch_all(t, "var", [&]<class In>() {
    if constexpr (is_floating<In>) {
      using Acc = ops::acc_t<In>;
      reduce_loop(WelfordFolder<Acc, In>{}, static_cast<const In*>(in), outer, R, inner,
                  ops::VarTo<In, Acc>{static_cast<In*>(out), static_cast<In*>(mean_out), correction, take_sqrt});
    } else {
      GR_ERROR("var: expected a floating point input, got ", t);
    }
  });
}

// ---- max / min with the index of the first extreme ----

// Note [Max with indices over rows]
// Over contiguous rows the extreme value is first found by the lane fold of amax/amin (which
// vectorises, NaN winning), then its first position by a plain scan that stops there: the
// same answer as ArgExtreme's single pass (the first extreme, or the first NaN), with the
// comparisons of the long pass done a vector of lanes at a time.
template <class Op, class T>
void max_rows(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R) {
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    const LaneFolder<Op, T> fold{};
    for (int64_t o = b; o < e; ++o) {
      const T* p = in + o * R;
      const auto best = fold.row(p, R);
      int64_t i = 0;
      if (math::isnan(best)) {
        while (!math::isnan(load(p[i]))) ++i;
      } else {
        while (!(load(p[i]) == best)) ++i;
      }
      values[o] = p[i];
      if (indices) indices[o] = i;
    }
  });
}

// Columns: ties and NaN follow functors::ArgExtreme, shared with the CUDA kernel;
// bfloat16/float16 compare as float32.
template <class T>
void max_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, bool is_max) {
  using V = ops::value_t<T>;
  if (inner == 1) {
    if (is_max) max_rows<ops::Max<V>>(in, values, indices, outer, R);
    else max_rows<ops::Min<V>>(in, values, indices, outer, R);
    return;
  }
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    const functors::ArgExtreme<V> beats{is_max};
    for (int64_t k = b; k < e; ++k) {
      const T* p = in + (k / inner) * R * inner + k % inner;
      V best = load(p[0]);
      int64_t best_i = 0;
      for (int64_t r = 1; r < R && !math::isnan(best); ++r) {
        const V v = load(p[r * inner]);
        if (beats(v, r, best, best_i)) best = v, best_i = r;
      }
      values[k] = p[best_i * inner];
      if (indices) indices[k] = best_i;
    }
  });
}

void max_cpu(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
             bool is_max) {
  dispatch_all(t, is_max ? "max" : "min", [&]<class T>() {
    max_kernel(static_cast<const T*>(in), static_cast<T*>(values), indices, outer, R, inner, is_max);
  });
}

}  // namespace

GR_REGISTER_KERNEL(sum_stub, kCPU, &sum_cpu);
GR_REGISTER_KERNEL(mean_stub, kCPU, &mean_cpu);
GR_REGISTER_KERNEL(prod_stub, kCPU, &prod_cpu);
GR_REGISTER_KERNEL(amax_stub, kCPU, &extreme_cpu<true>);
GR_REGISTER_KERNEL(amin_stub, kCPU, &extreme_cpu<false>);
GR_REGISTER_KERNEL(norm_stub, kCPU, &norm_cpu);
GR_REGISTER_KERNEL(any_stub, kCPU, &logical_cpu<ops::Any>);
GR_REGISTER_KERNEL(all_stub, kCPU, &logical_cpu<ops::All>);
GR_REGISTER_KERNEL(count_nonzero_stub, kCPU, &count_nonzero_cpu);
GR_REGISTER_KERNEL(var_stub, kCPU, &var_cpu);
GR_REGISTER_KERNEL(max_stub, kCPU, &max_cpu);

}  // namespace gr::native

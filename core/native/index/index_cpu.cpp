// CPU kernels of the indexing ops (contracts in index_ops.h): gather, scatter, the offsets of
// advanced indexing and masked_fill (nonzero and the masks' compactions: masked_cpu.cpp). Runs whose index is the same for every element
// (index_select, index_add: one row per index) are copied or combined row by row.
#include <cstring>

#include "core/factory.h"
#include "core/index_functors.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/cpu_loops.h"
#include "core/native/index/index_loops.h"

namespace gr::native {
namespace {

namespace F = gr::functors;

// Whether every index of a run is in [0, size): one vectorisable pass, so that the copy after
// it needs no branch (an invalid index is then found, and reported, by the checked loop).
template <class I>
bool all_valid(const I* ix, int64_t n, const IndexAxis& axis) {
  uint64_t largest = 0;  // negative indices are huge as unsigned
  for (int64_t j = 0; j < n; ++j) largest = std::max(largest, static_cast<uint64_t>(ix[j]));
  return n == 0 || largest < static_cast<uint64_t>(axis.size);
}

// o[j] = row[ix[j] * stride] for indices already checked: no branch in the loop.
template <class T, class I>
void gather_row(T* o, const T* row, const I* ix, int64_t n, int64_t stride) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) o[j] = row[ix[j]];
  } else {
    for (int64_t j = 0; j < n; ++j) o[j] = row[ix[j] * stride];
  }
}

template <class T, class I>
void gather_kernel(const StridedLoop& L, IndexAxis axis) {
  const int64_t step = axis.stride * static_cast<int64_t>(sizeof(T));
  constexpr int64_t kT = sizeof(T);
  for_each_run<3>(L, {kT, kT, sizeof(I)}, kGrainSize, false, [&](char* const* p, const int64_t* s, int64_t n) {
    char* out = p[0];
    const char* src = p[1];
    const char* idx = p[2];
    if (s[2] == 0) {  // one index for the whole run: copy a row
      const char* row = src + check_index(*reinterpret_cast<const I*>(idx), axis) * step;
      if (s[0] == kT && s[1] == kT) {
        copy_row(out, row, static_cast<size_t>(n) * kT);  // See Note [Row copies]
      } else {
        for (int64_t j = 0; j < n; ++j) *reinterpret_cast<T*>(out + j * s[0]) = *reinterpret_cast<const T*>(row + j * s[1]);
      }
      return;
    }
    if (s[0] == kT && s[2] == static_cast<int64_t>(sizeof(I))) {  // contiguous output and indices
      T* o = reinterpret_cast<T*>(out);
      const I* ix = reinterpret_cast<const I*>(idx);
      if (s[1] == 0 && !axis.wrap && all_valid(ix, n, axis)) {  // one source row, indices checked
        if (axis.stride == 1 && worth_prefetching_row(axis.size, kT, n))  // See Note [Prefetching rows]
          prefetch_row(src + axis.size * kT, axis.size * kT);
        gather_row(o, reinterpret_cast<const T*>(src), ix, n, axis.stride);
        return;
      }
      for (int64_t j = 0; j < n; ++j) o[j] = *reinterpret_cast<const T*>(src + j * s[1] + check_index(ix[j], axis) * step);
      return;
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = check_index(*reinterpret_cast<const I*>(idx + j * s[2]), axis);
      *reinterpret_cast<T*>(out + j * s[0]) = *reinterpret_cast<const T*>(src + j * s[1] + i * step);
    }
  });
}

void gather_cpu(const StridedLoop& L, ScalarType t, ScalarType index_t, IndexAxis axis) {
  dispatch_all(t, "gather", [&]<class T>() {
    dispatch_index(index_t, "gather", [&]<class I>() { gather_kernel<T, I>(L, axis); });
  });
}

// Note [Scatter out of place]
// scatter_add(self, ...) used to clone self (16 MB for [4096, 1024] float) and then scatter:
// the clone pushed the first rows out of cache before the scatter read them again, and 60% of
// the time went to waiting on those reads (0.64x PyTorch). Now each rest run copies its lines
// (self's elements along the scattered dim) a tile at a time, about 16 KB, and scatters into
// the tile while it is still in L1; a tile takes at least 16 positions when the lines are not
// contiguous, so that their copy still moves 16 elements at a time.
template <class T>
void copy_lines(char* dst, int64_t dst_pos, int64_t dst_line, const char* src, int64_t src_pos, int64_t src_line,
                int64_t positions, int64_t len) {
  constexpr int64_t kT = sizeof(T);
  if (dst_line == kT && src_line == kT) {
    for (int64_t i = 0; i < positions; ++i) std::memcpy(dst + i * dst_pos, src + i * src_pos, static_cast<size_t>(len * kT));
  } else if (dst_pos == kT && src_pos == kT) {
    for (int64_t k = 0; k < len; ++k)
      std::memcpy(dst + k * dst_line, src + k * src_line, static_cast<size_t>(positions * kT));
  } else {
    for (int64_t i = 0; i < positions; ++i)
      for (int64_t k = 0; k < len; ++k)
        *reinterpret_cast<T*>(dst + i * dst_pos + k * dst_line) =
            *reinterpret_cast<const T*>(src + i * src_pos + k * src_line);
  }
}

// See Note [Scatter loops]: each rest run walks its positions and the n steps of the
// scattered dim, in whichever order keeps the source's accesses closer together.
template <class T, class I, class Op>
void scatter_kernel(const ScatterLoop& S, IndexAxis axis, const Op& op) {
  constexpr int64_t kT = sizeof(T), kI = sizeof(I);
  const int64_t step = axis.stride * kT, n = S.n;
  const int64_t d1 = S.step[1] * kT, d2 = S.step[2] * kI;
  const int64_t grain = std::max<int64_t>(kGrainSize / std::max<int64_t>(n, 1), 1);
  auto run = [&](char* const* p, const int64_t* s, int64_t m) {
    auto dst_at = [&](int64_t i, int64_t j) {
      const I raw = *reinterpret_cast<const I*>(p[2] + i * s[2] + j * d2);
      return reinterpret_cast<T*>(p[0] + i * s[0] + check_index(raw, axis) * step);
    };
    auto src_at = [&](int64_t i, int64_t j) { return *reinterpret_cast<const T*>(p[1] + i * s[1] + j * d1); };
    if (s[2] == 0) {  // the run shares one index per step j: combine whole rows
      for (int64_t j = 0; j < n; ++j) {
        T* dst = dst_at(0, j);
        const char* src = p[1] + j * d1;
        if (s[0] == kT && s[1] == kT) {
          const T* sv = reinterpret_cast<const T*>(src);
          for (int64_t i = 0; i < m; ++i) dst[i] = op(dst[i], sv[i]);
        } else {
          for (int64_t i = 0; i < m; ++i) {
            T* d = reinterpret_cast<T*>(reinterpret_cast<char*>(dst) + i * s[0]);
            *d = op(*d, *reinterpret_cast<const T*>(src + i * s[1]));
          }
        }
      }
      return;
    }
    if (n == 1) {  // one step of the scattered dim: a plain loop over the run
      for (int64_t i = 0; i < m; ++i) {
        const int64_t k = check_index(*reinterpret_cast<const I*>(p[2] + i * s[2]), axis);
        T* d = reinterpret_cast<T*>(p[0] + i * s[0] + k * step);
        *d = op(*d, *reinterpret_cast<const T*>(p[1] + i * s[1]));
      }
      return;
    }
    const bool src_moves = d1 != 0 || s[1] != 0;
    const bool dim_inner = n > 1 && (src_moves ? std::abs(d1) < std::abs(s[1]) : std::abs(d2) < std::abs(s[2]));
    if (dim_inner) {
      for (int64_t i = 0; i < m; ++i) {
        const I* ix = reinterpret_cast<const I*>(p[2] + i * s[2]);
        if (d2 == kI && d1 == kT && all_valid(ix, n, axis)) {  // indices checked in one pass: no branch below
          if (!S.copy_self && axis.stride == 1 && i + 1 < m && worth_prefetching_row(axis.size, kT, n))
            prefetch_row(p[0] + (i + 1) * s[0], axis.size * kT);
          T* dst = reinterpret_cast<T*>(p[0] + i * s[0]);
          const T* sv = reinterpret_cast<const T*>(p[1] + i * s[1]);
          for (int64_t j = 0; j < n; ++j) {
            T& d = dst[ix[j] * axis.stride];
            d = op(d, sv[j]);
          }
          continue;
        }
        for (int64_t j = 0; j < n; ++j) {
          T* d = dst_at(i, j);
          *d = op(*d, src_at(i, j));
        }
      }
    } else {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          T* d = dst_at(i, j);
          *d = op(*d, src_at(i, j));
        }
    }
  };
  if (!S.copy_self) {
    for_each_run<3>(S.rest, {kT, kT, kI}, grain, S.serial, run);
    return;
  }
  // See Note [Scatter out of place]
  const int64_t len = axis.size, line_bytes = std::max<int64_t>(len * kT, 1);
  const bool lines_contiguous = step == kT && S.self_step == 1;
  const int64_t tile = std::max<int64_t>(lines_contiguous ? 1 : 16, (int64_t{16} << 10) / line_bytes);
  for_each_run<4>(S.rest, {kT, kT, kI, kT}, grain, S.serial, [&](char* const* p, const int64_t* s, int64_t m) {
    for (int64_t i0 = 0; i0 < m; i0 += tile) {
      const int64_t t = std::min(tile, m - i0);
      char* q[3] = {p[0] + i0 * s[0], p[1] + i0 * s[1], p[2] + i0 * s[2]};
      copy_lines<T>(q[0], s[0], step, p[3] + i0 * s[3], s[3], S.self_step * kT, t, len);
      run(q, s, t);
    }
  });
}

void scatter_cpu(const ScatterLoop& S, ScalarType t, ScalarType index_t, IndexAxis axis, ScatterReduce reduce,
                 const Scalar& alpha) {
  dispatch_all(t, "scatter", [&]<class T>() {
    dispatch_index(index_t, "scatter", [&]<class I>() {
      switch (reduce) {
        case ScatterReduce::None: return scatter_kernel<T, I>(S, axis, F::ScatterAssign<T>{});
        case ScatterReduce::Add: return scatter_kernel<T, I>(S, axis, F::ScatterAdd<T>{alpha.to<T>()});
        case ScatterReduce::Multiply: return scatter_kernel<T, I>(S, axis, F::ScatterMul<T>{});
      }
    });
  });
}

void offsets_cpu(const StridedLoop& L, ScalarType index_t, IndexAxis axis) {
  dispatch_index(index_t, "index", [&]<class I>() {
    for_each_run<2>(L, {8, sizeof(I)}, kGrainSize, false, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t j = 0; j < n; ++j)
        *reinterpret_cast<int64_t*>(p[0] + j * s[0]) +=
            check_index(*reinterpret_cast<const I*>(p[1] + j * s[1]), axis) * axis.stride;
    });
  });
}

void masked_fill_cpu(const StridedLoop& L, ScalarType t, const Scalar& value) {
  dispatch_all(t, "masked_fill", [&]<class T>() { cpu_map<T, T, bool>(L, F::MaskedFill<T>{value.to<T>()}); });
}

}  // namespace

GR_REGISTER_KERNEL(index_gather_stub, kCPU, &gather_cpu);
GR_REGISTER_KERNEL(index_scatter_stub, kCPU, &scatter_cpu);
GR_REGISTER_KERNEL(index_offsets_stub, kCPU, &offsets_cpu);
GR_REGISTER_KERNEL(masked_fill_stub, kCPU, &masked_fill_cpu);

}  // namespace gr::native

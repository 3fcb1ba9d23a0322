// Indexing without autograd: along one dim (gather, scatter, scatter_add, index_select,
// index_add, index_copy, index_fill), masks (masked_fill, nonzero) and advanced indexing
// (index, index_put_ with NumPy's rules). Index tensors are read through dispatch_index.
#pragma once

#include <array>

#include "core/dispatch.h"
#include "core/native/strided_loop.h"

namespace gr::native {

// The dtypes an index tensor may have: int64 and int32, as torch's. Every kernel reads indices
// through gr::dispatch_index (core/dtype.h), so a new index dtype is one case there.
inline bool is_index_dtype(ScalarType t) { return t == kInt64 || t == kInt32; }

// The indexed axis of a kernel: an index i addresses element i * stride of the indexed operand,
// valid in [0, size) (in [-size, size) when `wrap`, negative ones counting from the end).
struct IndexAxis {
  int64_t size = 0;
  int64_t stride = 0;
  bool wrap = false;
};

// Note [Index errors]
// A CPU kernel that meets an index outside its axis throws IndexOutOfRange (out of whatever
// parallel chunk found it); the op's front end turns it into a gr::Error naming the op, the
// dim, its size, the offending index and the shapes. A CUDA kernel cannot throw without
// waiting for the device: an invalid index there reads a NaN (0 for integer dtypes) and writes
// nothing, as nll_loss's CUDA kernel does with invalid targets.
struct IndexOutOfRange {
  int64_t index;
};

// Gather: out = src[index * axis.stride] over the loop {out, src, index}, where src is the
// source restrided to the loop's shape with stride 0 along the indexed dim.
using GatherFn = void (*)(const StridedLoop& loop, ScalarType t, ScalarType index_t, IndexAxis axis);
GR_DECLARE_DISPATCH(GatherFn, index_gather_stub);

// How a scatter combines a value with the destination element.
enum class ScatterReduce : uint8_t { None, Add, Multiply };

// Note [Scatter loops]
// A scatter writes dst[... index ...] from each element of index's shape. Elements that may hit
// the same destination element differ only in the scattered dim, so the pass is split: `rest`
// walks every other dim (operands {dst restrided with stride 0 along the dim, src, index}; src
// may be a 0-d value) and each rest position runs the n steps of the scattered dim itself
// (step[k] elements apart in operand k). Rest positions may then go to different threads
// without two threads ever adding into one element. `serial` passes (index_put_ with
// accumulate, whose positions come from several index tensors) run on one thread on the CPU.
// Out of place (`copy_self`, CPU only), dst starts as a copy of self: `rest` has self as a
// fourth operand, restrided like dst, and self_step is self's stride along the dim. See Note
// [Scatter out of place].
struct ScatterLoop {
  StridedLoop rest;
  int64_t n = 1;
  std::array<int64_t, 3> step{};
  bool serial = false;
  bool copy_self = false;
  int64_t self_step = 0;
};
// Note [Deterministic scatter]
// A device that runs a scatter's elements on many threads at once (CUDA) combines writes that
// meet with atomics, so a floating sum depends on the order the threads arrive in (and a store
// on which lands last). Under gr::use_deterministic_algorithms (Note [Deterministic
// algorithms]) it runs as the CPU does instead: a thread per rest position taking its n steps
// in order (no two rest positions meet: Note [Scatter loops]), or one thread for a serial
// pass, whose positions may meet anywhere. Integer sums and products are exact in any order.
enum class ScatterSchedule : uint8_t { kPerElement, kPerRestPosition, kSingleThread };
ScatterSchedule scatter_schedule(const ScatterLoop& loop, ScalarType t, ScatterReduce reduce, bool deterministic);

// dst = src (None), dst + alpha * src (Add) or dst * src (Multiply).
using ScatterFn = void (*)(const ScatterLoop& loop, ScalarType t, ScalarType index_t, IndexAxis axis,
                           ScatterReduce reduce, const Scalar& alpha);
GR_DECLARE_DISPATCH(ScatterFn, index_scatter_stub);

// offsets += index * axis.stride over the loop {offsets (int64), index}; negative indices wrap.
// On CUDA an invalid index sets the offset to -1, which the gather/scatter kernels reject.
using IndexOffsetsFn = void (*)(const StridedLoop& loop, ScalarType index_t, IndexAxis axis);
GR_DECLARE_DISPATCH(IndexOffsetsFn, index_offsets_stub);

// out = mask ? value : self over the loop {out, self, mask (bool)}; out may be self.
using MaskedFillFn = void (*)(const StridedLoop& loop, ScalarType t, const Scalar& value);
GR_DECLARE_DISPATCH(MaskedFillFn, masked_fill_stub);

// The coordinates of self's nonzero elements in row-major order: [count, self.dim()] int64.
using NonzeroFn = Tensor (*)(const Tensor& self);
GR_DECLARE_DISPATCH(NonzeroFn, nonzero_stub);

// The elements of self at mask's set positions, in row-major order (1-d); self and mask
// (bool) contiguous, of one shape.
using MaskedSelectFn = Tensor (*)(const Tensor& self, const Tensor& mask);
GR_DECLARE_DISPATCH(MaskedSelectFn, masked_select_stub);
// self at mask's set positions = source's first elements, in order; self, mask (bool) and
// source contiguous, self and mask of one shape. Returns the number of set positions and
// writes nothing when source has fewer elements.
using MaskedScatterFn = int64_t (*)(const Tensor& self, const Tensor& mask, const Tensor& source);
GR_DECLARE_DISPATCH(MaskedScatterFn, masked_scatter_stub);

// Runs fn, turning an IndexOutOfRange into the op's error (Note [Index errors]).
template <class Fn>
void with_index_errors(const char* op, int64_t dim, const Tensor& self, const Tensor& index, Fn&& fn) {
  try {
    fn();
  } catch (const IndexOutOfRange& e) {
    GR_ERROR(op, ": index ", e.index, " is out of bounds for dimension ", dim, " with size ",
             self.dim() == 0 ? 1 : self.size(dim), " (self ", self.sizes(), " ", self.scalar_type(), ", index ",
             index.sizes(), ")");
  }
}
// Fails unless index has an index dtype and self's device.
void check_index_tensor(const Tensor& self, const Tensor& index, const char* op);

// ---- along one dim ----
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
// src: a tensor at least as large as index (torch's shape rules); op names the caller in errors.
void scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
              const char* op);
void scatter_value_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, ScatterReduce reduce,
                    const char* op);
// Out of place: a new tensor holding self with the scatter applied (scatter, scatter_add).
Tensor scatter_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                    const char* op);
Tensor scatter_value_copy(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                          ScatterReduce reduce, const char* op);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
// index_select with an op name and optional wrapping of negative indices (advanced indexing).
Tensor index_select_wrapped(const Tensor& self, int64_t dim, const Tensor& index, bool wrap, const char* op);
// self[..., index[i], ...] (op)= alpha * source[..., i, ...] along dim: index_add_/index_copy_.
void scatter_along_dim_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        ScatterReduce reduce, const Scalar& alpha, bool wrap, const char* op);
void index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha);
void index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// value: 0-d, of self's dtype.
void index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);

// ---- masks ----
// Out of place the result has the broadcast shape of self and mask; in place mask broadcasts to self.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
void masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor nonzero(const Tensor& self);
// self[mask] of self and mask broadcast together (1-d).
Tensor masked_select(const Tensor& self, const Tensor& mask);

// ---- advanced indexing ----
// indices: one entry per leading dim of self (undefined: the whole dim); a bool (or uint8) mask
// stands for its nonzero() columns over as many dims as it has. NumPy's rules place the result.
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
void index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);

}  // namespace gr::native

// Where the values of a warp's mma.sync m16n8k16 operands live (which lane holds which row
// and column), and which shared-memory row each lane hands ldmatrix: index arithmetic only, so
// the CUDA attention kernels and the host tests of tests/cuda/test_attention_host.cpp use the
// same functions (the tests emulate ldmatrix and mma from the PTX ISA's tables with them).
#pragma once

#include "core/macros.h"

namespace gr::cuda::mma {

// Note [mma.sync fragments]
// mma.sync.aligned.m16n8k16.row.col (PTX ISA, "Matrix Fragments for mma.m16n8k16"): C[16, 8]
// += A[16, 16] B[16, 8], 16-bit A and B, float C. Lane = 4 * group + quad (group 0..7, quad
// 0..3). Each 32-bit A or B register holds two 16-bit values, the lower column (A) or row (B)
// in its low half.
//   A: register r (0..3), half h: row group + 8 * (r % 2), column 2 * quad + h + 8 * (r / 2).
//   B: register r (0..1), half h: row (k) 2 * quad + h + 8 * r, column (n) group.
//   C: element e (0..3): row group + 8 * (e / 2), column 2 * quad + e % 2.
// So the C of two adjacent n-tiles (columns 0..7 and 8..15), rounded to 16 bits in pairs, is
// the A of the next product over those 16 columns: that is how P = exp(S) goes from the
// scores' accumulators into P V without shared memory.
// ldmatrix.x4 loads four 8 x 8 matrices of 16-bit values: lane l gives the address of row
// l % 8 of matrix l / 8 (16-byte aligned), and register i of lane l receives from matrix i
// row l / 4, columns 2 * (l % 4) and +1 (with .trans: rows 2 * (l % 4) and +1 of column l / 4).
// Two row patterns cover every operand the kernels load (a 16 x 16 block at (0, 0)):
//   kRowsLo: row l % 16, column 8 * (l / 16): the A operand from a row-major [m][k] block,
//            and (.trans) the B operands of two n-tiles from a [k][n] block (V, dO, Q, K);
//   kRowsHi: row 8 * (l / 16) + l % 8, column 8 * (l / 8 % 2): the B operands of two n-tiles
//            from an [n][k] block (K, Q, dO rows), and (.trans) the A operand from a [k][m]
//            block (dS^T).
// In both, the four registers are, in order: A's a0..a3, or b0, b1 of the first n-tile then
// b0, b1 of the second.
GR_HOST_DEVICE GR_INLINE int group_of(int lane) { return lane >> 2; }
GR_HOST_DEVICE GR_INLINE int quad_of(int lane) { return lane & 3; }

GR_HOST_DEVICE GR_INLINE int a_row(int lane, int r) { return group_of(lane) + 8 * (r & 1); }
GR_HOST_DEVICE GR_INLINE int a_col(int lane, int r, int h) { return 2 * quad_of(lane) + h + 8 * (r >> 1); }
GR_HOST_DEVICE GR_INLINE int b_row(int lane, int r, int h) { return 2 * quad_of(lane) + h + 8 * r; }
GR_HOST_DEVICE GR_INLINE int b_col(int lane) { return group_of(lane); }
GR_HOST_DEVICE GR_INLINE int c_row(int lane, int e) { return group_of(lane) + 8 * (e >> 1); }
GR_HOST_DEVICE GR_INLINE int c_col(int lane, int e) { return 2 * quad_of(lane) + (e & 1); }

// The A operand from C accumulators (P from S): register r, half h of A over 16 columns is
// element c_elem(r, h) of the C of n-tile c_tile(r) (0: columns 0..7, 1: columns 8..15).
GR_HOST_DEVICE GR_INLINE int c_tile(int r) { return r >> 1; }
GR_HOST_DEVICE GR_INLINE int c_elem(int r, int h) { return 2 * (r & 1) + h; }

// The shared-memory row and column (of a 16 x 16 block) whose address lane l gives ldmatrix.x4.
GR_HOST_DEVICE GR_INLINE int lo_row(int lane) { return lane & 15; }
GR_HOST_DEVICE GR_INLINE int lo_col(int lane) { return (lane >> 4) * 8; }
GR_HOST_DEVICE GR_INLINE int hi_row(int lane) { return (lane >> 4) * 8 + (lane & 7); }
GR_HOST_DEVICE GR_INLINE int hi_col(int lane) { return ((lane >> 3) & 1) * 8; }

}  // namespace gr::cuda::mma

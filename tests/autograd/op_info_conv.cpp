// OpInfo entries of the conv branch (conv1d, the transposed convolutions, pixel_shuffle),
// gradchecked and gradgradchecked in float64 by test_op_info.cpp.
#include "op_info.h"

namespace gr::testing {

GR_OP_INFOS(add_conv_op_infos) {
  ops.push_back({"conv1d", [] { return TensorList{op_input({2, 4, 7}, 1701), op_input({6, 2, 3}, 1702), op_input({6}, 1703)}; },
                 [](const TensorList& t) { return conv1d(t[0], t[1], t[2], 2, 1, 1, 2); }});
  ops.push_back({"conv1d", [] { return TensorList{op_input({1, 2, 9}, 1704), op_input({3, 2, 2}, 1705)}; },
                 [](const TensorList& t) { return conv1d(t[0], t[1], {}, 1, 2, 3); }});
  // Transposed weights are [C_in, C_out / groups, k...].
  ops.push_back({"conv_transpose2d",
                 [] { return TensorList{op_input({2, 3, 3, 4}, 1711), op_input({3, 2, 3, 3}, 1712), op_input({2}, 1713)}; },
                 [](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 2, 1, 1); }});
  ops.push_back({"conv_transpose2d", [] { return TensorList{op_input({1, 4, 3, 3}, 1714), op_input({4, 3, 2, 3}, 1715)}; },
                 [](const TensorList& t) { return conv_transpose2d(t[0], t[1], {}, {1, 2}, {0, 1}, {0, 1}, 2, {2, 1}); }});
  // output_padding past the stride (below the dilation): the input is zero-padded first.
  ops.push_back({"conv_transpose2d", [] { return TensorList{op_input({1, 2, 3, 3}, 1716), op_input({2, 2, 2, 2}, 1717)}; },
                 [](const TensorList& t) { return conv_transpose2d(t[0], t[1], {}, 1, 0, 1, 1, 2); }});
  ops.push_back({"conv_transpose1d",
                 [] { return TensorList{op_input({2, 2, 5}, 1721), op_input({2, 3, 3}, 1722), op_input({3}, 1723)}; },
                 [](const TensorList& t) { return conv_transpose1d(t[0], t[1], t[2], 3, 1, 2); }});
  ops.push_back({"pixel_shuffle", [] { return TensorList{op_input({2, 8, 2, 3}, 1731)}; },
                 [](const TensorList& t) { return pixel_shuffle(t[0], 2); }});
  ops.push_back({"pixel_unshuffle", [] { return TensorList{op_input({3, 2, 4, 6}, 1732)}; },
                 [](const TensorList& t) { return pixel_unshuffle(t[0], 2); }});
}

}  // namespace gr::testing

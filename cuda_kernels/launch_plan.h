// Launch arithmetic of the CUDA kernels that is worth testing on its own, in plain C++ (the
// CPU suite checks it): how per-channel reductions split each channel across blocks.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gr::cuda {

// Note [Split channel reductions]
// Batch norm reduces each of C channels over count = N * S values. A block per channel
// leaves most of the device idle when C is small (the seed CNN's 32 and 64 channels on 132
// SMs) and makes each block stream megabytes alone. Instead each channel is cut into
// `splits` chunks of `chunk` consecutive values (in the channel's (n, s) order), a block per
// chunk writes its partial sums, and a second pass adds a channel's partials in chunk order:
// deterministic, and about `target_blocks` blocks in flight. A chunk holds at least
// `min_chunk` values, so small channels keep one block (and need no second pass).
struct ChannelSplit {
  int64_t splits = 0, chunk = 0;  // splits * chunk >= count > (splits - 1) * chunk
};

inline ChannelSplit split_channels(int64_t C, int64_t count, int64_t target_blocks, int64_t min_chunk) {
  if (C <= 0 || count <= 0) return {0, 0};
  const int64_t wanted = std::max<int64_t>(1, (target_blocks + C - 1) / C);
  const int64_t most = std::max<int64_t>(1, count / std::max<int64_t>(1, min_chunk));
  int64_t splits = std::min(wanted, most);
  const int64_t chunk = (count + splits - 1) / splits;
  splits = (count + chunk - 1) / chunk;  // no empty chunk at the end
  return {splits, chunk};
}

}  // namespace gr::cuda

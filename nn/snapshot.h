// Snapshot: everything a training run needs to continue exactly where it stopped (model,
// optimizer, scheduler, position in the data, random generators), saved atomically as one
// safetensors file with a checksum. See docs/reliability.md ("Snapshots and exact resume").
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/generator.h"
#include "nn/serialize.h"

namespace gr {

namespace optim {
class Optimizer;
class LRScheduler;
}  // namespace optim

// Note [Snapshot file]
// A snapshot is a safetensors file: the model's state_dict under "model.<key>", the
// optimizer's under "optimizer.<key>", and in __metadata__ the format name and version,
// the position (epoch, step_in_epoch, global_step), world_size, the scheduler's last_epoch,
// every generator state ("generator.<name>.seed" / ".offset"), the caller's own values
// ("user.<key>"), payload_bytes and a CRC-32 "checksum" over the tensor names, dtypes,
// shapes and bytes and every other metadata value. Any truncation or flipped byte is
// reported by load_snapshot instead of silently resuming from garbage.
struct Snapshot {
  static constexpr int kVersion = 1;
  OrderedDict<Tensor> model;
  OrderedDict<Tensor> optimizer;
  int64_t epoch = 0;          // the epoch in progress, counted from 0
  int64_t step_in_epoch = 0;  // batches of `epoch` already done
  int64_t global_step = 0;    // optimizer steps done in total
  int64_t world_size = 1;
  int64_t scheduler_last_epoch = -1;  // -1: no scheduler
  std::map<std::string, GeneratorState> generators;  // "default": gr::default_generator()
  Metadata user;
  std::string path;  // the file it was loaded from (for messages)
};

// The state of `model`, `optimizer` and `scheduler` (either may be null) and of the default
// generator; the caller fills in the position and world size. The tensors share memory with
// the model and optimizer: save it before the next step.
Snapshot capture_snapshot(const nn::Module& model, const optim::Optimizer* optimizer = nullptr,
                          const optim::LRScheduler* scheduler = nullptr);

// Writes `snapshot` to `path` atomically (temporary file in the same folder, fsync, rename,
// fsync of the folder): until the new file is complete, the previous one stays valid.
void save_snapshot(const std::string& path, const Snapshot& snapshot);

// Reads and verifies a snapshot: format, version, size and checksum, and world_size when
// expected_world_size > 0. Errors (gr::Error) name the file and what is wrong.
Snapshot load_snapshot(const std::string& path, int64_t expected_world_size = 0);

// Copies a loaded snapshot into `model`, `optimizer` and `scheduler` (either may be null) and
// restores the default generator. Every model shape is checked before anything changes.
void restore_snapshot(const Snapshot& snapshot, nn::Module& model, optim::Optimizer* optimizer = nullptr,
                      optim::LRScheduler* scheduler = nullptr);

}  // namespace gr

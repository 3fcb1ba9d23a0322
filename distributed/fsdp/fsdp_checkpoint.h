// State dicts and distributed checkpoints of fully_shard models, in the shape of PyTorch's
// distributed checkpoint (DCP): every rank writes its own file plus a small index, a checkpoint
// loads on any number of ranks (each rank reads the rows it now owns from the files that hold
// them), and consolidates into one plain safetensors file. See Note [FSDP checkpoints].
#pragma once

#include <string>

#include "distributed/fsdp/fully_shard.h"
#include "nn/snapshot.h"

namespace gr::optim {
class Optimizer;
}

namespace gr::distributed::fsdp {

// This rank's rows of every parameter under `root` (padding left out: [rows held, rest...],
// possibly 0 rows), named as the module names them. Not collective.
OrderedDict<Tensor> sharded_state_dict(const FSDPModule& root);
// The whole model as a plain model's state_dict() has it (parameters gathered unit by unit,
// persistent buffers), as CPU copies on every rank. Collective.
OrderedDict<Tensor> full_state_dict(const FSDPModule& root);
// Copies a whole model's state (a plain model's state_dict, a consolidated checkpoint) into
// this rank's shards and the module's buffers; every parameter must be there, shaped as the
// model's. Not collective.
void load_full_state_dict(const FSDPModule& root, const OrderedDict<Tensor>& state);

// Writes a checkpoint of `root`, of `optimizer` (null: none; built on root.parameters(), in
// any grouping) and of `position` (its epoch, steps, world size and user values; its model
// and optimizer parts are ignored) into the folder `dir`: rank r writes `dir/rank<r>.safetensors`
// (a snapshot file: atomic, checksummed), then rank 0 writes `dir/index.json` once every file
// is complete. Collective.
void save_checkpoint(const std::string& dir, const FSDPModule& root, const optim::Optimizer* optimizer,
                     const Snapshot& position);
// Loads a checkpoint written by any number of ranks into this rank's shards, the buffers, the
// optimizer's state (null: skipped) and the default generator (this rank's, or rank 0's when
// the checkpoint had fewer ranks); returns its position and user values. Every file is checked
// against the index first. Not collective (each rank reads the files it needs).
Snapshot load_checkpoint(const std::string& dir, const FSDPModule& root, optim::Optimizer* optimizer);
// Writes the checkpoint's whole model into one safetensors file at `path`, named as the
// model's state_dict: what gr::load, a plain model's load_state_dict and PyTorch's
// safetensors.torch.load_file read. Needs no process group.
void consolidate_checkpoint(const std::string& dir, const std::string& path);

}  // namespace gr::distributed::fsdp

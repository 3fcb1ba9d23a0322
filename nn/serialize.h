// gr::save / gr::load in the safetensors format: an 8-byte little-endian header length, a
// JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian bytes. Files
// open in Python's safetensors and PyTorch, and theirs open here. Writes are atomic.
#pragma once

#include <map>
#include <string>

#include <vector>

#include "core/tensor.h"
#include "nn/module_holder.h"
#include "nn/ordered_dict.h"

namespace gr {

namespace nn {
class Module;
}
namespace optim {
class Optimizer;
}

using Metadata = std::map<std::string, std::string>;

// Writes `tensors` (any device, any strides) to `path` atomically: a temporary file in the
// same folder is written, flushed to disk and renamed over `path`, so a crash or a full
// disk never leaves a half-written file where a good one was.
void save(const OrderedDict<Tensor>& tensors, const std::string& path, const Metadata& metadata = {});
// The bytes save() writes (load_bytes reads them back).
std::string save_bytes(const OrderedDict<Tensor>& tensors, const Metadata& metadata = {});
// Saves a module's state_dict().
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

// Reads every tensor of a safetensors file (CPU tensors, in file order). A malformed file
// throws gr::Error naming the file and what is wrong.
OrderedDict<Tensor> load(const std::string& path, Metadata* metadata = nullptr);
// The same from the bytes of a safetensors file already in memory; `source` stands for the
// file in error messages. load(path) reads the file and calls this.
OrderedDict<Tensor> load_bytes(const std::string& bytes, Metadata* metadata = nullptr,
                               const std::string& source = "<memory>");
// Loads a file into a module. Every mismatch (missing and, when strict, unexpected names;
// shapes; dtypes) is listed in one error, and then nothing changes. Files written by
// PyTorch (safetensors.torch.save_file(model.state_dict())) of the same architecture load.
void load(nn::Module& module, const std::string& path, bool strict = true);

// libtorch's gr::save(model, path) / gr::load(model, path) for module holders (Linear, ...).
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path, const Metadata& metadata = {}) {
  save(*module, path, metadata);
}
template <class Impl>
void load(nn::ModuleHolder<Impl>& module, const std::string& path, bool strict = true) {
  load(*module, path, strict);
}

// A tensor list is saved under the names "0", "1", ...; one tensor as a list of one.
void save(const Tensor& tensor, const std::string& path);
void save(const std::vector<Tensor>& tensors, const std::string& path);
// Reads a file of one tensor (any name) into `tensor`.
void load(Tensor& tensor, const std::string& path);
// Reads a file whose names are exactly "0" ... "n-1" into `tensors`.
void load(std::vector<Tensor>& tensors, const std::string& path);
// Reads every tensor of a file, in file order, into `tensors` (replacing its contents).
void load(OrderedDict<Tensor>& tensors, const std::string& path);

// Note [Optimizer files]
// An optimizer file holds the state tensors as "state.<i>.<name>" (i counts parameters over
// all groups) and, in __metadata__, "gradring.type" = "optimizer", "optimizer" = its name
// and "param_groups" = a JSON list with each group's options and parameter indices (as
// Python's optimizer.state_dict()). load refuses another optimizer kind, other group sizes
// and state of other shapes, listing what differs, and then changes nothing.
void save(const optim::Optimizer& optimizer, const std::string& path);
void load(optim::Optimizer& optimizer, const std::string& path);

// Writes bytes to `path` atomically (temporary file, fsync, rename, fsync of the folder).
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace gr

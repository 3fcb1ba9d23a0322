// gr::save / gr::load in the safetensors format: an 8-byte little-endian header length, a
// JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian bytes. Files
// open in Python's safetensors and PyTorch, and theirs open here. Writes are atomic.
#pragma once

#include <map>
#include <string>

#include "core/tensor.h"
#include "nn/ordered_dict.h"

namespace gr {

namespace nn {
class Module;
}

using Metadata = std::map<std::string, std::string>;

// Writes `tensors` (any device, any strides) to `path` atomically: a temporary file in the
// same folder is written, flushed to disk and renamed over `path`, so a crash or a full
// disk never leaves a half-written file where a good one was.
void save(const OrderedDict<Tensor>& tensors, const std::string& path, const Metadata& metadata = {});
// Saves a module's state_dict().
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

// Reads every tensor of a safetensors file (CPU tensors, in file order). A malformed file
// throws gr::Error naming the file and what is wrong.
OrderedDict<Tensor> load(const std::string& path, Metadata* metadata = nullptr);
// The same from the bytes of a safetensors file already in memory; `source` stands for the
// file in error messages. load(path) reads the file and calls this.
OrderedDict<Tensor> load_bytes(const std::string& bytes, Metadata* metadata = nullptr,
                               const std::string& source = "<memory>");
// Loads a file into a module through load_state_dict(strict).
void load(nn::Module& module, const std::string& path, bool strict = true);

// Writes bytes to `path` atomically (temporary file, fsync, rename, fsync of the folder).
void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace gr

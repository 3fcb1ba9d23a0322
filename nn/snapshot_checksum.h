// The checksum of Note [Snapshot file], for tests and fuzz/fuzz_snapshot.cpp, which write
// snapshots of chosen contents (not part of the public API: gradring.h does not include it).
#pragma once

#include <string>

#include "nn/serialize.h"

namespace gr {

// What save_snapshot stores as "checksum" and load_snapshot compares: the CRC-32 (8 hex
// digits) of the tensors in their order and of every metadata value but "checksum".
std::string snapshot_checksum(const OrderedDict<Tensor>& tensors, const Metadata& metadata);

}  // namespace gr

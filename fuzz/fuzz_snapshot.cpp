// libFuzzer target: snapshots (gr::load_snapshot), on each input twice. As it is: nearly
// every input fails the checksum, which covers the safetensors layer and the checksum
// itself. Then, when the input is a safetensors file with a "checksum" in its metadata,
// with the right checksum put in (snapshot_checksum) and the file written again: that
// reaches what load_snapshot does after the checksum passed, and a checksum error there
// is a finding (load and checksum disagree about the file).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/memory_file.h"
#include "nn/snapshot.h"
#include "nn/snapshot_checksum.h"

namespace {

void touch(const gr::Snapshot& s) {
  uint64_t sum = 0;
  for (const auto* dict : {&s.model, &s.optimizer})
    for (const auto& [name, t] : *dict) {
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
    }
  volatile uint64_t sink = sum;
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    touch(gr::load_snapshot(gr::fuzz::memory_file(data, size)));
  } catch (const gr::Error&) {
    // A malformed or corrupt snapshot: the expected outcome.
  }
  gr::Metadata metadata;
  gr::OrderedDict<gr::Tensor> tensors;
  try {
    tensors = gr::load_bytes(bytes, &metadata);
  } catch (const gr::Error&) {
    return 0;
  }
  if (!metadata.count("checksum")) return 0;
  metadata["checksum"] = gr::snapshot_checksum(tensors, metadata);
  const std::string fixed = gr::save_bytes(tensors, metadata);
  try {
    gr::Snapshot s = gr::load_snapshot(gr::fuzz::memory_file(fixed.data(), fixed.size()));
    touch(s);
    if (s.world_size < 1 || s.epoch < 0 || s.step_in_epoch < 0 || s.global_step < 0 || s.scheduler_last_epoch < -1)
      std::abort();
  } catch (const gr::Error& e) {
    if (e.message().find("is corrupt: checksum") != std::string::npos) std::abort();
  }
  return 0;
}

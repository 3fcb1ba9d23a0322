// libFuzzer target: the FileStore log (distributed/store/file_store.cpp), as a FileStore
// opening a file another process left: the input is the file. Opening reads every record;
// then a few operations must behave as on any store (a value set is read back, add() counts
// on from what it returns), whatever the log said before.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "distributed/store/file_store.h"
#include "fuzz/memory_file.h"

using namespace gr::distributed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = gr::fuzz::memory_file(data, size);
  try {
    FileStore store(path, -1, std::chrono::milliseconds(1));
    const int64_t keys = store.num_keys();
    if (keys < 0) std::abort();
    const bool had = store.check({"key"});
    store.set("key", Bytes{'v'});
    if (store.get("key") != Bytes{'v'} || store.num_keys() != keys + (had ? 0 : 1)) std::abort();
    try {
      const int64_t a = store.add("counter", 1);
      if (store.add("counter", 2) != a + 2) std::abort();
    } catch (const gr::Error&) {
      // "counter" held something other than a number, or is at the end of int64's range.
    }
    if (!store.delete_key("key") || store.check({"key"})) std::abort();
  } catch (const gr::Error&) {
    // A corrupt log: the expected outcome.
  }
  return 0;
}

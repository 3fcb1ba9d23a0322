// libFuzzer target: gradring-flight's reading and analysis of flight recorder dumps
// (apps/flight/). An input holds up to 8 dumps (rank files) separated by NUL bytes, which
// JSON text cannot contain. Every dump that reads must analyze and print without an
// exception; frames are "resolved" by a stand-in for addr2line that names some of them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "flight/flight_dumps.h"

using namespace gr::flight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  Dumps dumps;
  try {
    size_t begin = 0;
    for (int i = 0; i < 8 && begin <= input.size(); ++i) {
      const size_t end = std::min(input.find('\0', begin), input.size());
      read_dump(input.substr(begin, end - begin), "rank" + std::to_string(i) + ".json", dumps);
      begin = end + 1;
    }
  } catch (const gr::Error&) {
    return 0;  // a malformed dump: the expected outcome
  }
  const Analysis a = analyze(dumps, [](const Frame& f) {
    return f.offset % 2 ? "resolved " + f.file : std::string();
  });
  size_t printed = a.report.dump().size() + a.summary.size();
  for (const std::string& line : a.lines) printed += line.size();
  if (a.summary.empty()) std::abort();
  volatile size_t sink = printed;
  (void)sink;
  return 0;
}

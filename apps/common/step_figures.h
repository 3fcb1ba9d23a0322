// Figures of a training step the benchmarks print beside its time: the process's CPU time and
// the bytes of an optimizer's state.
#pragma once

#include <sys/resource.h>

#include <gradring/gradring.h>

#include <cstdint>

namespace gr::apps {

// Bytes of optimizer state tensors ("state.*" entries).
inline int64_t state_bytes(const optim::Optimizer& opt) {
  int64_t bytes = 0;
  for (const auto& [key, t] : opt.state_dict())
    if (key.rfind("state.", 0) == 0) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

// CPU time of the whole process (every thread: compute, Gloo's, the hooks), user + system.
inline int64_t process_cpu_ns() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto ns = [](const timeval& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_usec * 1000; };
  return ns(u.ru_utime) + ns(u.ru_stime);
}

}  // namespace gr::apps

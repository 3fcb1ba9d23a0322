// gradring_test_worker: the worker program of the launcher tests. argv[1] picks what it does:
//   print-env                 one line with the launcher's variables, then exit 0
//   echo ARGS...              its arguments, one per line, then exit 0
//   fail-rank R CODE          rank R writes to stderr and exits CODE; the others wait 60 s
//   kill-rank R SIGNAL        rank R raises SIGNAL (a number); the others wait 60 s
//   fail-once R CODE          rank R exits CODE on the first attempt (GRADRING_RESTART_COUNT 0);
//                             every rank of a later attempt exits 0
//   sleep SECONDS             prints "ready pid=P", sleeps, exits 0
//   ignore-term SECONDS       like sleep, but ignores SIGTERM
//   spam LINES                LINES long lines to stdout and stderr, then a last line without "\n"
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

const char* env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

void sleep_seconds(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

void ready() {
  std::printf("ready pid=%d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a raised SIGSEGV should not write a core file
  std::string mode = argc > 1 ? argv[1] : "";
  int rank = env_int("RANK");
  auto arg = [&](int i) { return i < argc ? std::atoi(argv[i]) : 0; };
  if (mode == "print-env") {
    std::printf("env RANK=%s LOCAL_RANK=%s WORLD_SIZE=%s LOCAL_WORLD_SIZE=%s GROUP_RANK=%s MASTER_ADDR=%s "
                "MASTER_PORT=%s GRADRING_RESTART_COUNT=%s GRADRING_MAX_RESTARTS=%s OMP_NUM_THREADS=%s\n",
                env_str("RANK"), env_str("LOCAL_RANK"), env_str("WORLD_SIZE"), env_str("LOCAL_WORLD_SIZE"),
                env_str("GROUP_RANK"), env_str("MASTER_ADDR"), env_str("MASTER_PORT"),
                env_str("GRADRING_RESTART_COUNT"), env_str("GRADRING_MAX_RESTARTS"), env_str("OMP_NUM_THREADS"));
    return 0;
  }
  if (mode == "echo") {
    for (int i = 2; i < argc; ++i) std::printf("arg %s\n", argv[i]);
    return 0;
  }
  if (mode == "fail-rank" || mode == "kill-rank") {
    ready();
    if (rank != arg(2)) {
      sleep_seconds(60);
      return 0;
    }
    sleep_seconds(0.3);  // let the others start
    if (mode == "kill-rank") {
      std::fprintf(stderr, "rank %d raising signal %d\n", rank, arg(3));
      std::fflush(stderr);
      signal(arg(3), SIG_DFL);
      raise(arg(3));
      return 99;
    }
    for (int i = 0; i < 15; ++i) std::fprintf(stderr, "rank %d error line %d\n", rank, i);
    std::fprintf(stderr, "rank %d giving up with code %d", rank, arg(3));  // no newline: flushed at exit
    return arg(3);
  }
  if (mode == "fail-once") {
    int attempt = env_int("GRADRING_RESTART_COUNT");
    std::printf("attempt %d\n", attempt);
    if (attempt == 0 && rank == arg(2)) {
      std::fprintf(stderr, "rank %d fails on attempt 0\n", rank);
      return arg(3);
    }
    if (attempt == 0) sleep_seconds(60);  // stopped by the launcher
    return 0;
  }
  if (mode == "sleep" || mode == "ignore-term") {
    if (mode == "ignore-term") signal(SIGTERM, SIG_IGN);
    ready();
    sleep_seconds(argc > 2 ? std::atof(argv[2]) : 60);
    return 0;
  }
  if (mode == "spam") {
    std::string payload(300, 'x');
    for (int i = 0; i < arg(2); ++i) {
      std::printf("out %d %d %s end\n", rank, i, payload.c_str());
      std::fprintf(stderr, "err %d %d %s end\n", rank, i, payload.c_str());
    }
    std::printf("partial %d", rank);
    return 0;
  }
  std::fprintf(stderr, "gradring_test_worker: unknown mode '%s'\n", mode.c_str());
  return 64;
}

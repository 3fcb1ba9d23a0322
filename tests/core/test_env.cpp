// env_flag: the environment switches (GRADRING_CUBLASLT=0, GRADRING_CUDNN_ATTENTION=0, ...).
#include <cstdlib>

#include "core/env.h"

using namespace gr;

TEST_CASE("env_flag: unset or empty gives the fallback, \"0\" false, anything else true") {
  const char* name = "GRADRING_TEST_ENV_FLAG";
  unsetenv(name);
  CHECK(env_flag(name, true));
  CHECK_FALSE(env_flag(name, false));
  setenv(name, "", 1);
  CHECK(env_flag(name, true));
  CHECK_FALSE(env_flag(name, false));
  setenv(name, "0", 1);
  CHECK_FALSE(env_flag(name, true));
  setenv(name, "1", 1);
  CHECK(env_flag(name, false));
  setenv(name, "yes", 1);
  CHECK(env_flag(name, false));
  unsetenv(name);
}

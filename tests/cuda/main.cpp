// The runner of the CUDA tests: on a machine without a usable CUDA device it
// reports the suite as skipped (exit code 77, ctest's SKIP_RETURN_CODE), or as
// failed when GRADIENS_REQUIRE_CUDA=1 says a device must be there.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/cuda.h"

int main(int argc, char** argv) {
  if (!gradiens::cuda::is_available()) {
    const char* require = std::getenv("GRADIENS_REQUIRE_CUDA");
    if (require && std::string(require) == "1") {
      std::fprintf(stderr, "GRADIENS_REQUIRE_CUDA=1 but no CUDA device is available\n");
      return 1;
    }
    std::printf("no CUDA device is available: the CUDA tests are skipped\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

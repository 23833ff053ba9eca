// kprop_fuzz_seeds KERNEL OUT_DIR CORPUS...: the seed corpus of a kernel's fuzz target
// (harness/fuzz/seeds.h), for ctest, build.sh and anyone running a target by hand.
// Exit 0 with a count, 2 on bad usage.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "harness/fuzz/seeds.h"
#include "harness/model/kernel.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s KERNEL OUT_DIR CORPUS_PATH...\n", argv[0]);
    return 2;
  }
  try {
    kprop::FuzzSpace space;
    space.kernel = argv[1];
    space.impl = kprop::find_kernel(space.kernel).default_implementation();
    const std::vector<std::string> corpus(argv + 3, argv + argc);
    const auto out = kprop::write_seeds(space, corpus, argv[2]);
    for (const auto& why : out.skipped) std::fprintf(stderr, "skipped %s\n", why.c_str());
    std::printf("%zu seeds for %s in %s\n", out.files.size(), argv[1], argv[2]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kprop_fuzz_seeds: %s\n", e.what());
    return 2;
  }
}

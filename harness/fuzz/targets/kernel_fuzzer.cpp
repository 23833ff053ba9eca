// The libFuzzer target of one kernel (KPROP_FUZZ_KERNEL, set by the build): each input
// decodes to a Case that kprop's properties check (harness/fuzz/fuzz_target.h says which
// implementation and property, and how to choose them).
//
// A new defect prints its signature, identity and cases, then aborts with the identity
// in an assertion message: crash deduplication (libFuzzer's, ClusterFuzz's crash state)
// then tells defects apart by what they are, not by the frames of one abort() call.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include <ATen/Parallel.h>

#include "harness/execution/own_executable.h"
#include "harness/fuzz/fuzz_target.h"

#ifndef KPROP_FUZZ_KERNEL
#error "KPROP_FUZZ_KERNEL names the kernel this target fuzzes"
#endif
// The source tree's corpus, relative to this executable's folder (see own_executable.h).
#ifndef KPROP_CORPUS_FROM_EXECUTABLE
#define KPROP_CORPUS_FROM_EXECUTABLE ""
#endif

namespace {
kprop::FuzzTarget* target = nullptr;

void at_exit() {
  if (!target) return;
  target->flush_sightings();
  const auto& s = target->stats();
  std::fprintf(stderr,
               "kprop: %lld cases: %lld passed, %lld failed (%lld known), %lld rejected, "
               "%lld skipped, %lld too large\n",
               (long long)s.executions, (long long)s.passed, (long long)s.failed,
               (long long)s.known, (long long)s.rejected, (long long)s.skipped,
               (long long)s.too_large);
  for (const auto& [reason, count] : s.rejections)
    std::fprintf(stderr, "kprop: rejected %lld x %s\n", (long long)count, reason.c_str());
  for (const auto& [identity, count] : s.sightings)
    std::fprintf(stderr, "kprop: known %lld x %s\n", (long long)count, identity.c_str());
}
}  // namespace

// libFuzzer's own leak check runs an input a second time whenever mallocs and frees do
// not pair up in it, which libtorch's caches make common (a sixth of all time went there),
// and LeakSanitizer is off anyway (libtorch's caches read as leaks): -detect_leaks=0
// unless the command line says otherwise. libFuzzer reads its flags after this function.
static void default_no_leak_detection(int* argc, char*** argv) {
  for (int i = 1; i < *argc; ++i)
    if (std::strncmp((*argv)[i], "-detect_leaks=", 14) == 0) return;
  static std::vector<char*> args;
  static char flag[] = "-detect_leaks=0";
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, flag);
  args.push_back(nullptr);
  *argc += 1;
  *argv = args.data();
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  default_no_leak_detection(argc, argv);
  // One fuzzer process is one core (fork mode and `kprop nightly` run several): libtorch's
  // intra-op threads would only spin beside it on cases this small.
  at::set_num_threads(1);
  try {
    const std::string from_executable = KPROP_CORPUS_FROM_EXECUTABLE;
    const std::string source_corpus =
        from_executable.empty() ? "" : kprop::beside_own_executable(from_executable).string();
    auto options =
        kprop::fuzz_options_from_environment(KPROP_FUZZ_KERNEL, (*argv)[0], source_corpus);
    std::fprintf(stderr, "kprop: fuzzing %s / %s, property %s; %zu known identities%s%s\n",
                 KPROP_FUZZ_KERNEL, options.space.impl.c_str(),
                 options.space.property.empty() ? "from byte 0" : options.space.property.c_str(),
                 options.known.size(), options.corpus.empty() ? "" : " from ",
                 options.corpus.c_str());
    target = new kprop::FuzzTarget(std::move(options));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kprop: %s\n", e.what());
    std::exit(2);
  }
  std::atexit(at_exit);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kprop::FuzzOutcome out = target->run(data, size);
  // A refused or skipped case stays a candidate for the corpus: it may be one mutation away
  // from an accepted case that reaches new code.
  if (out.fresh.empty()) return 0;
  target->flush_sightings();
  std::fputs(kprop::finding_report(out).c_str(), stderr);
  std::fprintf(stderr, "kprop: found after %lld executions\n",
               (long long)target->stats().executions);
  for (const auto& f : out.fresh)
    std::fprintf(stderr, "ASSERTION FAILED: kprop found %s\n", f.identity.c_str());
  std::fflush(stderr);
  std::abort();
}

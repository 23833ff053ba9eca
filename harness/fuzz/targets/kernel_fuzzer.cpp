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

#include "harness/execution/cheap_errors.h"
#include "harness/execution/own_executable.h"
#include "harness/fuzz/fuzz_target.h"
#include "harness/fuzz/structured_mutator.h"

#ifndef KPROP_FUZZ_KERNEL
#error "KPROP_FUZZ_KERNEL names the kernel this target fuzzes"
#endif
// The source tree's corpus, relative to this executable's folder (see own_executable.h).
#ifndef KPROP_CORPUS_FROM_EXECUTABLE
#define KPROP_CORPUS_FROM_EXECUTABLE ""
#endif

// libFuzzer's own byte mutation, which the structured mutator keeps as one strategy.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {
kprop::FuzzTarget* target = nullptr;
kprop::StructuredMutator* mutator = nullptr;
// libFuzzer's -merge=1 (its inner process: -merge_inner=1) runs each input once for its
// coverage: an input that shows a new defect is counted, not aborted on, so that the
// merged corpus keeps the inputs that reach defects (kprop corpus merge).
bool merging = false;

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
  if (!mutator) return;
  for (const auto& [strategy, count] : mutator->used())
    std::fprintf(stderr, "kprop: mutation %lld x %s\n", (long long)count, strategy.c_str());
  std::fprintf(stderr, "kprop: %lld structured mutations fell back to bytes\n",
               (long long)mutator->fallbacks());
}
}  // namespace

// Flags this target defaults to, unless the command line gives them (libFuzzer reads its
// flags after LLVMFuzzerInitialize):
// - -detect_leaks=0: libFuzzer's leak check runs an input a second time whenever mallocs
//   and frees do not pair up in it, which libtorch's caches make common (a sixth of all
//   time went there), and LeakSanitizer is off anyway (libtorch's caches read as leaks);
// - -len_control=100: libFuzzer turns its growth of the input length off when a custom
//   mutator is defined; on, inputs start short (small cases, thousands per second) and
//   grow as coverage stalls, as they did before the structured mutator.
static void default_flags(int* argc, char*** argv) {
  static char detect_leaks[] = "-detect_leaks=0", len_control[] = "-len_control=100";
  static std::vector<char*> args;
  args.assign(*argv, *argv + *argc);
  for (char* flag : {detect_leaks, len_control}) {
    const size_t name = std::strchr(flag, '=') - flag + 1;  // "-detect_leaks="
    bool given = false;
    for (int i = 1; i < *argc; ++i) given = given || std::strncmp((*argv)[i], flag, name) == 0;
    if (!given) args.insert(args.begin() + 1, flag);
  }
  *argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  *argv = args.data();
}

// LeakSanitizer's check at exit reads libtorch's caches and the static registrations of the
// kernels as leaks, and libFuzzer then writes the empty input as a crash: off unless
// ASAN_OPTIONS says otherwise (CI, kprop nightly and ClusterFuzzLite set it off as well).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  default_flags(argc, argv);
  for (int i = 1; i < *argc; ++i)
    for (const char* flag : {"-merge=1", "-merge_inner=1", "-set_cover_merge=1"})
      merging = merging || std::strcmp((*argv)[i], flag) == 0;
  // One fuzzer process is one core (fork mode and `kprop nightly` run several): libtorch's
  // intra-op threads would only spin beside it on cases this small.
  at::set_num_threads(1);
  kprop::skip_cpp_stack_traces_of_errors();  // refusals by the thousand: messages only
  // Small cases: at most 2^20 elements per tensor unless KPROP_MAX_ELEMENTS says otherwise
  // (the searches' 2^24 let one case of the float64 gradient pass libFuzzer's 2 GB rss
  // limit, an "out-of-memory" that ended the run). Larger cases are skipped as too large.
  setenv("KPROP_MAX_ELEMENTS", "1048576", /*overwrite=*/0);
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
    const char* strategy = std::getenv("KPROP_MUTATION");
    mutator = new kprop::StructuredMutator(
        options.space, kprop::MutationStrategy::parse(strategy ? strategy : ""));
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
  if (out.fresh.empty() || merging) return 0;
  target->flush_sightings();
  std::fputs(kprop::finding_report(out).c_str(), stderr);
  std::fprintf(stderr, "kprop: found after %lld executions\n",
               (long long)target->stats().executions);
  for (const auto& f : out.fresh)
    std::fprintf(stderr, "ASSERTION FAILED: kprop found %s\n", f.identity.c_str());
  std::fflush(stderr);
  std::abort();
}

// Structure-aware mutation (harness/fuzz/structured_mutator.h): the input's Case changed
// the way its schema knows it, libFuzzer's byte mutation one strategy among them.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return mutator->mutate(data, size, max_size, seed, LLVMFuzzerMutate);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size, const uint8_t* b,
                                            size_t b_size, uint8_t* out, size_t max_out,
                                            unsigned int seed) {
  return mutator->cross_over(a, a_size, b, b_size, out, max_out, seed);
}

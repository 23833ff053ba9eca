// libFuzzer's custom mutator for kprop's inputs (LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver, harness/fuzz/targets/kernel_fuzzer.cpp): it decodes the bytes
// to their Case (harness/fuzz/fuzz_input.h), mutates the case the way its schema knows it
// (generators/mutate.h: an edge value, a list element inserted, deleted or duplicated, a
// flag toggled, another choice; the data seed kept), and encodes the result again.
// libFuzzer's own byte mutation stays one strategy among them.
//
//   KPROP_MUTATION   which strategies: bytes (the default: libFuzzer's alone, as before the
//                    structured mutator), mixed (one in four byte mutations, the rest
//                    structured), structured, or one kind of mutation (edge_value,
//                    list_insert, ...). Not the default yet: under libFuzzer's length
//                    control (inputs start at a few bytes) a mutated case's bytes rarely fit,
//                    and without it cases grow and run 5x slower (docs/fuzzing.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "generators/mutate.h"
#include "harness/fuzz/fuzz_input.h"

namespace kprop {

// libFuzzer's byte mutation (LLVMFuzzerMutate): data, size, max_size -> new size.
using ByteMutation = std::function<size_t(uint8_t*, size_t, size_t)>;

struct MutationStrategy {
  bool bytes = true;                  // libFuzzer's byte mutation among the strategies
  bool structured = true;             // kprop's mutations among them (parse: off by default)
  std::optional<Mutation> only;       // structured: this kind alone
  // Parses KPROP_MUTATION's value; throws UsageError naming the known ones.
  static MutationStrategy parse(const std::string& text);
};

class StructuredMutator {
 public:
  StructuredMutator(FuzzSpace space, MutationStrategy strategy);

  // Mutates the input in place (at most max_size bytes); returns its new size.
  size_t mutate(uint8_t* data, size_t size, size_t max_size, unsigned seed,
                const ByteMutation& byte_mutation);
  // A child of two inputs in `out` (at most max_out bytes); returns its size, 0 for none.
  size_t cross_over(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size,
                    uint8_t* out, size_t max_out, unsigned seed);

  // How often each strategy ran ("bytes", "cross_over", a Mutation's name) and how often
  // a structured one fell back to bytes (no mutation applied, or its bytes too long).
  const std::map<std::string, int64_t>& used() const { return used_; }
  int64_t fallbacks() const { return fallbacks_; }

 private:
  // One of kprop's mutations written over the input; std::nullopt when none applies.
  std::optional<size_t> structured(uint8_t* data, size_t size, size_t max_size,
                                   RandomChoices& random);

  static constexpr int kAttempts = 4;  // structured mutations tried before bytes
  FuzzSpace space_;
  MutationStrategy strategy_;
  std::map<std::string, int64_t> used_;
  int64_t fallbacks_ = 0;
};

}  // namespace kprop

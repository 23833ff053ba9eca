#include "harness/fuzz/structured_mutator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/errors.h"
#include "harness/model/kernel.h"

namespace kprop {

MutationStrategy MutationStrategy::parse(const std::string& text) {
  MutationStrategy s;
  if (text == "mixed") return s;
  if (text.empty() || text == "bytes") {
    s.structured = false;
    return s;
  }
  s.bytes = false;
  if (text == "structured") return s;
  std::string known = "mixed, structured, bytes";
  for (Mutation m : all_mutations()) {
    if (text == to_string(m)) {
      s.only = m;
      return s;
    }
    known += ", " + to_string(m);
  }
  throw UsageError(fmt::format("KPROP_MUTATION={}: not a strategy; known: {}", text, known));
}

StructuredMutator::StructuredMutator(FuzzSpace space, MutationStrategy strategy)
    : space_(std::move(space)), strategy_(strategy) {}

std::optional<size_t> StructuredMutator::structured(uint8_t* data, size_t size,
                                                    size_t max_size, RandomChoices& random) {
  const Case c = decode_fuzz_input(space_, data, size);
  const Kernel& kernel = find_kernel(space_.kernel);
  const CaseSpace case_space = fuzz_case_space(space_, c.property);
  // A few tries: under libFuzzer's length control max_size starts small, and a mutation
  // that reaches a later choice needs the bytes up to it.
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const auto m = kprop::mutate(kernel.schema(), c, case_space, random, strategy_.only);
    if (!m) continue;
    std::vector<uint8_t> out;
    try {
      out = encode_fuzz_input(space_, m->c);
    } catch (const CaseError&) {
      continue;  // valid for the schema, not drawable in this space
    }
    if (out.size() > max_size) continue;
    std::memcpy(data, out.data(), out.size());
    ++used_[to_string(m->mutation)];
    return out.size();
  }
  return std::nullopt;
}

size_t StructuredMutator::mutate(uint8_t* data, size_t size, size_t max_size, unsigned seed,
                                 const ByteMutation& byte_mutation) {
  RandomChoices random(seed);
  // Mixed: one in four libFuzzer's, so that what the schema cannot express (a byte that
  // moves every later choice) is still tried.
  const bool bytes = !strategy_.structured || (strategy_.bytes && random.below(4, 0) == 0);
  if (!bytes) {
    if (const auto out = structured(data, size, max_size, random)) return *out;
    ++fallbacks_;
  }
  ++used_["bytes"];
  return byte_mutation(data, size, max_size);
}

size_t StructuredMutator::cross_over(const uint8_t* a, size_t a_size, const uint8_t* b,
                                     size_t b_size, uint8_t* out, size_t max_out, unsigned seed) {
  if (!strategy_.structured) return 0;  // libFuzzer's own cross-over, then
  RandomChoices random(seed);
  const Case first = decode_fuzz_input(space_, a, a_size);
  Case second = decode_fuzz_input(space_, b, b_size);
  if (second.property != first.property) return 0;
  const Kernel& kernel = find_kernel(space_.kernel);
  const auto child = kprop::cross_over(kernel.schema(), first, second,
                                       fuzz_case_space(space_, first.property), random);
  if (!child) return 0;
  const std::vector<uint8_t> bytes = encode_fuzz_input(space_, *child);
  if (bytes.size() > max_out) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  ++used_["cross_over"];
  return bytes.size();
}

}  // namespace kprop

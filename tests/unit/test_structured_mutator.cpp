// libFuzzer's custom mutator (harness/fuzz/structured_mutator.h), without libFuzzer: it
// rewrites an input into the bytes of a mutated case of the same property and data seed,
// keeps libFuzzer's byte mutation as a strategy, falls back to it when no structured
// mutation fits, and its cross-over mixes two inputs' cases.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/errors.h"
#include "generators/schema.h"
#include "harness/fuzz/fuzz_input.h"
#include "harness/fuzz/structured_mutator.h"
#include "harness/model/kernel.h"

namespace kprop {
namespace {

const FuzzSpace kSpace{"causal_conv1d", "tiled", "", {}};

std::vector<uint8_t> random_input(std::mt19937& rng) {
  std::vector<uint8_t> bytes(8 + rng() % 40);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

int byte_calls = 0;
size_t count_byte_calls(uint8_t*, size_t size, size_t) {
  ++byte_calls;
  return size;
}

TEST(StructuredMutator, WritesTheBytesOfAMutatedCaseOfTheSameSeedAndProperty) {
  StructuredMutator mutator(kSpace, MutationStrategy::parse("structured"));
  const Schema& schema = find_kernel("causal_conv1d").schema();
  std::mt19937 rng(3);
  byte_calls = 0;
  int changed = 0;
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::vector<uint8_t> bytes = random_input(rng);
    const Case before = decode_fuzz_input(kSpace, bytes.data(), bytes.size());
    const size_t size = bytes.size();
    bytes.resize(4096);
    const size_t n = mutator.mutate(bytes.data(), size, bytes.size(), seed, count_byte_calls);
    const Case after = decode_fuzz_input(kSpace, bytes.data(), n);
    EXPECT_TRUE(validate(schema, after).empty());
    EXPECT_EQ(after.seed, before.seed);
    EXPECT_EQ(after.property, before.property);
    if (after != before) ++changed;
  }
  EXPECT_EQ(byte_calls, mutator.fallbacks());
  EXPECT_GT(changed, 250);
  for (Mutation m : all_mutations()) EXPECT_GT(mutator.used().count(to_string(m)), 0u) << to_string(m);
}

TEST(StructuredMutator, BytesAloneIsLibFuzzersOwnMutation) {
  StructuredMutator mutator(kSpace, MutationStrategy::parse("bytes"));
  std::vector<uint8_t> bytes(64, 7);
  byte_calls = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) mutator.mutate(bytes.data(), 16, 64, seed, count_byte_calls);
  EXPECT_EQ(byte_calls, 20);
  EXPECT_EQ(mutator.used().at("bytes"), 20);
  uint8_t out[64];
  EXPECT_EQ(mutator.cross_over(bytes.data(), 16, bytes.data(), 16, out, 64, 1), 0u);
}

TEST(StructuredMutator, FallsBackToBytesWhenTheMutatedCaseDoesNotFit) {
  StructuredMutator mutator(kSpace, MutationStrategy::parse("structured"));
  std::mt19937 rng(9);
  std::vector<uint8_t> bytes = random_input(rng);
  byte_calls = 0;
  mutator.mutate(bytes.data(), bytes.size(), 2, 1, count_byte_calls);  // no case fits 2 bytes
  EXPECT_EQ(byte_calls, 1);
  EXPECT_EQ(mutator.fallbacks(), 1);
}

TEST(StructuredMutator, CrossOverGivesAValidChildOfTheFirstSeed) {
  StructuredMutator mutator(kSpace, MutationStrategy::parse("mixed"));
  const Schema& schema = find_kernel("causal_conv1d").schema();
  std::mt19937 rng(4);
  int children = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    std::vector<uint8_t> a = random_input(rng), b = random_input(rng);
    b[0] = a[0];  // the same property
    std::vector<uint8_t> out(4096);
    const size_t n = mutator.cross_over(a.data(), a.size(), b.data(), b.size(), out.data(),
                                        out.size(), seed);
    if (n == 0) continue;
    ++children;
    const Case child = decode_fuzz_input(kSpace, out.data(), n);
    EXPECT_TRUE(validate(schema, child).empty());
    EXPECT_EQ(child.seed, decode_fuzz_input(kSpace, a.data(), a.size()).seed);
  }
  EXPECT_GT(children, 90);
}

TEST(StructuredMutator, UnknownStrategiesAreRefusedByName) {
  EXPECT_THROW(MutationStrategy::parse("nosuch"), UsageError);
  EXPECT_FALSE(MutationStrategy::parse("").structured);  // libFuzzer's alone, by default
  const MutationStrategy one = MutationStrategy::parse("flag_toggle");
  EXPECT_FALSE(one.bytes);
  ASSERT_TRUE(one.only);
  EXPECT_EQ(*one.only, Mutation::flag_toggle);
}

}  // namespace
}  // namespace kprop

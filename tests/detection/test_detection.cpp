// Detection: from a cold start, kprop's search finds every known defect of the
// historical Ascend states from several fixed seeds and shrinks it to a minimal case of
// the expected shape; the correct tiling and the merged fix do not show them.
#include <gtest/gtest.h>

#include "harness/property.h"
#include "harness/report.h"
#include "harness/runner.h"
#include "kernels/causal_conv1d/known_defects.h"
#include "kernels/causal_conv1d/tiling.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

using causal_conv1d::KnownDefect;
using causal_conv1d::known_defects;

const std::vector<uint64_t> kSeeds{11, 22, 33};
constexpr int64_t kCases = 2000;

SearchOptions options_for(const KnownDefect& d, const std::string& impl, uint64_t seed) {
  SearchOptions o;
  o.impl = impl;
  o.properties = {d.property};
  o.max_segments = d.max_segments;
  o.cases = kCases;
  o.seed = seed;
  return o;
}

// None of the minimal case's own shrinks fails with the same signature.
void expect_locally_minimal(const Failure& f) {
  ASSERT_TRUE(f.shrunk && f.shrunk->tree);
  EXPECT_FALSE(f.shrunk->budget_exhausted);
  const std::string signature = f.verdict().signature();
  auto shrinks = f.shrunk->tree->shrinks();
  while (auto s = shrinks.next()) {
    if (!validate(s->value()).empty()) continue;
    const Verdict v = evaluate(s->value());
    EXPECT_FALSE(v.failed() && v.signature() == signature)
        << "a smaller case fails the same way:\n" << format_case(s->value());
  }
}

struct Target {
  std::string defect, impl;
};

class KnownDefectIsFound : public testing::TestWithParam<Target> {};

TEST_P(KnownDefectIsFound, FromSeveralSeedsAndShrunkToMinimal) {
  const auto& defects = known_defects();
  const auto it = std::find_if(defects.begin(), defects.end(),
                               [&](const KnownDefect& d) { return d.name == GetParam().defect; });
  ASSERT_NE(it, defects.end());
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HuntResult h = hunt(options_for(*it, GetParam().impl, seed), it->shows);
    ASSERT_TRUE(h.match) << it->name << " not found in " << kCases << " cases; met "
                         << h.others.size() << " other failures";
    expect_locally_minimal(*h.match);
  }
}

std::vector<Target> targets() {
  std::vector<Target> all;
  for (const auto& d : known_defects())
    for (const auto& impl : d.impls) all.push_back({d.name, impl});
  return all;
}

std::string target_name(const testing::TestParamInfo<Target>& info) {
  return test_name(info.param.defect + "_" + info.param.impl);
}

INSTANTIATE_TEST_SUITE_P(Causal1d, KnownDefectIsFound, testing::ValuesIn(targets()),
                         target_name);

// The shapes the bug reports describe, asserted on what the search shrinks to.

const KnownDefect& defect(const std::string& name) {
  for (const auto& d : known_defects())
    if (d.name == name) return d;
  throw std::runtime_error("no known defect " + name);
}

TEST(DetectionShape, ClampedLeakShrinksToTwoSegmentsTheFirstShorterThanWMinusOne) {
  for (uint64_t seed : kSeeds) {
    const auto h = hunt(options_for(defect("dw head-row leak"), "tiled@clamped", seed),
                        defect("dw head-row leak").shows);
    ASSERT_TRUE(h.match);
    const Case& c = h.match->minimal();
    EXPECT_EQ(c.layout, Layout::packed);
    EXPECT_EQ(c.num_sequences(), 2) << summary(c);
    EXPECT_LT(c.lengths[0], c.W - 1) << summary(c);
    EXPECT_TRUE(c.has_initial_state);
  }
}

TEST(DetectionShape, OriginalOverCountNeedsATileNarrowerThanTheWindow) {
  for (uint64_t seed : kSeeds) {
    const auto h = hunt(options_for(defect("dh0 over-count"), "tiled@original", seed),
                        defect("dh0 over-count").shows);
    ASSERT_TRUE(h.match);
    const Case& c = h.match->minimal();
    const auto bt = causal_conv1d::backward_tiles(c.total_length(), c.W, true, c.num_cores,
                                                  /*clamp_to_window=*/false)
                        .BT;
    EXPECT_EQ(c.num_sequences(), 1);
    EXPECT_LT(bt, c.W) << summary(c);
    // Once clamped, the same case's dh0 is right: the over-count is a tiling defect.
    Case clamped = c;
    clamped.impl = "tiled@clamped";
    EXPECT_FALSE(evaluate(clamped).failed()) << summary(clamped);
  }
}

// The first failure of any property, per state: found fast and shrunk to a local minimum.
class FirstFailure : public testing::TestWithParam<std::string> {};

TEST_P(FirstFailure, IsFoundAndShrunkFromSeveralSeeds) {
  for (uint64_t seed : kSeeds) {
    SearchOptions o;
    o.impl = GetParam();
    o.cases = 500;
    o.seed = seed;
    const SearchResult r = search(o);
    ASSERT_TRUE(r.failure) << GetParam() << " passed 500 cases with seed " << seed;
    expect_locally_minimal(*r.failure);
  }
}

INSTANTIATE_TEST_SUITE_P(Causal1d, FirstFailure,
                         testing::Values("tiled@original", "tiled@clamped", "tiled@fixed"),
                         [](const auto& info) {
                           return info.param.substr(info.param.find('@') + 1);
                         });

// The merged fix removes the leaks: packed vs separate and core-count invariance hold.
TEST(DetectionFixed, MergedFixPassesPackedAndCores) {
  for (const std::string property : {"packed", "cores"}) {
    SearchOptions o;
    o.impl = "tiled@fixed";
    o.properties = {property};
    o.cases = 1000;
    o.seed = 5;
    const SearchResult r = search(o);
    EXPECT_FALSE(r.failure) << property << ": " << r.failure->verdict().signature();
  }
}

}  // namespace
}  // namespace kprop

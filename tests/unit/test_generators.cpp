// The causal_conv1d case generator: every case and every shrink is valid, draws are
// reproducible, the distribution really leans on the kernel's edges, and shrinking leads
// to the simplest case. All draws use fixed seeds, so every run checks the same cases.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/causal_conv1d.h"

namespace kprop {
namespace {

constexpr int kFullSize = 100;

std::vector<Case> draw_many(const CaseSpace& space, int count, uint64_t first_seed = 1) {
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i)
    cases.push_back(draw_causal_conv1d_case(space, first_seed + i, kFullSize).value());
  return cases;
}

std::string problems_of(const Case& c) {
  std::string text;
  for (const auto& p : validate(c)) text += p + "; ";
  return text;
}

// Visits the shrinks of `root` breadth-first-ish: up to `breadth` children per node, down
// to `depth` levels.
void walk_shrinks(const rc::Shrinkable<Case>& root, int depth, int breadth,
                  const std::function<void(const Case&)>& visit) {
  if (depth == 0) return;
  auto shrinks = root.shrinks();
  for (int taken = 0; taken < breadth; ++taken) {
    auto next = shrinks.next();
    if (!next) break;
    visit(next->value());
    walk_shrinks(*next, depth - 1, breadth, visit);
  }
}

// Follows one path to the bottom of the shrink tree, `choose` picking the child to take.
std::vector<Case> descend(rc::Shrinkable<Case> node,
                          const std::function<std::size_t(std::size_t)>& choose) {
  std::vector<Case> path{node.value()};
  for (int step = 0; step < 10000; ++step) {
    std::vector<rc::Shrinkable<Case>> children;
    auto shrinks = node.shrinks();
    for (auto next = shrinks.next(); next && children.size() < 64; next = shrinks.next())
      children.push_back(*next);
    if (children.empty()) return path;
    node = children[choose(children.size())];
    path.push_back(node.value());
  }
  ADD_FAILURE() << "shrinking did not terminate within 10000 steps";
  return path;
}

// A step of "always accept the first shrink", as a property that always fails sees it.
std::vector<Case> descend_first(const rc::Shrinkable<Case>& root) {
  return descend(root, [](std::size_t) { return std::size_t{0}; });
}

bool is_real_core_count(int64_t n) {
  return n == 20 || n == 24 || n == 30 || n == 40 || n == 48;
}

CaseSpace packed_only() {
  CaseSpace space;
  space.allow_dense = false;
  return space;
}

TEST(GeneratorTest, EveryDrawnCaseValidatesAndStaysInsideItsSpace) {
  CaseSpace wide;
  wide.impl = "clamped";
  wide.property = "gradcheck";
  wide.dtypes = {DType::bfloat16, DType::float16, DType::float32, DType::float64};
  wide.max_segments = 16;
  wide.max_length = 128;
  CaseSpace tiny;
  tiny.max_segments = 1;
  tiny.max_length = 1;
  CaseSpace degenerate;  // nonsense bounds are clamped, not trusted
  degenerate.max_segments = 0;
  degenerate.max_length = 0;
  degenerate.dtypes.clear();

  int drawn = 0;
  for (const CaseSpace& space : {CaseSpace{}, packed_only(), wide, tiny, degenerate}) {
    const int64_t most_segments = std::max<int64_t>(1, space.max_segments);
    const int64_t longest = 4 * std::max<int64_t>(1, space.max_length);
    for (int i = 0; i < 1500; ++i, ++drawn) {
      const int size = i % (kFullSize + 1);  // RapidCheck's sizes run 0..100
      const Case c = draw_causal_conv1d_case(space, 7000 + i, size).value();
      ASSERT_TRUE(validate(c).empty()) << problems_of(c) << " in " << c;
      EXPECT_EQ(c.kernel, "causal_conv1d");
      EXPECT_EQ(c.impl, space.impl);
      EXPECT_EQ(c.property, space.property);
      EXPECT_GE(c.W, 2);
      EXPECT_LE(c.W, 8);
      EXPECT_EQ(c.D % 32, 0) << c;
      EXPECT_GE(c.num_cores, 1);
      EXPECT_LE(c.num_cores, 64);
      EXPECT_LE(c.num_sequences(), most_segments) << c;
      for (int64_t L : c.lengths) EXPECT_LE(L, longest) << c;
      if (!space.allow_dense) {
        EXPECT_EQ(c.layout, Layout::packed);
      }
      const auto& allowed = space.dtypes.empty() ? std::vector<DType>{DType::float32}
                                                 : space.dtypes;
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), c.dtype), allowed.end()) << c;
    }
  }
  EXPECT_EQ(drawn, 7500);
}

TEST(GeneratorTest, EveryShrinkOfADrawnCaseValidates) {
  std::mt19937_64 pick(12345);
  long checked = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const auto root = draw_causal_conv1d_case(CaseSpace{}, seed);
    const auto check = [&](const Case& c) {
      ++checked;
      ASSERT_TRUE(validate(c).empty()) << problems_of(c) << " in a shrink of seed " << seed
                                       << ": " << c;
    };
    walk_shrinks(root, 3, 8, check);
    // Random paths reach the deep levels the breadth-first walk cannot afford.
    for (int path = 0; path < 3; ++path)
      for (const Case& c : descend(root, [&](std::size_t n) { return pick() % n; })) check(c);
  }
  EXPECT_GT(checked, 10000);
}

TEST(GeneratorTest, SameSeedAndSizeGiveTheSameCaseAndShrinks) {
  for (const CaseSpace& space : {CaseSpace{}, packed_only()}) {
    for (uint64_t seed = 100; seed < 150; ++seed) {
      for (int size : {0, 17, kFullSize}) {
        const auto a = draw_causal_conv1d_case(space, seed, size);
        const auto b = draw_causal_conv1d_case(space, seed, size);
        ASSERT_EQ(a.value(), b.value()) << "seed " << seed << " size " << size;
        std::vector<Case> shrinks_a, shrinks_b;
        walk_shrinks(a, 2, 10, [&](const Case& c) { shrinks_a.push_back(c); });
        walk_shrinks(b, 2, 10, [&](const Case& c) { shrinks_b.push_back(c); });
        ASSERT_EQ(shrinks_a, shrinks_b) << "seed " << seed << " size " << size;
      }
    }
  }
}

TEST(GeneratorTest, DifferentSeedsGiveDifferentCases) {
  const auto cases = draw_many(CaseSpace{}, 500);
  std::set<uint64_t> data_seeds;
  std::set<std::string> shapes;  // everything but the data seed
  for (const Case& c : cases) {
    data_seeds.insert(c.seed);
    Case without_seed = c;
    without_seed.seed = 0;
    shapes.insert(summary(without_seed));
  }
  EXPECT_EQ(data_seeds.size(), cases.size());
  EXPECT_GE(shapes.size(), 400u);
}

TEST(GeneratorTest, SegmentLengthsLeanOnWindowAndTileBoundaries) {
  const auto cases = draw_many(packed_only(), 2000);
  long segments = 0, at_window = 0, beyond_typical = 0;
  std::map<int64_t, long> by_length;
  for (const Case& c : cases) {
    for (int64_t L : c.lengths) {
      ++segments;
      ++by_length[L];
      if (L == 1 || L == c.W - 1 || L == c.W) ++at_window;
      if (L > 64) ++beyond_typical;
    }
  }
  const double window_share = double(at_window) / segments;
  const double beyond_share = double(beyond_typical) / segments;
  std::cout << "segments: " << segments << ", length in {1, W-1, W}: " << window_share * 100
            << "%, longer than max_length: " << beyond_share * 100 << "%\n";
  RecordProperty("window_boundary_share_percent", int(window_share * 100));
  // A uniform draw over 1..64 puts about 3/64 (5%) of lengths there.
  EXPECT_GE(window_share, 0.25);
  EXPECT_GE(beyond_typical, 1);
  EXPECT_LE(beyond_share, 0.10);  // longer than typical is the rare case
  for (int64_t edge : {7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65})
    EXPECT_GE(by_length[edge], 5) << "tile/power-of-two edge " << edge << " is rarely drawn";
}

TEST(GeneratorTest, PacksHoldFewSegmentsMostly) {
  const CaseSpace space = packed_only();
  const auto cases = draw_many(space, 2000);
  long few = 0, full = 0;
  for (const Case& c : cases) {
    if (c.num_sequences() <= 3) ++few;
    if (c.num_sequences() == space.max_segments) ++full;
  }
  EXPECT_GE(few, 2000 * 0.6);
  EXPECT_GE(full, 10);
}

TEST(GeneratorTest, WindowFavoursTheShippedWidth) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  std::map<int64_t, long> by_width;
  for (const Case& c : cases) ++by_width[c.W];
  const auto mode = std::max_element(by_width.begin(), by_width.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(mode->first, 4);
  EXPECT_GE(by_width[2] + by_width[3] + by_width[4], 2000 * 0.6);
  for (int64_t W = 2; W <= 8; ++W) EXPECT_GE(by_width[W], 20) << "W = " << W;
}

TEST(GeneratorTest, CoreCountsFavour48AndCoverOtherCounts) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  std::map<int64_t, long> by_cores;
  long real = 0;
  for (const Case& c : cases) {
    ++by_cores[c.num_cores];
    if (is_real_core_count(c.num_cores)) ++real;
  }
  const auto mode = std::max_element(by_cores.begin(), by_cores.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(mode->first, 48);
  EXPECT_GE(by_cores[48], 2000 * 0.12);
  EXPECT_GE(real, 2000 * 0.3);
  long other_values = 0;
  for (const auto& [cores, count] : by_cores)
    if (!is_real_core_count(cores)) ++other_values;
  EXPECT_GE(other_values, 40) << "core counts outside the real list are barely covered";
  EXPECT_GE(by_cores[1], 20);
  EXPECT_GE(by_cores[64], 5);
}

TEST(GeneratorTest, ChannelsAreMultiplesOf32AndMostlyDeviceLegalWithoutState) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  long stateless = 0, stateless_device_legal = 0;
  std::map<int64_t, long> with_state;
  for (const Case& c : cases) {
    ASSERT_EQ(c.D % 32, 0) << c;
    if (c.has_initial_state) {
      ++with_state[c.D];
    } else {
      ++stateless;
      if (c.D % 256 == 0) ++stateless_device_legal;
    }
  }
  ASSERT_GT(stateless, 200);
  EXPECT_GE(stateless_device_legal, stateless * 0.8);
  EXPECT_LT(stateless_device_legal, stateless) << "the D % BD error path is never drawn";
  const auto mode = std::max_element(with_state.begin(), with_state.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(mode->first, 32);
  EXPECT_GE(with_state[64] + with_state[96] + with_state[128], 100);
}

TEST(GeneratorTest, DenseCasesHaveEqualLengthsAndSmallBatches) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  long dense = 0;
  for (const Case& c : cases) {
    if (c.layout != Layout::dense) continue;
    ++dense;
    EXPECT_GE(c.num_sequences(), 1);
    EXPECT_LE(c.num_sequences(), 4);
    for (int64_t L : c.lengths) EXPECT_EQ(L, c.lengths.front()) << c;
  }
  EXPECT_GE(dense, 2000 * 0.1);
  EXPECT_LE(dense, 2000 * 0.3);
}

TEST(GeneratorTest, FlagsSplitsAndDistributionsAreAllDrawn) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  long silu = 0, bias = 0, h0 = 0, dht = 0, explicit_splits = 0;
  std::set<Distribution> distributions;
  for (const Case& c : cases) {
    silu += c.activation == Activation::silu;
    bias += c.has_bias;
    h0 += c.has_initial_state;
    dht += c.has_final_state_grad;
    explicit_splits += !c.splits.empty();
    distributions.insert(c.distribution);
  }
  EXPECT_NEAR(silu / 2000.0, 0.5, 0.07);
  EXPECT_NEAR(bias / 2000.0, 0.7, 0.07);
  EXPECT_NEAR(h0 / 2000.0, 0.75, 0.07);
  EXPECT_NEAR(dht / 2000.0, 0.5, 0.07);
  EXPECT_NEAR(explicit_splits / 2000.0, 0.7, 0.07);
  EXPECT_EQ(distributions.size(), 4u);
}

TEST(GeneratorTest, TheDataSeedNeverShrinks) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const auto root = draw_causal_conv1d_case(CaseSpace{}, seed);
    const uint64_t data_seed = root.value().seed;
    walk_shrinks(root, 2, 16, [&](const Case& c) { ASSERT_EQ(c.seed, data_seed); });
    for (const Case& c : descend_first(root)) ASSERT_EQ(c.seed, data_seed);
  }
}

TEST(GeneratorTest, FiveSegmentsShrinkToOneSegment) {
  const CaseSpace space = packed_only();
  uint64_t seed = 1;
  while (draw_causal_conv1d_case(space, seed).value().num_sequences() != 5) ++seed;
  const auto root = draw_causal_conv1d_case(space, seed);
  const Case original = root.value();

  bool offered = false;
  walk_shrinks(root, 2, 200, [&](const Case& c) {
    // Removing segments leaves everything else (other than the splits) alone.
    if (c.num_sequences() == 1 && c.W == original.W && c.D == original.D &&
        c.num_cores == original.num_cores)
      offered = true;
  });
  EXPECT_TRUE(offered) << "no 1-segment shrink of " << original;
}

TEST(GeneratorTest, AcceptingEveryShrinkEndsAtTheSimplestCase) {
  CaseSpace space;
  space.dtypes = {DType::float64, DType::bfloat16};
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto root = draw_causal_conv1d_case(space, seed);
    const Case simplest = descend_first(root).back();
    EXPECT_EQ(simplest.layout, Layout::packed) << simplest;
    EXPECT_EQ(simplest.lengths, std::vector<int64_t>{1}) << simplest;
    EXPECT_EQ(simplest.W, 2);
    EXPECT_TRUE(simplest.splits.empty()) << simplest;
    EXPECT_FALSE(simplest.has_initial_state);
    EXPECT_TRUE(simplest.D == 32 || simplest.D == 256) << simplest;
    EXPECT_EQ(simplest.num_cores, 1);
    EXPECT_EQ(simplest.dtype, DType::float64);
    EXPECT_EQ(simplest.activation, Activation::none);
    EXPECT_FALSE(simplest.has_bias);
    EXPECT_FALSE(simplest.has_final_state_grad);
    EXPECT_EQ(simplest.distribution, Distribution::normal);
    EXPECT_EQ(simplest.seed, root.value().seed);
  }
}

TEST(GeneratorTest, ShrinkingKeepsDeviceLegalChannelsLegal) {
  // A stateless failure at D = 512 must not shrink into the D % 256 error path.
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const auto root = draw_causal_conv1d_case(CaseSpace{}, seed);
    const Case c = root.value();
    if (c.has_initial_state || c.D % 256 != 0) continue;
    walk_shrinks(root, 2, 64, [&](const Case& s) {
      if (!s.has_initial_state) {
        EXPECT_EQ(s.D % 256, 0) << s << " shrunk from " << c;
      }
    });
  }
}

}  // namespace
}  // namespace kprop

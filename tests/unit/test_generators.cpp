// The causal_conv1d case generator: every case and every shrink is valid, draws are
// reproducible, the distribution really leans on the kernel's edges, shrinking leads to
// the simplest case and ends 1-minimal, and the schema names the field at fault. All
// draws use fixed seeds, so every run checks the same cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "generators/case.h"
#include "generators/choices.h"
#include "generators/draw.h"
#include "generators/schema.h"
#include "generators/shrink.h"
#include "kernels/causal_conv1d/schema.h"
#include "kernels/causal_conv1d/shape.h"

namespace kprop {
namespace {

using causal_conv1d::Activation;
using causal_conv1d::conv_shape;
using causal_conv1d::Layout;
using causal_conv1d::Shape;

const Schema& conv() { return causal_conv1d::schema(); }

Case draw(const CaseSpace& space, uint64_t seed) {
  RandomChoices choices(seed);
  return draw_case(conv(), choices, space);
}

std::vector<Case> draw_many(const CaseSpace& space, int count, uint64_t first_seed = 1) {
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) cases.push_back(draw(space, first_seed + i));
  return cases;
}

std::vector<Shape> shapes_of(const std::vector<Case>& cases) {
  std::vector<Shape> shapes;
  for (const Case& c : cases) shapes.push_back(conv_shape(c));
  return shapes;
}

std::string problems_of(const Case& c) {
  std::string text;
  for (const auto& p : validate(conv(), c)) text += p + "; ";
  return text;
}

std::string show(const Case& c) { return summary(conv(), c); }

// Visits the shrinks of `root` breadth-first-ish: up to `breadth` children per node, down
// to `depth` levels.
void walk_shrinks(const Case& root, const std::vector<DType>& dtypes, int depth, int breadth,
                  const std::function<void(const Case&)>& visit) {
  if (depth == 0) return;
  const auto children = shrink_steps(conv(), root, dtypes);
  for (size_t i = 0; i < children.size() && i < static_cast<size_t>(breadth); ++i) {
    visit(children[i]);
    walk_shrinks(children[i], dtypes, depth - 1, breadth, visit);
  }
}

// Follows one path to the bottom of the shrink tree, `choose` picking the child to take.
std::vector<Case> descend(Case node, const std::vector<DType>& dtypes,
                          const std::function<size_t(size_t)>& choose) {
  std::vector<Case> path{node};
  for (int step = 0; step < 10000; ++step) {
    auto children = shrink_steps(conv(), node, dtypes);
    if (children.size() > 64) children.resize(64);
    if (children.empty()) return path;
    node = children[choose(children.size())];
    path.push_back(node);
  }
  ADD_FAILURE() << "shrinking did not terminate within 10000 steps";
  return path;
}

// "Always accept the first shrink", as a property that always fails sees it.
std::vector<Case> descend_first(const Case& root, const std::vector<DType>& dtypes) {
  return descend(root, dtypes, [](size_t) { return size_t{0}; });
}

bool is_real_core_count(int64_t n) {
  return n == 20 || n == 24 || n == 30 || n == 40 || n == 48;
}

CaseSpace packed_only() {
  CaseSpace space;
  space.fixed["layout"] = std::string("packed");
  return space;
}

// ---- validity, reproducibility -------------------------------------------------------

TEST(GeneratorTest, EveryDrawnCaseValidatesAndStaysInsideItsSpace) {
  CaseSpace wide;
  wide.impl = "clamped";
  wide.property = "gradcheck";
  wide.dtypes = {DType::bfloat16, DType::float16, DType::float32, DType::float64};
  wide.limits["max_segments"] = 16;
  wide.limits["max_length"] = 128;
  CaseSpace tiny;
  tiny.limits["max_segments"] = 1;
  tiny.limits["max_length"] = 1;
  CaseSpace degenerate;  // nonsense limits are clamped, not trusted
  degenerate.limits["max_segments"] = 0;
  degenerate.limits["max_length"] = 0;
  degenerate.dtypes.clear();

  int drawn = 0;
  for (CaseSpace space : {CaseSpace{}, packed_only(), wide, tiny, degenerate}) {
    const bool packed = space.fixed.count("layout") > 0;
    const int64_t most_segments = std::max<int64_t>(1, space.limit(conv(), "max_segments"));
    const int64_t longest = 4 * std::max<int64_t>(1, space.limit(conv(), "max_length"));
    const auto allowed = space.dtype_choices();
    for (int i = 0; i < 1500; ++i, ++drawn) {
      space.size = i % 101;  // RapidCheck's sizes run 0..100
      const Case c = draw(space, 7000 + i);
      ASSERT_TRUE(validate(conv(), c).empty()) << problems_of(c) << " in " << show(c);
      const Shape s = conv_shape(c);
      EXPECT_EQ(c.kernel, "causal_conv1d");
      EXPECT_EQ(c.impl, space.impl);
      EXPECT_EQ(c.property, space.property);
      EXPECT_GE(s.W, 2);
      EXPECT_LE(s.W, 8);
      EXPECT_EQ(s.D % 32, 0) << show(c);
      EXPECT_GE(s.num_cores, 1);
      EXPECT_LE(s.num_cores, 64);
      EXPECT_LE(s.num_sequences(), most_segments) << show(c);
      for (int64_t L : s.lengths) EXPECT_LE(L, longest) << show(c);
      if (packed) {
        EXPECT_EQ(s.layout, Layout::packed);
      }
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), c.dtype), allowed.end()) << show(c);
    }
  }
  EXPECT_EQ(drawn, 7500);
}

TEST(GeneratorTest, LimitsAreClampedToTheirDeclaredRange) {
  CaseSpace degenerate;
  degenerate.limits["max_segments"] = 0;
  degenerate.limits["max_length"] = -5;
  EXPECT_EQ(degenerate.limit(conv(), "max_segments"), 1);
  EXPECT_EQ(degenerate.limit(conv(), "max_length"), 1);
  EXPECT_EQ(CaseSpace{}.limit(conv(), "max_segments"), 8);
  EXPECT_EQ(CaseSpace{}.limit(conv(), "max_length"), 64);
  EXPECT_THROW(CaseSpace{}.limit(conv(), "max_widgets"), std::logic_error);
}

TEST(GeneratorTest, EveryShrinkOfADrawnCaseValidates) {
  std::mt19937_64 pick(12345);
  const std::vector<DType> dtypes{DType::float32};
  long checked = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const Case root = draw(CaseSpace{}, seed);
    const auto check = [&](const Case& c) {
      ++checked;
      ASSERT_TRUE(validate(conv(), c).empty())
          << problems_of(c) << " in a shrink of seed " << seed << ": " << show(c);
    };
    walk_shrinks(root, dtypes, 3, 8, check);
    // Random paths reach the deep levels the breadth-first walk cannot afford.
    for (int path = 0; path < 3; ++path)
      for (const Case& c : descend(root, dtypes, [&](size_t n) { return pick() % n; })) check(c);
  }
  EXPECT_GT(checked, 10000);
}

TEST(GeneratorTest, SameSeedAndSizeGiveTheSameCaseAndShrinks) {
  for (CaseSpace space : {CaseSpace{}, packed_only()}) {
    for (uint64_t seed = 100; seed < 150; ++seed) {
      for (int size : {0, 17, 100}) {
        space.size = size;
        const Case a = draw(space, seed), b = draw(space, seed);
        ASSERT_EQ(a, b) << "seed " << seed << " size " << size;
        std::vector<Case> shrinks_a, shrinks_b;
        walk_shrinks(a, space.dtypes, 2, 10, [&](const Case& c) { shrinks_a.push_back(c); });
        walk_shrinks(b, space.dtypes, 2, 10, [&](const Case& c) { shrinks_b.push_back(c); });
        ASSERT_FALSE(shrinks_a.empty());
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
    shapes.insert(show(without_seed));
  }
  EXPECT_EQ(data_seeds.size(), cases.size());
  EXPECT_GE(shapes.size(), 400u);
}

TEST(GeneratorTest, SmallSizesDrawShortRangesButStillTheEdges) {
  // Size scales the uniform ranges only: at size 0 a length is an edge value or 1.
  CaseSpace small;
  small.size = 0;
  long at_window = 0, segments = 0;
  for (const Shape& s : shapes_of(draw_many(small, 1000))) {
    EXPECT_LE(s.num_cores, 64);
    for (int64_t L : s.lengths) {
      ++segments;
      at_window += L == s.W - 1 || L == s.W || L == s.W + 1;
    }
  }
  EXPECT_GE(at_window, segments * 0.2) << "edges vanished at size 0";
}

// ---- the distribution: edge bias (thresholds as for the RapidCheck generator) ---------

TEST(GeneratorTest, SegmentLengthsLeanOnWindowAndTileBoundaries) {
  const auto shapes = shapes_of(draw_many(packed_only(), 2000));
  long segments = 0, at_window = 0, beyond_typical = 0;
  std::map<int64_t, long> by_length;
  for (const Shape& s : shapes) {
    for (int64_t L : s.lengths) {
      ++segments;
      ++by_length[L];
      if (L == 1 || L == s.W - 1 || L == s.W) ++at_window;
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
  const int64_t most = space.limit(conv(), "max_segments");
  long few = 0, full = 0;
  for (const Shape& s : shapes_of(draw_many(space, 2000))) {
    if (s.num_sequences() <= 3) ++few;
    if (s.num_sequences() == most) ++full;
  }
  std::cout << "packs of <= 3 segments: " << few / 20.0 << "%, of " << most
            << " segments: " << full / 20.0 << "%\n";
  EXPECT_GE(few, 2000 * 0.6);
  EXPECT_GE(full, 10);
}

TEST(GeneratorTest, WindowFavoursTheShippedWidth) {
  std::map<int64_t, long> by_width;
  for (const Shape& s : shapes_of(draw_many(CaseSpace{}, 2000))) ++by_width[s.W];
  const auto mode = std::max_element(by_width.begin(), by_width.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(mode->first, 4);
  EXPECT_GE(by_width[2] + by_width[3] + by_width[4], 2000 * 0.6);
  for (int64_t W = 2; W <= 8; ++W) EXPECT_GE(by_width[W], 20) << "W = " << W;
}

TEST(GeneratorTest, CoreCountsFavour48AndCoverOtherCounts) {
  std::map<int64_t, long> by_cores;
  long real = 0;
  for (const Shape& s : shapes_of(draw_many(CaseSpace{}, 2000))) {
    ++by_cores[s.num_cores];
    if (is_real_core_count(s.num_cores)) ++real;
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
  long stateless = 0, stateless_device_legal = 0;
  std::map<int64_t, long> with_state;
  for (const Shape& s : shapes_of(draw_many(CaseSpace{}, 2000))) {
    ASSERT_EQ(s.D % 32, 0) << s.D;
    if (s.has_initial_state) {
      ++with_state[s.D];
    } else {
      ++stateless;
      if (s.D % 256 == 0) ++stateless_device_legal;
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
  long dense = 0;
  for (const Shape& s : shapes_of(draw_many(CaseSpace{}, 2000))) {
    if (s.layout != Layout::dense) continue;
    ++dense;
    EXPECT_GE(s.num_sequences(), 1);
    EXPECT_LE(s.num_sequences(), 4);
    for (int64_t L : s.lengths) EXPECT_EQ(L, s.lengths.front());
  }
  EXPECT_GE(dense, 2000 * 0.1);
  EXPECT_LE(dense, 2000 * 0.3);
}

TEST(GeneratorTest, FlagsSplitsAndDistributionsAreAllDrawn) {
  const auto cases = draw_many(CaseSpace{}, 2000);
  long silu = 0, bias = 0, h0 = 0, dht = 0, explicit_splits = 0;
  std::set<Distribution> distributions;
  for (const Case& c : cases) {
    const Shape s = conv_shape(c);
    silu += s.activation == Activation::silu;
    bias += s.has_bias;
    h0 += s.has_initial_state;
    dht += s.has_final_state_grad;
    explicit_splits += !s.splits.empty();
    distributions.insert(c.distribution);
  }
  EXPECT_NEAR(silu / 2000.0, 0.5, 0.07);
  EXPECT_NEAR(bias / 2000.0, 0.7, 0.07);
  EXPECT_NEAR(h0 / 2000.0, 0.75, 0.07);
  EXPECT_NEAR(dht / 2000.0, 0.5, 0.07);
  EXPECT_NEAR(explicit_splits / 2000.0, 0.7, 0.07);
  EXPECT_EQ(distributions.size(), 4u);
}

// ---- shrinking -----------------------------------------------------------------------

TEST(GeneratorTest, TheDataSeedNeverShrinks) {
  const auto dtypes = all_dtypes();
  CaseSpace space;
  space.dtypes = dtypes;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Case root = draw(space, seed);
    walk_shrinks(root, dtypes, 2, 16, [&](const Case& c) { ASSERT_EQ(c.seed, root.seed); });
    for (const Case& c : descend_first(root, dtypes)) ASSERT_EQ(c.seed, root.seed);
  }
}

TEST(GeneratorTest, FiveSegmentsShrinkToOneSegment) {
  const CaseSpace space = packed_only();
  uint64_t seed = 1;
  while (conv_shape(draw(space, seed)).num_sequences() != 5) ++seed;
  const Case original = draw(space, seed);
  const Shape o = conv_shape(original);

  bool offered = false;
  walk_shrinks(original, space.dtypes, 2, 200, [&](const Case& c) {
    // Removing segments leaves everything else (other than the splits) alone.
    const Shape s = conv_shape(c);
    if (s.num_sequences() == 1 && s.W == o.W && s.D == o.D && s.num_cores == o.num_cores)
      offered = true;
  });
  EXPECT_TRUE(offered) << "no 1-segment shrink of " << show(original);
}

TEST(GeneratorTest, AcceptingEveryShrinkEndsAtTheSimplestCase) {
  CaseSpace space;
  space.dtypes = {DType::float64, DType::bfloat16};
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Case root = draw(space, seed);
    const Case simplest = descend_first(root, space.dtypes).back();
    const Shape s = conv_shape(simplest);
    EXPECT_EQ(s.layout, Layout::packed) << show(simplest);
    EXPECT_EQ(s.lengths, std::vector<int64_t>{1}) << show(simplest);
    EXPECT_EQ(s.W, 2);
    EXPECT_TRUE(s.splits.empty()) << show(simplest);
    EXPECT_FALSE(s.has_initial_state);
    EXPECT_TRUE(s.D == 32 || s.D == 256) << show(simplest);
    EXPECT_EQ(s.num_cores, 1);
    EXPECT_EQ(simplest.dtype, DType::float64);
    EXPECT_EQ(s.activation, Activation::none);
    EXPECT_FALSE(s.has_bias);
    EXPECT_FALSE(s.has_final_state_grad);
    EXPECT_EQ(simplest.distribution, Distribution::normal);
    EXPECT_EQ(simplest.seed, root.seed);
  }
}

TEST(GeneratorTest, ShrinkingKeepsDeviceLegalChannelsLegal) {
  // A stateless failure at D = 512 must not shrink into the D % 256 error path.
  long roots = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Case root = draw(CaseSpace{}, seed);
    const Shape r = conv_shape(root);
    if (r.has_initial_state || r.D % 256 != 0) continue;
    ++roots;
    walk_shrinks(root, {DType::float32}, 2, 64, [&](const Case& c) {
      const Shape s = conv_shape(c);
      if (!s.has_initial_state) {
        EXPECT_EQ(s.D % 256, 0) << show(c) << " shrunk from " << show(root);
      }
    });
  }
  EXPECT_GE(roots, 30);
}

TEST(GeneratorTest, ShrinkStepsArePinnedParametersAndSeedPreserving) {
  CaseSpace space;
  space.dtypes = all_dtypes();
  space.fixed = {{"W", int64_t{7}}, {"layout", std::string("dense")}};
  long steps = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Case root = draw(space, seed);
    ASSERT_EQ(root.integer("W"), 7);
    ASSERT_EQ(root.choice("layout"), "dense");
    for (const Case& c : shrink_steps(conv(), root, space.dtypes, space.fixed)) {
      ++steps;
      EXPECT_EQ(c.integer("W"), 7) << show(c);
      EXPECT_EQ(c.choice("layout"), "dense") << show(c);
      EXPECT_EQ(c.seed, root.seed);
      EXPECT_NE(c, root);
      EXPECT_TRUE(validate(conv(), c).empty()) << problems_of(c);
    }
  }
  EXPECT_GT(steps, 200);
}

// "Some segment at least 5 long and a window of at least 3": a failure that needs two
// parameters away from their simplest value.
bool long_segment_wide_window(const Case& c) {
  const auto& lengths = c.integers("lengths");
  return c.integer("W") >= 3 &&
         std::any_of(lengths.begin(), lengths.end(), [](int64_t L) { return L >= 5; });
}

TEST(GeneratorTest, ShrinkCaseEndsOneMinimalThroughValidSteps) {
  CaseSpace space;
  space.dtypes = {DType::bfloat16, DType::float32, DType::float64};
  int shrunk = 0;
  for (uint64_t seed = 1; shrunk < 25 && seed < 1000; ++seed) {
    const Case failing = draw(space, seed);
    if (!long_segment_wide_window(failing)) continue;
    ++shrunk;
    long invalid_candidates = 0;
    const auto still_fails = [&](const Case& c) {
      if (!validate(conv(), c).empty()) ++invalid_candidates;
      return long_segment_wide_window(c);
    };
    std::vector<Case> accepted;
    const ShrinkRun run = shrink_case(conv(), failing, space.dtypes, still_fails, 30.0,
                                      [&](const ShrinkRun& r) { accepted.push_back(r.minimal); });
    const Case& m = run.minimal;
    SCOPED_TRACE(show(failing) + " shrank to " + show(m));
    EXPECT_FALSE(run.budget_exhausted);
    EXPECT_EQ(invalid_candidates, 0);
    EXPECT_EQ(run.steps, static_cast<int64_t>(accepted.size()));
    EXPECT_GE(run.evaluations, run.steps);
    // Each accepted step is one schema step of the case before it.
    Case before = failing;
    for (const Case& step : accepted) {
      const auto options = shrink_steps(conv(), before, space.dtypes);
      EXPECT_NE(std::find(options.begin(), options.end(), step), options.end());
      before = step;
    }
    EXPECT_TRUE(long_segment_wide_window(m));
    EXPECT_TRUE(is_one_minimal(conv(), m, space.dtypes, long_segment_wide_window));
    // The one minimal case: one segment of 5, W = 3, the rest at its simplest.
    const Shape s = conv_shape(m);
    EXPECT_EQ(s.lengths, std::vector<int64_t>{5});
    EXPECT_EQ(s.W, 3);
    EXPECT_EQ(s.layout, Layout::packed);
    EXPECT_TRUE(s.splits.empty());
    EXPECT_EQ(s.num_cores, 1);
    EXPECT_FALSE(s.has_initial_state);
    EXPECT_TRUE(s.D == 32 || s.D == 256);
    EXPECT_TRUE(needs(conv(), m).empty());
    EXPECT_EQ(m.dtype, DType::bfloat16);
    EXPECT_EQ(m.distribution, Distribution::normal);
    EXPECT_EQ(m.seed, failing.seed);
  }
  EXPECT_EQ(shrunk, 25);
}

TEST(GeneratorTest, ShrinkCaseNeverChangesPinnedParameters) {
  CaseSpace space;
  space.fixed = {{"W", int64_t{6}}, {"layout", std::string("dense")},
                 {"initial_state", true}};
  const auto has_long_segment = [](const Case& c) {
    const auto& lengths = c.integers("lengths");
    return std::any_of(lengths.begin(), lengths.end(), [](int64_t L) { return L >= 5; });
  };
  int shrunk = 0;
  for (uint64_t seed = 1; shrunk < 20 && seed < 1000; ++seed) {
    const Case failing = draw(space, seed);
    if (!has_long_segment(failing)) continue;
    ++shrunk;
    long unpinned = 0;
    const auto still_fails = [&](const Case& c) {
      unpinned += c.integer("W") != 6 || c.choice("layout") != "dense" ||
                  !c.flag("initial_state");
      return has_long_segment(c);
    };
    const ShrinkRun run =
        shrink_case(conv(), failing, space.dtypes, still_fails, 30.0, nullptr, space.fixed);
    const Case& m = run.minimal;
    EXPECT_EQ(unpinned, 0) << show(failing);
    EXPECT_EQ(m.integer("W"), 6);
    EXPECT_EQ(m.choice("layout"), "dense");
    EXPECT_TRUE(m.flag("initial_state"));
    EXPECT_EQ(m.integers("lengths"), std::vector<int64_t>{5});
    // 1-minimal among the steps that keep the pins (is_one_minimal takes no pins).
    for (const Case& c : shrink_steps(conv(), m, space.dtypes, space.fixed))
      EXPECT_FALSE(has_long_segment(c)) << show(c) << " is a smaller failure than " << show(m);
  }
  EXPECT_EQ(shrunk, 20);
}

TEST(GeneratorTest, IsOneMinimalSeesASmallerFailure) {
  // A case that still has a failing step is not 1-minimal: the check can fail.
  Case c = simplest_case(conv(), Case{});
  c.set("lengths", std::vector<int64_t>{9});
  c.set("W", int64_t{5});
  EXPECT_FALSE(is_one_minimal(conv(), c, {DType::float32}, long_segment_wide_window));
  c.set("lengths", std::vector<int64_t>{5});
  c.set("W", int64_t{3});
  EXPECT_TRUE(is_one_minimal(conv(), c, {DType::float32}, long_segment_wide_window));
}

// ---- the schema: validation messages, set/get, fit -----------------------------------

Case valid_case() {
  Case base;
  base.impl = "tiled";
  Case c = simplest_case(conv(), base);
  c.set("lengths", std::vector<int64_t>{4, 7});
  c.set("splits", std::vector<int64_t>{2, 7});
  c.set("W", int64_t{4});
  return c;
}

// The one problem of `c`, which must start with the field name.
std::string only_problem(const Case& c) {
  const auto problems = validate(conv(), c);
  EXPECT_EQ(problems.size(), 1u) << problems_of(c);
  return problems.empty() ? "" : problems.front();
}

TEST(SchemaTest, ValidationMessagesNameTheField) {
  ASSERT_TRUE(validate(conv(), valid_case()).empty()) << problems_of(valid_case());
  const auto starts = [](const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
  };
  Case c = valid_case();
  c.set("lengths", std::vector<int64_t>{4, 0});
  c.set("splits", std::vector<int64_t>{});
  EXPECT_TRUE(starts(only_problem(c), "lengths[1]: 0 is outside 1..")) << only_problem(c);

  c = valid_case();
  c.set("layout", std::string("dense"));
  c.set("splits", std::vector<int64_t>{});
  EXPECT_EQ(only_problem(c),
            "lengths[1]: 7 is outside 4..4 (dense layout: every sequence as long as the first)");

  c = valid_case();
  c.set("splits", std::vector<int64_t>{5, 7});
  EXPECT_EQ(only_problem(c), "splits[0]: 5 is outside 1..4 (a split lies inside its sequence)");

  c = valid_case();
  c.set("splits", std::vector<int64_t>{1});
  EXPECT_EQ(only_problem(c), "splits: 1 entries for 2 in lengths");

  c = valid_case();
  c.set("W", int64_t{0});
  EXPECT_EQ(only_problem(c), "W: 0 is outside 1..256");

  c = valid_case();
  c.set("D", int64_t{16385});
  EXPECT_EQ(only_problem(c), "D: 16385 is outside 1..16384");

  c = valid_case();
  c.params.erase("num_cores");
  EXPECT_EQ(only_problem(c), "num_cores: missing");

  c = valid_case();
  c.set("W", std::string("4"));
  EXPECT_EQ(only_problem(c), "W: must be an integer");

  c = valid_case();
  c.set("bias", int64_t{1});
  EXPECT_EQ(only_problem(c), "bias: must be true or false");

  c = valid_case();
  c.set("activation", std::string("relu"));
  EXPECT_TRUE(starts(only_problem(c), "activation: unknown value 'relu'")) << only_problem(c);

  c = valid_case();
  c.set("widht", int64_t{4});
  EXPECT_TRUE(starts(only_problem(c), "widht: unknown parameter of causal_conv1d"));

  c = valid_case();
  c.set("lengths", std::vector<int64_t>{});
  c.set("splits", std::vector<int64_t>{});
  EXPECT_TRUE(starts(only_problem(c), "lengths: at least 1")) << only_problem(c);

  c = valid_case();
  c.set("lengths", std::vector<int64_t>(65, 1));
  c.set("splits", std::vector<int64_t>{});
  EXPECT_TRUE(starts(only_problem(c), "lengths: at most 64 entries")) << only_problem(c);

  c = valid_case();
  c.kernel = "mamba_scan";
  EXPECT_TRUE(starts(only_problem(c), "kernel: 'mamba_scan'")) << only_problem(c);
}

TEST(SchemaTest, EncodeRefusesAnInvalidCaseNamingTheField) {
  Case c = valid_case();
  c.set("W", int64_t{0});
  CaseSpace space;
  space.impl = c.impl;
  try {
    encode(conv(), c, space);
    FAIL() << "an invalid case was encoded";
  } catch (const CaseError& e) {
    EXPECT_NE(std::string(e.what()).find("W: 0 is outside"), std::string::npos) << e.what();
  }
  c = valid_case();
  c.dtype = DType::float16;  // not among the space's dtypes
  EXPECT_THROW(encode(conv(), c, space), CaseError);
}

TEST(SchemaTest, SetParamRoundTripsGetParam) {
  CaseSpace space;
  space.dtypes = all_dtypes();
  space.impl = "tiled@clamped";
  space.property = "chunked";
  long checked = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Case c = draw(space, seed);
    // Every settable name alone: what get_param prints, set_param reads back.
    for (const auto& name : settable_names(conv())) {
      const std::string text = get_param(conv(), c, name);
      Case t = c;
      set_param(conv(), t, name, text);
      EXPECT_EQ(get_param(conv(), t, name), text) << name << " of " << show(c);
      // Only `length` (every sequence as long as the last) may change other values.
      if (name != "length") {
        EXPECT_EQ(t, c) << name;
      }
      ++checked;
    }
    // All parameters in draw order onto the simplest case rebuild the case exactly.
    Case t = simplest_case(conv(), Case{});
    for (const auto& name : settable_names(conv()))
      if (name != "length" && name != "tail")
        set_param(conv(), t, name, get_param(conv(), c, name));
    EXPECT_EQ(t, c) << show(t) << " vs " << show(c);
  }
  EXPECT_GT(checked, 2000);

  Case c = valid_case();
  set_param(conv(), c, "length", "9");
  EXPECT_EQ(c.integers("lengths"), (std::vector<int64_t>{9, 9}));
  EXPECT_EQ(get_param(conv(), c, "length"), "9");
  set_param(conv(), c, "tail", "3");
  EXPECT_EQ(c.integers("lengths"), (std::vector<int64_t>{9, 3}));
  EXPECT_EQ(get_param(conv(), c, "tail"), "3");
  EXPECT_TRUE(validate(conv(), c).empty()) << problems_of(c);
  set_param(conv(), c, "seed", "18446744073709551615");
  EXPECT_EQ(c.seed, UINT64_MAX);
  EXPECT_EQ(get_param(conv(), c, "seed"), "18446744073709551615");
}

TEST(SchemaTest, SetParamFitsTheParametersThatDependOnIt) {
  Case c = valid_case();  // lengths 4,7 splits 2,7
  set_param(conv(), c, "lengths", "3,2");
  EXPECT_EQ(c.integers("lengths"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(c.integers("splits"), (std::vector<int64_t>{2, 2}));  // the split follows
  EXPECT_TRUE(validate(conv(), c).empty()) << problems_of(c);
  set_param(conv(), c, "lengths", "6");
  EXPECT_TRUE(validate(conv(), c).empty()) << problems_of(c);
  // The value itself is left for validate() to judge, not clamped.
  set_param(conv(), c, "W", "0");
  EXPECT_EQ(c.integer("W"), 0);
  EXPECT_EQ(only_problem(c), "W: 0 is outside 1..256");
}

TEST(SchemaTest, SetParamOfABadValueThrowsNamingIt) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"W", "four"},      {"W", ""},           {"W", "4x"},          {"W", "99999999999999999999"},
      {"layout", "diag"}, {"bias", "maybe"},   {"lengths", "1,,2"},  {"lengths", "1,x"},
      {"splits", "a"},    {"seed", "-1"},      {"seed", "0x10"},     {"dtype", "int8"},
      {"distribution", "cauchy"}, {"length", "long"}, {"tail", ""},  {"activation", "relu"}};
  for (const auto& [name, text] : bad) {
    Case c = valid_case();
    const Case before = c;
    try {
      set_param(conv(), c, name, text);
      ADD_FAILURE() << name << "=" << text << " was accepted";
    } catch (const CaseError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_EQ(c, before) << name << "=" << text << " changed the case";
  }
  Case c = valid_case();
  try {
    set_param(conv(), c, "widht", "4");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const CaseError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'widht'"), std::string::npos) << what;
    EXPECT_NE(what.find("known: "), std::string::npos) << what;
    EXPECT_NE(what.find("num_cores"), std::string::npos) << what;
  }
  EXPECT_THROW(get_param(conv(), c, "widht"), CaseError);
}

TEST(SchemaTest, FitIsIdempotentAndRepairsWhatItCan) {
  std::mt19937_64 rng(99);
  const auto any = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  CaseSpace space;
  space.dtypes = all_dtypes();
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const Case drawn = draw(space, seed);
    Case once = drawn;
    fit(conv(), once);
    ASSERT_EQ(once, drawn) << "fit changed a valid case";

    // Break a few parameters: out of bounds, wrong counts, wrong types, missing.
    Case broken = drawn;
    for (int edits = static_cast<int>(any(1, 4)); edits > 0; --edits) {
      switch (any(0, 7)) {
        case 0: broken.set("W", any(-5, 400)); break;
        case 1: {
          std::vector<int64_t> xs(static_cast<size_t>(any(0, 70)));
          for (auto& x : xs) x = any(-3, 2'000'000);
          broken.set("lengths", xs);
          break;
        }
        case 2: {
          std::vector<int64_t> xs(static_cast<size_t>(any(0, 5)));
          for (auto& x : xs) x = any(-3, 300);
          broken.set("splits", xs);
          break;
        }
        case 3: broken.set("D", any(-100, 40000)); break;
        case 4: broken.set("layout", std::string(any(0, 1) ? "dense" : "ragged")); break;
        case 5: broken.params.erase(conv().params[static_cast<size_t>(any(0, 9))].name); break;
        case 6: broken.set("num_cores", std::string("many")); break;
        case 7: broken.set("bias", int64_t{3}); break;
      }
    }
    Case f1 = broken;
    fit(conv(), f1);
    Case f2 = f1;
    fit(conv(), f2);
    ASSERT_EQ(f1, f2) << "fit is not idempotent on " << show(broken);
    ASSERT_TRUE(validate(conv(), f1).empty()) << problems_of(f1) << " after fitting";
    EXPECT_EQ(f1.seed, drawn.seed);
  }
}

TEST(SchemaTest, SimplestAndDefaultCasesAreValid) {
  Case base;
  base.impl = "tiled";
  const Case simplest = simplest_case(conv(), base);
  const Case def = default_case(conv(), base);
  EXPECT_TRUE(validate(conv(), simplest).empty()) << problems_of(simplest);
  EXPECT_TRUE(validate(conv(), def).empty()) << problems_of(def);
  EXPECT_TRUE(needs(conv(), simplest).empty());
  EXPECT_EQ(def.integer("W"), 4);
  EXPECT_EQ(def.integer("num_cores"), 48);
  EXPECT_TRUE(shrink_steps(conv(), simplest, {DType::float32}).empty())
      << "the simplest case still shrinks";
}

}  // namespace
}  // namespace kprop

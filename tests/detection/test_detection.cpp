// Detection: from a cold start, kprop's search finds every known defect of the
// historical Ascend states from several fixed seeds and shrinks it to a minimal case of
// the expected shape; the correct tiling and the merged fix do not show them.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "kernels/causal_conv1d/shape.h"
#include "kernels/causal_conv1d/tiling.h"
#include "tests/detection/minimality.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

using causal_conv1d::conv_shape;

const Kernel& conv() { return find_kernel("causal_conv1d"); }
std::vector<KnownDefect> known_defects() { return conv().known_defects(); }

const std::vector<uint64_t> kSeeds{11, 22, 33};
constexpr int64_t kCases = 2000;

SearchOptions options_for(const KnownDefect& d, const std::string& impl, uint64_t seed) {
  SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = impl;
  o.properties = {d.property};
  o.limits = d.limits;
  o.cases = kCases;
  o.seed = seed;
  return o;
}

// The historical states in the order they were merged, then kprop's correct tiling.
const std::vector<std::string> kHistory{"tiled@original", "tiled@clamped", "tiled@fixed",
                                        "tiled"};

// The first state after `impl` that no longer has the defect: the one that fixed it.
std::string fixed_by(const KnownDefect& d, const std::string& impl) {
  auto it = std::find(kHistory.begin(), kHistory.end(), impl);
  for (++it; it != kHistory.end(); ++it)
    if (std::find(d.impls.begin(), d.impls.end(), *it) == d.impls.end()) return *it;
  return "";
}

// The minimal case is evidence of this defect and not of the case alone: the state
// that fixed the defect passes it, with the same property and data, while the state it
// was found on still fails it with the same symptom.
void expect_fixed_by_next_state(const KnownDefect& d, const Failure& f) {
  const std::string fixer = fixed_by(d, f.minimal().impl);
  ASSERT_FALSE(fixer.empty()) << d.name << " on " << f.minimal().impl;
  const std::string text = summary(conv().schema(), f.minimal());
  Case fixed = f.minimal();
  fixed.impl = fixer;
  const Verdict after = evaluate(fixed);
  EXPECT_EQ(after.status, Verdict::Status::pass)
      << d.name << ": " << fixer << " does not pass the minimal case " << text << ": "
      << after.signature() << "\n" << format_error_table(after);
  EXPECT_TRUE(after.memory.empty()) << after.signature();
  // The same property on the unfixed state: still the defect's symptom.
  const Verdict before = evaluate(f.minimal());
  EXPECT_TRUE(before.shows(f.symptom)) << text << ": " << before.signature();
}

// What localization promises (README "Localize", harness/engine/runner.h), stated again here:
// the first call of the failing property (its calls(), each a case of its own) that fails
// vs_reference on its own; none when the property is vs_reference or only the relation
// fails.
std::optional<Case> first_failing_call(const Case& found) {
  if (found.property == kDirectProperty) return std::nullopt;
  for (Case call : find_property(found.property).calls(conv(), found)) {
    call.property = kDirectProperty;
    if (!validate(conv().schema(), call).empty()) continue;
    if (evaluate(call).failed()) return call;
  }
  return std::nullopt;
}

// A kept failure was localized: where a call of the property that found it fails on its
// own, the kept case and its verdict are vs_reference's (the same corpus entry as the
// defect seen directly); otherwise the property's own.
void expect_localized(const Failure& f) {
  const auto call = first_failing_call(f.found);
  const std::string kept = call ? kDirectProperty : f.found.property;
  EXPECT_EQ(f.minimal().property, kept)
      << "found by " << f.found.property << ": " << summary(conv().schema(), f.found);
  EXPECT_EQ(f.verdict().property, kept) << f.verdict().signature();
}

struct Target {
  std::string defect, impl;
};

void PrintTo(const Target& t, std::ostream* os) { *os << t.defect << " on " << t.impl; }

class KnownDefectIsFound : public testing::TestWithParam<Target> {};

TEST_P(KnownDefectIsFound, FromSeveralSeedsAndShrunkToMinimal) {
  const auto& defects = known_defects();
  const auto it = std::find_if(defects.begin(), defects.end(),
                               [&](const KnownDefect& d) { return d.name == GetParam().defect; });
  ASSERT_NE(it, defects.end());
  for (uint64_t seed : kSeeds) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HuntResult h =
        hunt(options_for(*it, GetParam().impl, seed), [&](const Failure& f) { return shows(*it, f); });
    ASSERT_TRUE(h.match) << it->name << " not found in " << kCases << " cases; met "
                         << h.others.size() << " other failures";
    EXPECT_EQ(h.match->found.property, it->property);
    expect_localized(*h.match);
    expect_one_minimal(*h.match);
    expect_fixed_by_next_state(*it, *h.match);
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

// Localization in process: a failure of a metamorphic property is kept as the first of
// its calls that fails vs_reference on its own: without shrinking, the kept case is that
// call itself, its verdict vs_reference's, showing the symptom it is kept for.
struct Relation {
  std::string property, impl;
  std::map<std::string, ParamValue> fixed;
  int64_t call;  // which of the property's calls fails first (0: the case itself)
};

void PrintTo(const Relation& r, std::ostream* os) { *os << r.property << " on " << r.impl; }

class MetamorphicFailure : public testing::TestWithParam<Relation> {};

TEST_P(MetamorphicFailure, IsKeptAsTheFirstCallThatFailsOnItsOwn) {
  const Relation& rel = GetParam();
  SearchOptions o;
  o.kernel = "causal_conv1d";
  o.impl = rel.impl;
  o.properties = {rel.property};
  o.fixed = rel.fixed;
  o.cases = 500;
  o.seed = kSeeds[0];
  o.shrink = false;
  const SearchResult r = search(o);
  ASSERT_TRUE(r.failure) << rel.impl << " passed " << o.cases << " cases of " << rel.property;
  const Failure& f = *r.failure;
  const std::string text = summary(conv().schema(), f.found);
  EXPECT_EQ(f.found.property, rel.property);
  const auto calls = find_property(rel.property).calls(conv(), f.found);
  const auto call = first_failing_call(f.found);
  ASSERT_TRUE(call) << "no call of " << text << " fails on its own";
  ASSERT_LT(rel.call, static_cast<int64_t>(calls.size())) << text;
  Case expected = calls[static_cast<size_t>(rel.call)];
  expected.property = kDirectProperty;
  EXPECT_EQ(*call, expected) << "the first failing call is not call " << rel.call << " of " << text;
  ASSERT_TRUE(f.shrunk) << "kept as found (" << f.found.property << "), not localized: " << text;
  EXPECT_EQ(f.minimal(), *call) << "kept:\n" << format_case(f.minimal()) << "want:\n"
                                << format_case(*call);
  EXPECT_EQ(f.verdict().property, kDirectProperty) << f.verdict().signature();
  EXPECT_EQ(f.verdict().impl, rel.impl);
  EXPECT_TRUE(f.verdict().failed());
  EXPECT_TRUE(f.verdict().shows(f.symptom)) << f.symptom << " / " << f.verdict().signature();
  EXPECT_EQ(f.verdict().signature().rfind("causal_conv1d/" + rel.impl + "/vs_reference/", 0), 0u)
      << f.verdict().signature();
}

INSTANTIATE_TEST_SUITE_P(
    Causal1d, MetamorphicFailure,
    testing::Values(
        // The packed call itself leaks the next sequence's dy into dw.
        Relation{"packed", "tiled@clamped", {}, 0},
        // One core gives the widest tiles (no over-count); the retiled call, 48 cores,
        // has BT < W and over-counts dh0: the second call is the one kept.
        Relation{"cores", "tiled@original",
                 {{"num_cores", int64_t{1}}, {"initial_state", true},
                  {"layout", std::string("dense")}},
                 1},
        // Here the whole case passes vs_reference and the first part of its split fails:
        // that part is the one kept.
        Relation{"chunked", "tiled@original", {}, 1}),
    [](const auto& info) { return info.param.property + "_" + std::to_string(info.index); });

// The shapes the bug reports describe, asserted on what the search shrinks to.

KnownDefect defect(const std::string& name) {
  for (const auto& d : known_defects())
    if (d.name == name) return d;
  throw std::runtime_error("no known defect " + name);
}

HuntResult hunt_for(const std::string& name, const std::string& impl, uint64_t seed) {
  const KnownDefect d = defect(name);
  return hunt(options_for(d, impl, seed), [&](const Failure& f) { return shows(d, f); });
}

TEST(DetectionShape, ClampedLeakShrinksToTwoSegmentsTheFirstShorterThanWMinusOne) {
  for (uint64_t seed : kSeeds) {
    const auto h = hunt_for("dw head-row leak", "tiled@clamped", seed);
    ASSERT_TRUE(h.match);
    const auto c = conv_shape(h.match->minimal());
    const std::string text = summary(conv().schema(), h.match->minimal());
    EXPECT_EQ(c.layout, causal_conv1d::Layout::packed);
    EXPECT_EQ(c.num_sequences(), 2) << text;
    EXPECT_LT(c.lengths[0], c.W - 1) << text;
    EXPECT_TRUE(c.has_initial_state);
    // Shrinking may drop the other symptoms: nothing optional is left but h0.
    EXPECT_FALSE(c.has_bias || c.has_final_state_grad) << text;
    EXPECT_EQ(h.match->identity,
              "causal_conv1d/tiled@clamped/dw [taps that read h0] {2 lengths, initial_state}");
  }
}

// A case nobody drew — written by hand, as a bug report gives it — shrinks to the same
// minimal family as the search finds: lengths [3, 29], W = 5 on the clamped state fails
// (the first segment is shorter than W - 1) and shrinks to the dw leak's identity.
TEST(DetectionShape, AHandWrittenCaseShrinksToTheFamilyTheSearchFinds) {
  causal_conv1d::Shape s;
  s.lengths = {3, 29};
  s.W = 5;
  s.D = 32;
  s.num_cores = 48;
  s.has_initial_state = true;
  Case hand;
  hand.kernel = "causal_conv1d";
  hand.impl = "tiled@clamped";
  hand.property = "packed";
  hand.seed = 1;
  hand = causal_conv1d::with_shape(hand, s);
  ASSERT_TRUE(validate(conv().schema(), hand).empty());
  const Verdict v = evaluate(hand);
  ASSERT_TRUE(v.failed()) << v.message;
  const std::string symptom = "dw [taps that read h0]";
  ASSERT_TRUE(v.shows(symptom)) << v.signature();

  const Localized direct = localize(hand, v);
  const ShrinkResult r = shrink(direct.c, direct.verdict, symptom, 60);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_GT(r.steps, 0);
  Failure f;
  f.found = hand;
  f.found_verdict = v;
  f.symptom = symptom;
  f.shrunk = r;
  f.identity = identity(conv().schema(), r.minimal, symptom);
  const auto searched = hunt_for("dw head-row leak", "tiled@clamped", kSeeds[0]);
  ASSERT_TRUE(searched.match);
  EXPECT_EQ(f.identity, searched.match->identity);
  EXPECT_TRUE(shows(defect("dw head-row leak"), f)) << summary(conv().schema(), r.minimal);
  expect_one_minimal(f);
}

// The four defects of `clamped` (and the six of `original`) keep four (six) identities:
// one defect, one corpus entry, and different defects apart.
TEST(DetectionIdentity, EveryKnownDefectOfAStateHasItsOwnIdentity) {
  for (const std::string impl : {"tiled@clamped", "tiled@original"}) {
    std::set<std::string> identities;
    size_t defects = 0;
    for (const auto& d : known_defects()) {
      if (std::find(d.impls.begin(), d.impls.end(), impl) == d.impls.end()) continue;
      ++defects;
      const auto h = hunt_for(d.name, impl, kSeeds[0]);
      ASSERT_TRUE(h.match) << d.name << " on " << impl;
      identities.insert(h.match->identity);
    }
    EXPECT_EQ(identities.size(), defects) << impl;
  }
}

TEST(DetectionShape, OriginalOverCountNeedsATileNarrowerThanTheWindow) {
  for (uint64_t seed : kSeeds) {
    const auto h = hunt_for("dh0 over-count", "tiled@original", seed);
    ASSERT_TRUE(h.match);
    const auto c = conv_shape(h.match->minimal());
    const std::string text = summary(conv().schema(), h.match->minimal());
    const auto bt = causal_conv1d::backward_tiles(c.total_length(), c.W, true, c.num_cores,
                                                  /*clamp_to_window=*/false)
                        .BT;
    EXPECT_EQ(c.num_sequences(), 1);
    EXPECT_LT(bt, c.W) << text;
    // Once clamped, the same case's dh0 is right: the over-count is a tiling defect.
    Case clamped = h.match->minimal();
    clamped.impl = "tiled@clamped";
    EXPECT_FALSE(evaluate(clamped).failed()) << text;
  }
}

// The first failure of any property, per state: found fast and shrunk to a local minimum.
class FirstFailure : public testing::TestWithParam<std::string> {};

TEST_P(FirstFailure, IsFoundAndShrunkFromSeveralSeeds) {
  for (uint64_t seed : kSeeds) {
    SearchOptions o;
    o.kernel = "causal_conv1d";
    o.impl = GetParam();
    o.cases = 500;
    o.seed = seed;
    const SearchResult r = search(o);
    ASSERT_TRUE(r.failure) << GetParam() << " passed 500 cases with seed " << seed;
    expect_one_minimal(*r.failure);
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
    o.kernel = "causal_conv1d";
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

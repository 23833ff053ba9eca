// Structure-aware mutation (generators/mutate.h) over causal_conv1d's schema, which has
// every kind of parameter: integers, a list (lengths) with a list that follows its count
// (splits), flags and choices. Every mutated case is valid, keeps its data seed and the
// pinned parameters, and round-trips through the fuzzer's bytes; each kind of mutation
// occurs and changes what it says it changes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "generators/choices.h"
#include "generators/draw.h"
#include "generators/mutate.h"
#include "generators/schema.h"
#include "kernels/causal_conv1d/schema.h"

namespace kprop {
namespace {

const Schema& conv() { return causal_conv1d::schema(); }

CaseSpace space_of(std::map<std::string, ParamValue> fixed = {}) {
  CaseSpace s;
  s.impl = "tiled";
  s.property = "vs_reference";
  s.dtypes = {DType::float32, DType::bfloat16};
  s.fixed = std::move(fixed);
  return s;
}

Case drawn(const CaseSpace& space, uint64_t seed) {
  RandomChoices choices(seed);
  return draw_case(conv(), choices, space);
}

TEST(Mutate, EveryMutationIsValidKeepsTheSeedAndRoundTripsThroughBytes) {
  const CaseSpace space = space_of();
  RandomChoices random(7);
  std::map<Mutation, int> kinds;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Case c = drawn(space, seed);
    const auto m = mutate(conv(), c, space, random);
    ASSERT_TRUE(m) << "no mutation of case " << seed;
    ++kinds[m->mutation];
    EXPECT_NE(m->c, c);
    EXPECT_EQ(m->c.seed, c.seed) << "the tensor contents must stay";
    EXPECT_TRUE(validate(conv(), m->c).empty()) << to_string(m->mutation) << " " << m->param;
    const auto bytes = encode(conv(), m->c, space);
    EXPECT_EQ(decode(conv(), bytes.data(), bytes.size(), space), m->c) << to_string(m->mutation);
  }
  for (Mutation kind : all_mutations()) EXPECT_GT(kinds[kind], 0) << to_string(kind);
}

TEST(Mutate, EachKindChangesWhatItSays) {
  const CaseSpace space = space_of();
  RandomChoices random(11);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const Case c = drawn(space, seed);
    const size_t n = c.integers("lengths").size();
    if (auto m = mutate(conv(), c, space, random, Mutation::list_insert); m && m->param == "lengths")
      EXPECT_EQ(m->c.integers("lengths").size(), n + 1);
    if (auto m = mutate(conv(), c, space, random, Mutation::list_delete); m && m->param == "lengths")
      EXPECT_EQ(m->c.integers("lengths").size(), n - 1);
    if (auto m = mutate(conv(), c, space, random, Mutation::list_duplicate)) {
      ASSERT_EQ(m->param, "lengths");  // splits follows lengths' count: never on its own
      const auto& xs = m->c.integers("lengths");
      ASSERT_EQ(xs.size(), n + 1);
      EXPECT_TRUE(std::adjacent_find(xs.begin(), xs.end()) != xs.end());
    }
    if (auto m = mutate(conv(), c, space, random, Mutation::flag_toggle))
      EXPECT_NE(m->c.flag(m->param), c.flag(m->param));
    if (auto m = mutate(conv(), c, space, random, Mutation::edge_value); m && m->param == "W") {
      const auto edges = edge_values(conv(), conv().at("W"), c, 0, space);
      EXPECT_NE(std::find(edges.begin(), edges.end(), m->c.integer("W")), edges.end());
    }
  }
}

TEST(Mutate, PinnedParametersNeverChange) {
  const CaseSpace space = space_of({{"W", int64_t{4}}, {"initial_state", true}});
  RandomChoices random(3);
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const Case c = drawn(space, seed);
    const auto m = mutate(conv(), c, space, random);
    ASSERT_TRUE(m);
    EXPECT_NE(m->param, "W");
    EXPECT_EQ(m->c.integer("W"), 4);
    EXPECT_TRUE(m->c.flag("initial_state"));
  }
}

// Edges are the values the generator leans on, within the bounds the case gives.
TEST(Mutate, EdgeValuesAreTheDrawsEdgesWithinBounds) {
  const CaseSpace space = space_of();
  const Case c = drawn(space, 5);
  const ParamSpec& W = conv().at("W");
  const auto edges = edge_values(conv(), W, c, 0, space);
  ASSERT_FALSE(edges.empty());
  EXPECT_TRUE(std::is_sorted(edges.begin(), edges.end()));
  const Bounds b = W.bounds_in(c, 0);
  for (int64_t e : edges) EXPECT_TRUE(b.contains(e)) << e;
  EXPECT_NE(std::find(edges.begin(), edges.end(), std::get<int64_t>(W.simplest)), edges.end());
}

TEST(Mutate, CrossOverTakesFromBothParentsAndIsValid) {
  const CaseSpace space = space_of();
  RandomChoices random(5);
  int from_b = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Case a = drawn(space, seed), b = drawn(space, seed + 1000);
    const auto child = cross_over(conv(), a, b, space, random);
    ASSERT_TRUE(child);
    EXPECT_EQ(child->seed, a.seed);
    EXPECT_TRUE(validate(conv(), *child).empty());
    for (const auto& [name, value] : child->params)
      if (value != a.params.at(name) && value == b.params.at(name)) ++from_b;
  }
  EXPECT_GT(from_b, 0);
}

}  // namespace
}  // namespace kprop

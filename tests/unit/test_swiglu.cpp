// swiglu (kernels/swiglu/swiglu.cpp), a kernel declared in one file: its row emulation
// passes every property, and the planted backward that drops the second term of silu's
// derivative is found from a cold start and shrunk to one element, which the correct
// emulation passes.
#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/search_options.h"

namespace kprop {
namespace {

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties = {}) {
  return search_options("swiglu", impl, cases, seed, std::move(properties));
}

// 1400 cases over the seven properties (neutral skips: swiglu has no optional input).
TEST(Swiglu, TheRowEmulationPassesEveryProperty) {
  const SearchResult r = search(options("rows", 1400, 5));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.skipped, 200);
  EXPECT_EQ(r.tally.passed, 1200);
}

// composition adds p_t = t (.) t's gradient, 2 dp t, to the kernel's in float64: with a
// heavy-tailed b that term is large, and its rounding once put the float64 reference
// itself out of the kernel's bound for db. The bound now holds that sum's rounding too.
TEST(Swiglu, CompositionBoundsTheFloat64SumOfALeafsGradients) {
  Case c;
  c.kernel = "swiglu";
  c.property = "composition";
  c.params = {{"rows", int64_t{1}}, {"cols", int64_t{62}}};
  c.seed = 5035463472889238762ull;
  c.distribution = Distribution::heavy_tailed;
  c.cotangents = Cotangents::ones;
  for (const std::string impl : {"reference", "rows"}) {
    c.impl = impl;
    const Verdict v = evaluate(c);
    EXPECT_EQ(v.status, Verdict::Status::pass) << impl << "\n" << format_error_table(v);
  }
}

TEST(Swiglu, TheDroppedDerivativeTermIsFoundAndShrunk) {
  const Kernel& kernel = find_kernel("swiglu");
  ASSERT_EQ(kernel.known_defects().size(), 1u);
  const KnownDefect d = kernel.known_defects()[0];
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SearchResult r = search(options("rows@dsilu", 200, seed, {d.property}));
    ASSERT_TRUE(r.failure);
    const Failure& f = *r.failure;
    EXPECT_TRUE(shows(d, f)) << f.identity;
    EXPECT_EQ(f.identity, "swiglu/rows@dsilu/da");
    const Case& m = f.minimal();
    EXPECT_EQ(m.integer("rows"), 1);
    EXPECT_EQ(m.integer("cols"), 1);
    const auto shows_symptom = [&](const Case& c) { return evaluate(c).shows(f.symptom); };
    EXPECT_TRUE(is_one_minimal(kernel.schema(), m, find_property(m.property).dtypes(), shows_symptom));
    Case correct = m;
    correct.impl = "rows";
    EXPECT_EQ(evaluate(correct).status, Verdict::Status::pass);
  }
}

}  // namespace
}  // namespace kprop

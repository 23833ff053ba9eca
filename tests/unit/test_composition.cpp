// `composition` (harness/engine/properties/composition.cpp): the implementation inside a residual
// and with its output used twice, beside an op that saved its inputs. Test-only variants of
// scaled_tanh that write over x in their forward or dx over the dy they receive
// (tests/kernels/scaled_tanh_variants/overwrites.cpp), declared, are handed copies by every
// single-call property and pass them; here they corrupt the graph and fail.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <set>

#include "harness/engine/diagnosis.h"
#include "harness/engine/property.h"
#include "harness/storage/case_file.h"
#include "harness/execution/takes.h"
#include "harness/presentation/report.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

const char* kXOverwritten = "kprop_variant_x_overwritten::scaled_tanh";
const char* kDyOverwritten = "kprop_variant_dy_overwritten::scaled_tanh";

// Declared overwrites for the life of a test.
struct Declared {
  Declared() {
    declare_takes("scaled_tanh", kXOverwritten, Takes{{}, {}, {}, {}, {}, {"x"}});
    declare_takes("scaled_tanh", kDyOverwritten, Takes{{}, {}, {}, {}, {}, {"dy"}});
  }
  ~Declared() {
    declare_takes("scaled_tanh", kXOverwritten, Takes{});
    declare_takes("scaled_tanh", kDyOverwritten, Takes{});
  }
};

TEST(Composition, AForwardThatWritesOverItsInputCorruptsTheOpThatSavedIt) {
  Declared declared;
  for (const std::string property : {"vs_reference", "gradient", "layout", "guard", "neutral"})
    EXPECT_FALSE(evaluate(tanh_case(kXOverwritten, 9, property)).failed()) << property;
  const Verdict v = evaluate(tanh_case(kXOverwritten, 9, "composition"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  ASSERT_FALSE(v.symptoms().empty());
  EXPECT_EQ(v.symptoms()[0].rfind("dx in a residual", 0), 0u) << v.signature();
}

// The graph is part of the symptom, so of the identity: a kept defect of the plain call in
// the same tensor (a known float64 rounding, say) never hides a corrupted graph. A worker
// process hands the verdict back as JSON: the graph must come back with it.
TEST(Composition, TheGraphIsPartOfTheSymptomAndSurvivesAWorkersVerdict) {
  Declared declared;
  const Verdict v = evaluate(tanh_case(kXOverwritten, 9, "composition"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  for (const auto& s : v.symptoms())
    EXPECT_TRUE(s.find(" in a residual") != std::string::npos ||
                s.find(" used twice") != std::string::npos) << s;
  EXPECT_EQ(verdict_from_json(verdict_to_json(v)).symptoms(), v.symptoms());
}

TEST(Composition, ABackwardThatWritesDxOverItsDyCorruptsTheResidualBranch) {
  Declared declared;
  for (const std::string property : {"vs_reference", "gradient", "layout", "guard", "neutral"})
    EXPECT_FALSE(evaluate(tanh_case(kDyOverwritten, 9, property)).failed()) << property;
  const Verdict v = evaluate(tanh_case(kDyOverwritten, 9, "composition"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  ASSERT_EQ(v.symptoms().size(), 1u) << v.signature();
  EXPECT_EQ(v.symptoms()[0].rfind("dy in a residual differs from the float64 graph", 0), 0u)
      << v.symptoms()[0];
  for (const auto& row : v.tensors)  // a fresh, accumulated dy: nothing else to corrupt
    if (row.check == "used twice") {
      EXPECT_TRUE(row.passed()) << row.tensor;
    }
}

TEST(Composition, TheCorrectToyGivesEveryLeafTheFloat64GraphsGradient) {
  for (uint64_t seed : {1, 2, 3}) {
    const Verdict v = evaluate(tanh_case("toy", 9, "composition", seed));
    EXPECT_EQ(v.status, Verdict::Status::pass) << format_error_table(v);
    ASSERT_FALSE(v.tensors.empty());
    EXPECT_EQ(v.tensors[0].check, "in a residual");
  }
}

// A defect that the case's own cotangents hide from the direct call (zero_first: the first
// rows of dy are zero, the graph's are not) is named as the direct call with random
// cotangents names it, not as a second defect: tiled@clamped's dh0 and dw row leaks, which
// a nightly run kept again as "dh0 used twice [...]" and "dw used twice [...]".
TEST(Composition, AFailureTheCasesCotangentsHideFromTheDirectCallIsNamedAsItsDefect) {
  const Case c = case_from_json(nlohmann::json::parse(R"({
      "kernel": "causal_conv1d", "impl": "tiled@clamped", "property": "composition",
      "D": 32, "W": 4, "activation": "none", "bias": false, "cotangents": "zero_first",
      "distribution": "uniform", "dtype": "float32", "final_state_grad": false,
      "initial_state": true, "layout": "packed", "lengths": [5, 2, 5], "num_cores": 34,
      "seed": 1661638938487597864, "splits": [1, 2, 3]})"), "test");
  const Verdict v = evaluate(c);
  ASSERT_TRUE(v.failed()) << v.signature();
  Case direct = c;
  direct.property = "vs_reference";
  ASSERT_FALSE(evaluate(direct).failed()) << "the direct call with these cotangents now fails";
  const Diagnosis d = diagnose(c, v, {}, /*shrink=*/true, 10);
  std::set<std::string> identities;
  for (const auto& f : d.fresh) identities.insert(f.identity);
  EXPECT_TRUE(identities.count(
      "causal_conv1d/tiled@clamped/dh0 [sequence shorter than W] {2 lengths, initial_state}"))
      << fmt::format("{}", fmt::join(identities, "\n"));
  for (const auto& identity : identities)
    EXPECT_EQ(identity.find("used twice"), std::string::npos) << identity;
}

}  // namespace
}  // namespace kprop

// `composition` (harness/engine/properties/composition.cpp): the implementation inside a residual
// and with its output used twice, beside an op that saved its inputs. Test-only variants of
// scaled_tanh that write over x in their forward or dx over the dy they receive
// (tests/kernels/scaled_tanh_variants/overwrites.cpp), declared, are handed copies by every
// single-call property and pass them; here they corrupt the graph and fail.
#include <gtest/gtest.h>

#include "harness/engine/property.h"
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

}  // namespace
}  // namespace kprop

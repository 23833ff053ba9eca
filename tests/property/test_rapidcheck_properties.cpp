// The same properties driven by RapidCheck itself (rc::check through rapidcheck/gtest.h):
// RapidCheck draws from kprop's generator, shrinks with its own engine and reports the
// minimal case in its usual format. kprop's runner adds signature-keeping shrinking and
// the corpus; this suite keeps kprop honest as a plain RapidCheck user.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "generators/causal_conv1d.h"
#include "harness/property.h"
#include "harness/report.h"

namespace kprop {
namespace {

void holds_for_tiled(const std::string& property, std::vector<DType> dtypes) {
  CaseSpace space;
  space.impl = "tiled";
  space.property = property;
  space.dtypes = std::move(dtypes);
  const Case c = *causal_conv1d_cases(space);
  const Verdict v = evaluate(c);
  RC_TAG(to_string(v.status));
  RC_ASSERT_FALSE(v.failed());
}

RC_GTEST_PROP(RapidCheckTiled, MatchesReferenceWithinDerivedBounds, ()) {
  holds_for_tiled("vs_reference", {DType::float32, DType::bfloat16, DType::float16});
}

RC_GTEST_PROP(RapidCheckTiled, ChunkedEqualsWhole, ()) {
  holds_for_tiled("chunked", {DType::float32, DType::bfloat16});
}

RC_GTEST_PROP(RapidCheckTiled, PackedEqualsSeparate, ()) {
  holds_for_tiled("packed", {DType::float32});
}

RC_GTEST_PROP(RapidCheckTiled, GradientMatchesFiniteDifferences, ()) {
  holds_for_tiled("gradient", {DType::float64});
}

}  // namespace
}  // namespace kprop

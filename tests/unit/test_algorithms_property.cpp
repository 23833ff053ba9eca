// algorithms (harness/engine/properties/algorithms.cpp): an implementation held to the other
// algorithm of its function it declares (Takes::same_function_as), on linear_attn's
// chunked and recurrent emulations.
#include <gtest/gtest.h>

#include "generators/schema.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"

namespace kprop {
namespace {

Case normalized_case(const std::string& impl) {
  const Schema& schema = find_kernel("linear_attn").schema();
  Case c = default_case(schema, Case{});
  c.kernel = "linear_attn";
  c.impl = impl;
  c.property = "algorithms";
  c.set("normalize", true);
  c.set("seq", int64_t{70});  // past fla's chunk of 64 tokens
  fit(schema, c);
  return c;
}

TEST(AlgorithmsProperty, HoldsChunkedToRecurrentAndSeesWhereTheyDisagree) {
  EXPECT_EQ(evaluate(normalized_case("chunked")).status, Verdict::Status::pass);
  // The normaliser's key sum without a gradient (fla #875): dk differs from recurrent's.
  const Verdict planted = evaluate(normalized_case("chunked@normalizer_detached"));
  EXPECT_EQ(planted.status, Verdict::Status::fail);
  EXPECT_NE(planted.signature().find("dk"), std::string::npos) << planted.signature();
}

TEST(AlgorithmsProperty, SkipsAnImplementationThatDeclaresNoOtherAlgorithm) {
  const Verdict v = evaluate(normalized_case("recurrent"));
  EXPECT_EQ(v.status, Verdict::Status::skipped);
  EXPECT_NE(v.message.find("no other algorithm"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace kprop

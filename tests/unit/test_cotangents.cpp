// The upstream gradients a case's calls receive are a choice of the case
// (Case::cotangents, generators/case.h): random values as before, or what real callers make
// and test suites never use. A backward that takes a dy of one value for ones
// (tests/kernels/scaled_tanh_variants/unit_scalar_dy.cpp) is right for random cotangents
// and for ones; only a mean's 1/N finds it, and the shrunk case keeps that choice.
#include <gtest/gtest.h>

#include <map>

#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/model/random_tensor.h"
#include "harness/presentation/report.h"
#include "harness/storage/case_file.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

const char* kUnitScalar = "kprop_variant_unit_scalar_dy::scaled_tanh";

Case with(Case c, Cotangents k) {
  c.cotangents = k;
  return c;
}

TEST(Cotangents, EachChoiceIsDrawnAndRandomMostOften) {
  const Schema& schema = find_kernel("scaled_tanh").schema();
  std::map<Cotangents, int> seen;
  for (int64_t i = 0; i < 1000; ++i) {
    RandomChoices choices(case_seed(3, i));
    CaseSpace space;
    space.impl = "toy";
    space.property = "vs_reference";
    ++seen[draw_case(schema, choices, space).cotangents];
  }
  for (Cotangents k : all_cotangents()) EXPECT_GT(seen[k], 50) << to_string(k);
  EXPECT_GT(seen[Cotangents::random], 500);
}

TEST(Cotangents, EachMakesWhatItSays) {
  const Kernel& kernel = find_kernel("scaled_tanh");
  Case c = tanh_case("toy", 9);
  c.set("rows", int64_t{3});
  auto dy = [&](Cotangents k) {
    const Problem p = kernel.materialize(with(c, k));
    NamedTensors out;
    out.set("y", at::zeros({3, 9}));
    return random_cotangents(kernel, p, out).get("dy");
  };
  EXPECT_TRUE(dy(Cotangents::ones).eq(1).all().item<bool>());
  EXPECT_TRUE(dy(Cotangents::zero_first).eq(0).all().item<bool>());  // its only output
  EXPECT_TRUE(dy(Cotangents::scalar).eq(1.0f / 27).all().item<bool>());
  const at::Tensor rows = dy(Cotangents::per_row);
  EXPECT_TRUE(rows.eq(rows.narrow(1, 0, 1)).all().item<bool>());
  EXPECT_FALSE(rows.eq(rows[0][0]).all().item<bool>());
  // Random is the cotangent every case had before the choice existed: the same stream.
  EXPECT_TRUE(dy(Cotangents::random).equal(random_tensor({3, 9}, Distribution::normal, c.seed, 100, c.dtype)));
}

TEST(Cotangents, ACaseFileSaysTheChoiceOnlyWhenItIsNotRandom) {
  const Case c = tanh_case("toy", 9);
  EXPECT_FALSE(case_to_json(c).contains("cotangents"));  // files from before stay the same
  EXPECT_EQ(case_from_json(case_to_json(c), "test").cotangents, Cotangents::random);
  const Case scalar = with(c, Cotangents::scalar);
  EXPECT_EQ(case_to_json(scalar)["cotangents"], "scalar");
  EXPECT_EQ(case_from_json(case_to_json(scalar), "test"), scalar);
}

TEST(Cotangents, OnlyAScalarOtherThanOneFindsABackwardThatAssumesOne) {
  const Case c = tanh_case(kUnitScalar, 9);
  EXPECT_FALSE(evaluate(with(c, Cotangents::random)).failed());
  EXPECT_FALSE(evaluate(with(c, Cotangents::ones)).failed());
  const Verdict v = evaluate(with(c, Cotangents::scalar));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  EXPECT_EQ(v.symptoms()[0].rfind("dx", 0), 0u) << v.signature();

  SearchOptions o;
  o.kernel = "scaled_tanh";
  o.impl = kUnitScalar;
  o.properties = {"vs_reference"};
  o.cases = 300;
  o.seed = 1;
  const SearchResult r = search(o);
  ASSERT_TRUE(r.failure) << "not found in 300 cases";
  // Shrinking keeps a choice that holds one value other than 1: a mean's, one row's weight
  // once the case has one row, or zero.
  const Cotangents kept = r.failure->minimal().cotangents;
  EXPECT_TRUE(kept == Cotangents::scalar || kept == Cotangents::per_row ||
              kept == Cotangents::zero_first)
      << format_case(r.failure->minimal());
}

}  // namespace
}  // namespace kprop

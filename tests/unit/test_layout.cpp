// `layout` (harness/engine/properties/layout.cpp): the same values in other layouts must give the
// same results. The layouts hold the contiguous tensor's values (harness/model/tensor_layouts.h);
// a backward that reads dy as if it were contiguous
// (tests/kernels/scaled_tanh_variants/assumes_contiguous.cpp) is right on every contiguous
// dy and fails here, naming the gradient, the cotangent and the layout.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "harness/engine/property.h"
#include "harness/engine/repro_material.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/layout_variants.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"
#include "harness/model/tensor_layouts.h"
#include "harness/presentation/report.h"
#include "harness/spec/kernel_spec.h"
#include "tests/scaled_tanh_case.h"

namespace kprop {
namespace {

const char* kContiguousDy = "kprop_variant_contiguous_dy::scaled_tanh";

at::Tensor values(std::vector<int64_t> sizes) {
  return at::arange(c10::multiply_integers(sizes), at::kFloat).view(sizes);
}

TEST(TensorLayouts, EachHoldsTheSameValuesInOtherMemory) {
  const at::Tensor t = values({2, 3, 4});
  const at::Tensor transposed = transposed_storage(t);
  EXPECT_TRUE(transposed.equal(t));
  EXPECT_EQ(transposed.strides().vec(), (std::vector<int64_t>{12, 1, 3}));

  const at::Tensor time_major = stored_in_order(t, {1, 0, 2});
  EXPECT_TRUE(time_major.equal(t));
  EXPECT_EQ(time_major.strides().vec(), (std::vector<int64_t>{4, 8, 1}));

  const at::Tensor slice = inside_larger_buffer(t, -5.0);
  EXPECT_TRUE(slice.equal(t));
  EXPECT_EQ(slice.storage_offset(), 1);
  EXPECT_EQ(slice.strides().vec(), (std::vector<int64_t>{15, 5, 1}));
  // What lies around it is the fill: the element before, and one after each row.
  const at::Tensor buffer = slice.as_strided({slice.storage().nbytes() / 4}, {1}, 0);
  EXPECT_EQ(buffer[0].item<float>(), -5.0f);
  EXPECT_EQ(buffer[5].item<float>(), -5.0f);
  EXPECT_EQ((buffer == -5.0f).sum().item<int64_t>(), 1 + 2 * 3);
}

TEST(TensorLayouts, BroadcastsAreOneValueOrOneSliceWithStrideZero) {
  const at::Tensor t = values({3, 2});
  const at::Tensor scalar = broadcast_first_element(t);
  EXPECT_EQ(scalar.strides().vec(), (std::vector<int64_t>{0, 0}));
  EXPECT_TRUE(scalar.equal(at::zeros({3, 2})));  // t's first element is 0
  const at::Tensor rows = broadcast_first_slice(t);
  EXPECT_EQ(rows.strides().vec(), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(rows.equal(t[0].expand({3, 2})));
}

TEST(TensorLayouts, ACopyKeepsStridesOffsetAndWhatLiesAround) {
  const at::Tensor slice = inside_larger_buffer(values({2, 3}), 7.0);
  const at::Tensor copy = same_layout_on(slice, c10::Device(c10::kCPU));
  EXPECT_NE(copy.data_ptr(), slice.data_ptr());
  EXPECT_TRUE(copy.equal(slice));
  EXPECT_EQ(copy.strides(), slice.strides());
  EXPECT_EQ(copy.storage_offset(), slice.storage_offset());
  EXPECT_EQ(copy.as_strided({1}, {1}, 0).item<float>(), 7.0f);
  const at::Tensor broadcast = broadcast_first_slice(values({3, 2}));
  EXPECT_EQ(same_layout_on(broadcast, c10::Device(c10::kCPU)).strides(), broadcast.strides());
}

TEST(TensorLayouts, WritingIntoABroadcastWritesEachElementItHolds) {
  const at::Tensor broadcast = broadcast_first_slice(values({3, 2}));
  write_into(broadcast, at::full({3, 2}, 4.0f));
  EXPECT_TRUE(broadcast.equal(at::full({3, 2}, 4.0f)));
}

TEST(LayoutVariants, ACotangentAlsoGetsTheBroadcastsAndAKernelItsStorageOrders) {
  auto names = [](const std::vector<LayoutVariant>& v) {
    std::vector<std::string> out;
    for (const auto& l : v) out.push_back(l.name);
    return out;
  };
  const Kernel& tanh = find_kernel("scaled_tanh");
  EXPECT_EQ(names(layout_variants(tanh, "x", values({2, 3}), false)),
            (std::vector<std::string>{"transposed", "offset"}));
  EXPECT_EQ(names(layout_variants(tanh, "dy", values({2, 3}), true)),
            (std::vector<std::string>{"transposed", "offset", "stride-0", "expanded"}));
  EXPECT_EQ(names(layout_variants(tanh, "b", values({3}), false)), (std::vector<std::string>{"offset"}));
  const Kernel& conv = find_kernel("causal_conv1d");
  EXPECT_EQ(names(layout_variants(conv, "dy", values({2, 3, 4}), true)),
            (std::vector<std::string>{"transposed", "offset", "stride-0", "expanded", "time-major"}));
  EXPECT_TRUE(names(layout_variants(conv, "w", values({3, 4}), false)).size() == 2);
}

TEST(Layout, ABackwardThatReadsDyAsContiguousFailsNamingTheCotangentAndTheLayout) {
  const Verdict v = evaluate(tanh_case(kContiguousDy, 9, "layout"));
  ASSERT_TRUE(v.failed()) << format_error_table(v);
  const auto symptoms = v.symptoms();
  for (const std::string expected : {"dx varies with dy transposed", "dx varies with dy offset",
                                     "dx varies with dy stride-0", "dx varies with dy expanded"})
    EXPECT_TRUE(std::any_of(symptoms.begin(), symptoms.end(), [&](const std::string& s) {
      return s.rfind(expected, 0) == 0;
    })) << expected << " not in " << v.signature();
  for (const auto& s : symptoms) EXPECT_EQ(s.find("varies with x"), std::string::npos) << s;
  // Every other property passes it: its dy is always contiguous there.
  for (const std::string property : {"vs_reference", "gradient"})
    EXPECT_FALSE(evaluate(tanh_case(kContiguousDy, 9, property)).failed()) << property;
}

TEST(Layout, TheCorrectToyPassesEveryLayoutAndTheReferenceToo) {
  for (const std::string impl : {"toy", "reference"})
    for (uint64_t seed : {1, 2, 3}) {
      const Verdict v = evaluate(tanh_case(impl, 9, "layout", seed));
      EXPECT_EQ(v.status, Verdict::Status::pass) << impl << ": " << v.message;
    }
}

// toy's db is dy summed over rows by ATen, whose order follows dy's strides: the spec
// declares it (reordered_by_layout), and db is held to its bound; without the declaration
// the same case fails on db alone, its dx, ds and y still bit for bit.
TEST(Layout, ASumDeclaredReorderedIsHeldToItsBoundTheRestBitForBit) {
  Case c = tanh_case("toy", 4, "layout", 1565237249911210449ull);
  c.set("rows", int64_t{5});
  const Property& layout = find_property("layout");
  const Kernel& declared = find_kernel("scaled_tanh");
  const Implementation toy = declared.implementations()[1];
  ASSERT_EQ(toy.name, "toy");
  EXPECT_EQ(layout.check(declared, toy, c).status, Verdict::Status::pass);
  KernelSpec undeclared = declared.declaration();
  undeclared.reordered_by_layout.clear();
  undeclared.implementations.clear();  // its operators are registered already
  undeclared.default_implementation.clear();
  undeclared.known_defects.clear();
  Verdict v = layout.check(*compile_spec(undeclared), toy, c);
  ASSERT_TRUE(v.failed());
  for (const auto& s : v.symptoms()) EXPECT_EQ(s.rfind("db varies with dy ", 0), 0u) << s;
}

// Each layout judged by the bound asks for the bound between two calls on the same problem
// and cotangents: the float64 reference behind it is computed once per set of values (the
// case's cotangents, and each broadcast cotangent's, which holds new values).
TEST(Layout, TheReferenceBehindTheBoundsIsComputedOncePerProblemAndCotangents) {
  Case c = tanh_case("toy", 4, "layout", 1565237249911210449ull);
  c.set("rows", int64_t{5});
  int new_values = 0;
  for (const auto& l : layout_variants(find_kernel("scaled_tanh"), "dy", values({5, 4}), true))
    new_values += !l.keeps_values;
  CallProfile::reset();
  const Verdict v = evaluate(c);
  ASSERT_EQ(v.status, Verdict::Status::pass) << v.message;
  int bounded = 0;
  for (const auto& t : v.tensors) bounded += t.deviation.find("beyond the bound") != std::string::npos;
  EXPECT_GT(bounded, 1 + new_values) << "too few layouts judged by the bound to see reuse";
  EXPECT_EQ(CallProfile::totals().count(CallProfile::Part::reference), 1 + new_values);
}

TEST(Layout, OnlyTheLayoutsAnImplementationTakesAreTried) {
  Takes offset_only;
  offset_only.layouts = {"offset"};
  declare_takes("scaled_tanh", kContiguousDy, offset_only);
  const Verdict v = evaluate(tanh_case(kContiguousDy, 9, "layout"));
  declare_takes("scaled_tanh", kContiguousDy, Takes{});
  ASSERT_TRUE(v.failed());
  for (const auto& s : v.symptoms()) EXPECT_NE(s.find("varies with dy offset"), std::string::npos) << s;
}

TEST(Layout, AReorderingDeclaredIsHeldToTheBoundAndAWrongReadStillFails) {
  Takes reorders;
  reorders.layout_changes_reduction_order = true;
  declare_takes("scaled_tanh", kContiguousDy, reorders);
  declare_takes("scaled_tanh", "toy", reorders);
  const Verdict wrong = evaluate(tanh_case(kContiguousDy, 9, "layout"));
  const Verdict right = evaluate(tanh_case("toy", 9, "layout"));
  declare_takes("scaled_tanh", kContiguousDy, Takes{});
  declare_takes("scaled_tanh", "toy", Takes{});
  ASSERT_TRUE(wrong.failed());
  EXPECT_EQ(wrong.symptoms()[0].rfind("dx varies with dy transposed beyond the bound", 0), 0u)
      << wrong.signature();
  EXPECT_EQ(right.status, Verdict::Status::pass) << right.message;
}

TEST(Layout, AnUnknownLayoutIsAUsageErrorNamingKernelImplementationAndField) {
  Takes t;
  t.layouts = {"time-major"};
  try {
    declare_takes("scaled_tanh", "toy", t);
    FAIL() << "declared";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "kernel scaled_tanh, implementation toy: takes layouts: 'time-major' "
                           "is no layout of scaled_tanh (it has transposed, offset, stride-0, "
                           "expanded)");
  }
  t.layouts = {"time-major"};
  EXPECT_NO_THROW(declare_takes("causal_conv1d", "mine::causal_conv1d", t));
}

// `kprop repro` rebuilds the layout a finding's identity names: the word after the tensor,
// whatever follows it (the bound, a region in brackets, the case's values).
TEST(LayoutNamedBy, TakesTheOneWordAfterTheTensor) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(layout_named_by("dw varies with w transposed {B=1}"), P("w", "transposed"));
  EXPECT_EQ(layout_named_by("dx varies with dy stride-0 beyond the bound {B=1}"), P("dy", "stride-0"));
  EXPECT_EQ(layout_named_by("dh0 varies with dy transposed [sequence shorter than W] {W=4}"),
            P("dy", "transposed"));
  EXPECT_EQ(layout_named_by("db varies with dy offset, dx varies with dy offset"), P("dy", "offset"));
  EXPECT_THROW(layout_named_by("dx differs from the reference"), UsageError);
}

}  // namespace
}  // namespace kprop

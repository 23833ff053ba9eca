// Integer index inputs of a kernel spec (TensorSpec::indices), and the 0-d outputs and
// bounds a loss needs. A probe picks `picks` classes per row, y = x[r, target[r, j]], 0 where
// the target is the special index: each test goes red when its mechanism breaks — the
// indices cast to float on the way to the float64 reference or to bf16, their special
// share lost, a layout or a guard that skips them, a strided index read as contiguous.
#include <gtest/gtest.h>

#include <limits>

#include "core/errors.h"
#include "harness/engine/properties/calls.h"
#include "harness/engine/property.h"
#include "harness/execution/layout_variants.h"
#include "harness/model/tensor_layouts.h"
#include "harness/model/tolerance.h"
#include "harness/presentation/report.h"
#include "harness/spec/kernel_spec.h"

namespace kprop {
namespace {
using T = at::Tensor;
constexpr int64_t kSpecial = -7;

// y[r, j] = x[r, target[r, j]], 0 where target is kSpecial.
T picked(const T& x, const T& target) {
  TORCH_CHECK(target.scalar_type() == at::kLong, "target reached the kernel as ", target.scalar_type());
  const T valid = target.ne(kSpecial);
  const T y = x.gather(1, at::where(valid, target, at::zeros_like(target)));
  return at::where(valid, y, at::zeros_like(y));
}

// Reads target's storage as if it were contiguous (a kernel that ignores its strides).
T picked_ignoring_strides(const T& x, const T& target) {
  const T flat = at::from_blob(target.data_ptr<int64_t>(), target.sizes(), at::kLong).clone();
  return picked(x, flat.clamp(kSpecial, x.size(1) - 1));
}

KernelSpec probe() {
  KernelSpec k("index_probe");
  k.params = {extent("rows", "rows", 64, {"max_rows", 6}).by_default(int64_t{3}),
              extent("V", "classes", 64, {"max_V", 9}).by_default(int64_t{5}),
              extent("picks", "targets per row", 8, {"max_picks", 3}).by_default(int64_t{2}),
              param_spec("special", ParamType::integer, "percent of targets that are special",
                         int64_t{0})
                  .within(0, 100)
                  .drawn(std::vector<IntOption>{IntOption::just(40, 0), IntOption::just(40, 30),
                                                IntOption::just(20, 100)}),
              choice_param("reduction", "none: y per pick; sum: one value", {"none", "sum"}, {50, 50})};
  k.inputs = {{"x", {"rows", "V"}},
              TensorSpec("target", {"rows", "picks"}).indices("V", [](const Case& c) {
                return SpecialIndex{kSpecial, static_cast<int>(c.integer("special"))};
              })};
  k.operator_params = {"reduction"};
  const auto sum = [](const Case& c) { return c.choice("reduction") == "sum"; };
  k.outputs = {TensorSpec("y", {"rows", "picks"}).scalar_when(sum)};
  const auto y_of = [](const OpArgs& a, const T& y) {
    return NamedTensors{{"y", a.text("reduction") == "sum" ? y.sum() : y}};
  };
  k.reference = [y_of](const OpArgs& a) { return y_of(a, picked(a["x"], a["target"])); };
  k.bounds = {{"y", Bound::sum_of([](const Case& c) { return c.integer("rows") * c.integer("picks"); },
                                  [](const Exact& e) {
                                    const T m = picked(e["x"], e["target"]).abs();
                                    return e.c.choice("reduction") == "sum" ? m.sum() : m;
                                  })},
              {"dx", Bound::elementwise(1)}};
  k.reordered_by_layout = {"y"};  // a sum over a gather whose strides follow target's
  k.implementations = {
      {"pick", "gathers in the input's dtype; autograd's backward",
       [y_of](const OpArgs& a) { return y_of(a, picked(a["x"], a["target"])); }},
      {"pick@contiguous", "planted: reads target's storage as contiguous",
       [y_of](const OpArgs& a) { return y_of(a, picked_ignoring_strides(a["x"], a["target"])); }}};
  return k;
}

const bool registered = register_spec(probe());

Case probe_case(int64_t special, DType dtype = DType::float32, std::string impl = "pick") {
  Case c;
  c.kernel = "index_probe";
  c.impl = std::move(impl);
  c.dtype = dtype;
  c.seed = 11;
  c.set("rows", int64_t{40});
  c.set("V", int64_t{9});
  c.set("picks", int64_t{3});
  c.set("special", special);
  c.set("reduction", std::string("none"));
  return c;
}

const Kernel& kernel() { return find_kernel("index_probe"); }

TEST(IndexInputs, AreInt64InRangeWithTheDeclaredShareOfTheSpecialIndex) {
  ASSERT_TRUE(registered);
  for (int64_t percent : {0, 30, 100}) {
    SCOPED_TRACE(percent);
    const T t = kernel().materialize(probe_case(percent)).inputs.get("target");
    ASSERT_EQ(t.scalar_type(), at::kLong);
    EXPECT_EQ(t.sizes(), (std::vector<int64_t>{40, 3}));
    const T special = t.eq(kSpecial);
    const int64_t n = special.sum().item<int64_t>();
    EXPECT_TRUE(t.masked_select(special.logical_not()).ge(0).all().item<bool>());
    EXPECT_TRUE(t.masked_select(special.logical_not()).lt(9).all().item<bool>());
    if (percent == 0) {
      EXPECT_EQ(n, 0);
    }
    if (percent == 100) {
      EXPECT_EQ(n, 120);
    }
    if (percent == 30) {
      EXPECT_GT(n, 20);
      EXPECT_LT(n, 60);
      // Every class turns up: the draw is uniform below V, not a constant.
      for (int64_t v = 0; v < 9; ++v) EXPECT_TRUE(t.eq(v).any().item<bool>()) << v;
    }
  }
}

TEST(IndexInputs, KeepTheirValuesAndDtypeWhateverTheCaseDtype) {
  const T drawn = kernel().materialize(probe_case(30)).inputs.get("target");
  // The same indices in a bf16 case: the share and the classes are no function of the dtype.
  EXPECT_TRUE(kernel().materialize(probe_case(30, DType::bfloat16)).inputs.get("target").equal(drawn));
  for (DType d : {DType::float64, DType::bfloat16, DType::float16}) {
    const T t = Kernel::in_dtype(kernel().materialize(probe_case(30)), d).inputs.get("target");
    ASSERT_EQ(t.scalar_type(), at::kLong) << to_string(d);
    EXPECT_TRUE(t.equal(drawn)) << to_string(d);
  }
  // The shares do not move the other indices: 30% special keeps the rest where 0% had them.
  const T none = kernel().materialize(probe_case(0)).inputs.get("target");
  const T kept = drawn.ne(kSpecial);
  EXPECT_TRUE(drawn.masked_select(kept).equal(none.masked_select(kept)));
}

TEST(IndexInputs, TheReferenceAndTheImplementationGetThemAsInt64) {
  // picked() raises where a target is not int64; evaluate() would report the reference's
  // error as kprop's own, the implementation's as a failure.
  for (DType d : {DType::float32, DType::bfloat16}) {
    Case c = probe_case(30, d);
    const Verdict v = evaluate(c);
    EXPECT_EQ(v.status, Verdict::Status::pass) << format_error_table(v);
  }
}

TEST(IndexInputs, LayoutHandsThemStridedBetweenIndicesNoTensorHas) {
  const T t = kernel().materialize(probe_case(30)).inputs.get("target");
  std::vector<std::string> names;
  for (const auto& l : layout_variants(kernel(), "target", t, false)) {
    names.push_back(l.name);
    const T laid_out = l.make(t);
    EXPECT_TRUE(laid_out.equal(t)) << l.name;
    if (l.name == "offset") {
      const T around = whole_storage(laid_out);
      EXPECT_EQ(around[0].item<int64_t>(), std::numeric_limits<int64_t>::max());
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"transposed", "offset"}));
  // An integer tensor no spec declares as indices keeps its layout (causal_conv1d's
  // cu_seqlens is derived from the case).
  EXPECT_TRUE(layout_variants(kernel(), "x", t, false).empty());
}

TEST(IndexInputs, EveryPropertyPassesAndLayoutFindsAStridedIndexReadAsContiguous) {
  for (const char* property : {"gradient", "vs_reference", "layout", "determinism", "guard", "composition"}) {
    for (const char* reduction : {"none", "sum"}) {
      Case c = probe_case(30, property == std::string("gradient") ? DType::float64 : DType::float32);
      c.property = property;
      c.set("reduction", std::string(reduction));
      const Verdict v = evaluate(c);
      EXPECT_EQ(v.status, Verdict::Status::pass) << property << " " << reduction << "\n"
                                                  << format_error_table(v);
    }
  }
  Case c = probe_case(30, DType::float32, "pick@contiguous");
  c.property = "layout";
  const Verdict v = evaluate(c);
  ASSERT_TRUE(v.failed());
  EXPECT_NE(v.signature().find("target transposed"), std::string::npos) << v.signature();
}

TEST(IndexInputs, ADeclarationOfIndicesIsChecked) {
  auto error = [](KernelSpec k) {
    try {
      compile_spec(std::move(k));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  KernelSpec below = probe();
  below.name = "index_probe_2";
  below.inputs[1].index_draw->below = "nowhere";
  EXPECT_NE(error(below).find("indices below 'nowhere'"), std::string::npos) << error(below);
  KernelSpec differentiable = probe();
  differentiable.name = "index_probe_3";
  differentiable.inputs[1].differentiable = true;
  EXPECT_NE(error(differentiable).find("indices have no gradient"), std::string::npos);
}

TEST(ScalarOutputs, AreZeroDimensionalWhereDeclaredAndTakeAScalarCotangent) {
  Case c = probe_case(30);
  c.set("reduction", std::string("sum"));
  const Problem p = kernel().materialize(c);
  const NamedTensors out = kernel().forward(implementation_namespace("pick"), p);
  ASSERT_EQ(out.get("y").dim(), 0);
  EXPECT_EQ(kernel().region(p, "y", 0), "");
  for (Cotangents k : all_cotangents()) {
    c.cotangents = k;
    const T dy = random_cotangents(kernel(), kernel().materialize(c), out).get("dy");
    EXPECT_EQ(dy.dim(), 0) << to_string(k);
    if (k == Cotangents::scalar) {
      EXPECT_NE(dy.item<double>(), 1.0);
    }
  }
}

TEST(Cotangents, PerRowOfAOneDimensionalLossIsOneValuePerRow) {
  Case c = probe_case(30);
  c.cotangents = Cotangents::per_row;
  NamedTensors out;
  out.set("y", at::zeros({40}));
  const T dy = random_cotangents(kernel(), kernel().materialize(c), out).get("dy");
  EXPECT_FALSE(dy.eq(dy[0]).all().item<bool>()) << "reduction='none' then weighted: a weight per row";
}

TEST(DerivedBounds, ARoundedFactorAddsUOutOfTheValueAndPartialsFollowTheCase) {
  KernelSpec k = probe();
  k.name = "index_probe_bounds";
  const auto without = compile_spec(k);
  k.bounds.at("dx").scaled_after_rounding(1);
  k.bounds.at("y").partials_when([](const Case& c) { return c.choice("reduction") == "sum" ? 2 : 0; });
  const auto with = compile_spec(k);
  Case c = probe_case(0, DType::bfloat16);
  const Problem p = without->materialize(c);
  const NamedTensors cot{{"dy", at::ones({40, 3}, at::kBFloat16)}};
  const NamedTensors ref{{"y", at::full({40, 3}, 2.0, at::kDouble)},
                         {"dx", at::full({40, 9}, -4.0, at::kDouble)}};
  const NamedTensors a = without->error_bounds(p, cot, ref, {0});
  const NamedTensors b = with->error_bounds(p, cot, ref, {0});
  const double u = unit_roundoff(at::kBFloat16);
  EXPECT_NEAR((b.get("dx") - a.get("dx")).max().item<double>(), u * 4.0, 1e-12);
  EXPECT_TRUE(b.get("y").equal(a.get("y")));  // 'none': no partials
  c.set("reduction", std::string("sum"));
  const Problem q = without->materialize(c);
  const NamedTensors sum_ref{{"y", at::full({}, 2.0, at::kDouble)}, {"dx", ref.get("dx")}};
  const T more = with->error_bounds(q, NamedTensors{{"dy", at::ones({}, at::kBFloat16)}}, sum_ref, {0}).get("y");
  const T less = without->error_bounds(q, NamedTensors{{"dy", at::ones({}, at::kBFloat16)}}, sum_ref, {0}).get("y");
  EXPECT_GT(more.item<double>(), less.item<double>());
}

}  // namespace
}  // namespace kprop

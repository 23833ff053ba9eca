// The tolerance report (harness/presentation/tolerance_report.h): the smallest atol per rtol,
// per-case measurement of real implementations, aggregation over a batch, and the
// Markdown and JSON renderings.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "harness/presentation/tolerance_report.h"
#include "kernels/causal_conv1d/schema.h"
#include "kernels/causal_conv1d/shape.h"

namespace kprop {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kRtols{0.0, 1e-3, 1e-2, 1e-1, 1.0};

const TensorTolerance& tensor_of(const CaseTolerance& c, const std::string& name) {
  for (const auto& t : c.tensors)
    if (t.tensor == name) return t;
  throw std::runtime_error("no tensor " + name + " in " + c.label);
}

const TensorSummary& summary_of(const ToleranceReport& r, const std::string& name) {
  for (const auto& s : r.tensors)
    if (s.tensor == name) return s;
  throw std::runtime_error("no tensor " + name + " in the report");
}

// The schema's default case (one sequence of 16, D = 32, W = 4, bias and h0, 48 cores)
// of `impl`.
Case default_conv_case(const std::string& impl = "tiled") {
  Case base;
  base.impl = impl;
  return default_case(causal_conv1d::schema(), base);
}

// `c` with its shape changed by `edit`; the result must be a valid case.
template <typename Edit>
Case reshaped(const Case& c, Edit edit) {
  causal_conv1d::Shape s = causal_conv1d::conv_shape(c);
  edit(s);
  Case out = causal_conv1d::with_shape(c, s);
  EXPECT_TRUE(validate(causal_conv1d::schema(), out).empty())
      << validate(causal_conv1d::schema(), out).front();
  return out;
}

// The historical state of the brief: two one-row sequences, W = 3, h0, one core.
Case clamped_two_short_sequences() {
  Case c = reshaped(default_conv_case("tiled@clamped"), [](causal_conv1d::Shape& s) {
    s.lengths = {1, 1};
    s.W = 3;
    s.has_initial_state = true;
    s.num_cores = 1;
  });
  c.dtype = DType::float32;
  return c;
}

// A hand-made measured tensor, for aggregation tests.
TensorTolerance made(const std::string& name, double max_abs, double max_rel,
                     std::vector<double> atol, double error_over_bound) {
  TensorTolerance t;
  t.tensor = name;
  t.elements = 4;
  t.max_abs = max_abs;
  t.max_rel = max_rel;
  t.atol = std::move(atol);
  t.error_over_bound = error_over_bound;
  t.over_bound = error_over_bound > 1 ? 1 : 0;
  t.index = {0, 1};
  t.region = "head rows";
  return t;
}

CaseTolerance made_case(const std::string& label, DType dtype, std::vector<TensorTolerance> ts) {
  CaseTolerance c;
  c.label = label;
  c.c = default_conv_case();
  c.c.dtype = dtype;
  c.tensors = std::move(ts);
  return c;
}

TEST(ToleranceReportTest, SmallestAtolOfHandMadeTensors) {
  const auto actual = at::tensor({1.0, 2.5, -3.0, 0.0});
  const auto expected = at::tensor({1.0, 2.0, -2.0, 0.5});
  // Differences 0, 0.5, 1, 0.5 against |expected| 1, 2, 2, 0.5 (all exact in binary).
  EXPECT_EQ(smallest_atol(actual, expected, 0.0), 1.0);
  EXPECT_EQ(smallest_atol(actual, expected, 0.25), 0.5);  // 1 - 0.25 * 2
  EXPECT_EQ(smallest_atol(actual, expected, 0.5), 0.25);  // 0.5 - 0.5 * 0.5
  EXPECT_EQ(smallest_atol(actual, expected, 1.0), 0.0);   // rtol alone covers all
  EXPECT_EQ(smallest_atol(actual, expected, 4.0), 0.0);   // never negative
  // It is the atol allclose needs: it passes, and a smaller one fails (by more than the
  // rounding of allclose's own atol + rtol * |expected|).
  for (double rtol : {0.0, 0.25, 0.5}) {
    const double atol = smallest_atol(actual, expected, rtol);
    EXPECT_TRUE(at::allclose(actual, expected, rtol, atol)) << rtol;
    EXPECT_FALSE(at::allclose(actual, expected, rtol, atol - 1e-9)) << rtol;
  }
}

TEST(ToleranceReportTest, SmallestAtolFollowsCompareConventions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // NaN against NaN and inf against the same inf are equal; any other non-finite
  // difference needs an infinite atol; a missing or misshapen tensor too.
  EXPECT_EQ(smallest_atol(at::tensor({nan, kInf, 1.0}), at::tensor({nan, kInf, 1.0}), 0.1), 0.0);
  EXPECT_EQ(smallest_atol(at::tensor({nan, 1.0}), at::tensor({1.0, 1.0}), 0.1), kInf);
  EXPECT_EQ(smallest_atol(at::tensor({1.0}), at::tensor({kInf}), 0.1), kInf);
  EXPECT_EQ(smallest_atol(at::Tensor(), at::tensor({1.0}), 0.0), kInf);
  EXPECT_EQ(smallest_atol(at::tensor({1.0, 2.0}), at::tensor({1.0}), 0.0), kInf);
  // Low-precision actuals are compared in float64.
  EXPECT_EQ(smallest_atol(at::tensor({1.0}).to(at::kBFloat16), at::tensor({1.25}), 0.0), 0.25);
}

TEST(ToleranceReportTest, TiledFloat32IsWithinBoundsAndAtolFallsWithRtol) {
  CaseSpace space;
  space.impl = "tiled";
  space.dtypes = {DType::float32};
  const auto reports = tolerance_reports(draw_cases("causal_conv1d", space, 30, 7), kRtols);
  ASSERT_EQ(reports.size(), 1u);
  const ToleranceReport& r = reports[0];
  EXPECT_EQ(r.impl, "tiled");
  EXPECT_EQ(r.dtype, DType::float32);
  EXPECT_EQ(r.cases.size(), 30u);
  EXPECT_TRUE(r.within_bounds());
  EXPECT_TRUE(within_bounds(reports));
  int64_t measured_tensors = 0;
  for (const auto& c : r.cases) {
    if (c.rejected) continue;
    for (const auto& t : c.tensors) {
      ++measured_tensors;
      EXPECT_LE(t.error_over_bound, 1.0) << c.label << " " << t.tensor;
      ASSERT_EQ(t.atol.size(), kRtols.size());
      EXPECT_EQ(t.atol[0], t.max_abs) << "at rtol 0 the atol is the largest difference";
      for (size_t i = 0; i < t.atol.size(); ++i) {
        EXPECT_GE(t.atol[i], 0.0) << c.label << " " << t.tensor;
        if (i > 0) {
          EXPECT_LE(t.atol[i], t.atol[i - 1]) << c.label << " " << t.tensor;
        }
      }
    }
  }
  EXPECT_GT(measured_tensors, 100);
  for (const auto& s : r.tensors) {
    EXPECT_EQ(s.cases_over_bound, 0) << s.tensor;
    for (size_t i = 1; i < s.atol.size(); ++i) EXPECT_LE(s.atol[i], s.atol[i - 1]) << s.tensor;
  }
}

TEST(ToleranceReportTest, ClampedStateNeedsLargeAtolOnDwAndSaysItIsABug) {
  const Case c = clamped_two_short_sequences();
  const CaseTolerance clamped = measure_tolerance(c, kRtols, "clamped");
  ASSERT_FALSE(clamped.rejected) << clamped.rejection;
  EXPECT_FALSE(clamped.within_bounds());
  const TensorTolerance& dw = tensor_of(clamped, "dw");
  EXPECT_GT(dw.error_over_bound, 1e4);
  EXPECT_GT(dw.over_bound, 0);
  EXPECT_GT(dw.atol[0], 0.1) << "an error of the data's own size, not rounding";
  EXPECT_EQ(dw.region, "taps that read h0");
  ASSERT_EQ(dw.index.size(), 2u);

  // The correct tiling of the same case: tiny atol, within bounds.
  Case fixed_case = c;
  fixed_case.impl = "tiled";
  const CaseTolerance tiled = measure_tolerance(fixed_case, kRtols, "tiled");
  EXPECT_TRUE(tiled.within_bounds());
  EXPECT_LT(tensor_of(tiled, "dw").atol[0], 1e-5);
  EXPECT_GT(dw.atol[0], 1e4 * tensor_of(tiled, "dw").atol[0]);
}

TEST(ToleranceReportTest, Bfloat16NeedsALargerAtolThanFloat32) {
  Case c = default_conv_case();  // one sequence of 16, D = 32, W = 4, bias and h0
  c.dtype = DType::float32;
  const CaseTolerance f32 = measure_tolerance(c, kRtols);
  c.dtype = DType::bfloat16;
  const CaseTolerance bf16 = measure_tolerance(c, kRtols);
  EXPECT_TRUE(f32.within_bounds());
  EXPECT_TRUE(bf16.within_bounds());
  for (const char* name : {"y", "dx", "dw", "db", "dh0"}) {
    const auto& a = tensor_of(f32, name);
    const auto& b = tensor_of(bf16, name);
    EXPECT_GT(b.atol[0], 100 * a.atol[0]) << name;
    EXPECT_GT(b.max_abs, a.max_abs) << name;
  }
  // The final state is a copy of inputs: exact in every dtype.
  EXPECT_EQ(tensor_of(bf16, "ht").max_abs, 0.0);
  EXPECT_EQ(tensor_of(bf16, "ht").atol[0], 0.0);
}

TEST(ToleranceReportTest, RefusedCasesAreRejectedAndListed) {
  const Case c = reshaped(clamped_two_short_sequences(), [](causal_conv1d::Shape& s) {
    s.lengths = {12};
    s.W = 12;  // the clamped state refuses W > 8
  });
  const CaseTolerance refused = measure_tolerance(c, kRtols, "wide");
  ASSERT_TRUE(refused.rejected);
  EXPECT_NE(refused.rejection.find("W > 8"), std::string::npos) << refused.rejection;
  EXPECT_TRUE(refused.tensors.empty());

  const auto reports = tolerance_reports(
      std::vector<CaseTolerance>{refused,
                                 measure_tolerance(clamped_two_short_sequences(), kRtols, "short")},
      kRtols);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].rejected(), 1);
  EXPECT_EQ(summary_of(reports[0], "dw").cases, 1);
  const std::string md = tolerance_markdown(reports);
  EXPECT_NE(md.find("Rejected by the implementation"), std::string::npos) << md;
  EXPECT_NE(md.find("1 case (wide)"), std::string::npos) << md;
  const auto j = tolerance_json(reports);
  ASSERT_EQ(j["reports"][0]["rejected"].size(), 1u);
  EXPECT_EQ(j["reports"][0]["rejected"][0]["case"], "wide");
}

TEST(ToleranceReportTest, BatchAggregatesTheMaxOverCases) {
  const std::vector<double> rtols{0.0, 0.5};
  // Each maximum comes from a different case; db and dh0 appear only in later cases.
  const auto a =
      made_case("a", DType::float32,
                {made("y", 1.0, 0.5, {1.0, 0.25}, 0.5), made("dx", 0.5, 4.0, {0.5, 0.5}, 0.25),
                 made("dw", 0.1, 0.1, {0.1, 0.0}, 0.125)});
  const auto b =
      made_case("b", DType::float32,
                {made("y", 2.0, 0.25, {2.0, 0.0}, 3.0), made("dx", 0.25, 1.0, {0.25, 0.125}, 0.75),
                 made("dw", 0.2, 0.1, {0.2, 0.1}, 2.0), made("dh0", 0.0, 0.0, {0.0, 0.0}, 0.0)});
  const auto c = made_case(
      "c", DType::float32,
      {made("y", 0.5, 0.75, {0.5, 0.5}, 1.0), made("dx", 0.5, 0.5, {0.5, 0.25}, 0.5),
       made("dw", 0.3, 0.2, {0.3, 0.05}, 1.5), made("db", 0.0625, 0.0, {0.0625, 0.0}, 0.0625),
       made("dh0", 1.0, 1.0, {1.0, 1.0}, 0.5)});
  const auto other_dtype = made_case("d", DType::bfloat16, {made("y", 9.0, 9.0, {9.0, 9.0}, 9.0)});
  CaseTolerance refused = made_case("e", DType::float32, {});
  refused.rejected = true;
  refused.rejection = "no";

  const auto reports = tolerance_reports({a, b, refused, c, other_dtype}, rtols);
  ASSERT_EQ(reports.size(), 2u);  // float32 and bfloat16, in DType order
  const ToleranceReport& r = reports[0];
  EXPECT_EQ(r.dtype, DType::float32);
  EXPECT_EQ(reports[1].dtype, DType::bfloat16);
  EXPECT_EQ(r.cases.size(), 4u);
  EXPECT_EQ(r.rejected(), 1);
  EXPECT_FALSE(r.within_bounds());
  EXPECT_FALSE(within_bounds(reports));

  std::vector<std::string> order;
  for (const auto& s : r.tensors) order.push_back(s.tensor);
  EXPECT_EQ(order, (std::vector<std::string>{"y", "dx", "dw", "db", "dh0"}));

  const auto& y = summary_of(r, "y");
  EXPECT_EQ(y.cases, 3);
  EXPECT_EQ(y.cases_over_bound, 1);  // 1.0 is within
  EXPECT_EQ(y.max_abs, 2.0);
  EXPECT_EQ(y.max_rel, 0.75);
  EXPECT_EQ(y.atol, (std::vector<double>{2.0, 0.5}));
  EXPECT_EQ(y.error_over_bound, 3.0);
  EXPECT_EQ(y.worst_case, "b");
  EXPECT_EQ(y.worst_index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(y.worst_region, "head rows");

  const auto& dx = summary_of(r, "dx");
  EXPECT_EQ(dx.max_rel, 4.0);
  EXPECT_EQ(dx.atol, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(dx.worst_case, "b");
  EXPECT_EQ(dx.cases_over_bound, 0);

  const auto& dw = summary_of(r, "dw");
  EXPECT_EQ(dw.cases_over_bound, 2);
  EXPECT_EQ(dw.error_over_bound, 2.0);
  EXPECT_EQ(dw.worst_case, "b");
  EXPECT_EQ(dw.atol, (std::vector<double>{0.3, 0.1}));

  EXPECT_EQ(summary_of(r, "db").cases, 1);
  EXPECT_EQ(summary_of(r, "db").worst_case, "c");
  EXPECT_EQ(summary_of(r, "dh0").cases, 2);
  EXPECT_EQ(summary_of(r, "dh0").worst_case, "c");
  EXPECT_EQ(summary_of(reports[1], "y").max_abs, 9.0);
}

TEST(ToleranceReportTest, RealBatchSummaryIsTheMaxOfItsCases) {
  CaseSpace space;
  space.impl = "tiled";
  space.dtypes = {DType::bfloat16, DType::float32};
  const auto reports = tolerance_reports(draw_cases("causal_conv1d", space, 24, 3), kRtols);
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& r : reports) {
    for (const auto& s : r.tensors) {
      double max_abs = 0, max_eob = 0;
      std::vector<double> atol(kRtols.size(), 0.0);
      int64_t cases = 0;
      for (const auto& c : r.cases)
        for (const auto& t : c.tensors)
          if (t.tensor == s.tensor) {
            ++cases;
            max_abs = std::max(max_abs, t.max_abs);
            max_eob = std::max(max_eob, t.error_over_bound);
            for (size_t i = 0; i < atol.size(); ++i) atol[i] = std::max(atol[i], t.atol[i]);
            EXPECT_EQ(c.c.dtype, r.dtype);
          }
      EXPECT_EQ(s.cases, cases) << s.tensor;
      EXPECT_EQ(s.max_abs, max_abs) << s.tensor;
      EXPECT_EQ(s.error_over_bound, max_eob) << s.tensor;
      EXPECT_EQ(s.atol, atol) << s.tensor;
      bool found = false;
      for (const auto& c : r.cases)
        if (c.label == s.worst_case)
          found = tensor_of(c, s.tensor).error_over_bound == s.error_over_bound;
      EXPECT_TRUE(found) << s.tensor << ": the worst case attains the max";
    }
  }
}

TEST(ToleranceReportTest, JsonRoundTripsTheNumbers) {
  const auto failing = measure_tolerance(clamped_two_short_sequences(), kRtols, "clamped");
  Case c = clamped_two_short_sequences();
  c.impl = "tiled";
  const auto reports = tolerance_reports(
      std::vector<CaseTolerance>{failing, measure_tolerance(c, kRtols, "tiled")}, kRtols);
  ASSERT_EQ(reports.size(), 2u);  // two implementations

  const auto j = nlohmann::json::parse(tolerance_json(reports).dump(2));
  EXPECT_EQ(j["report"], "tolerance");
  EXPECT_FALSE(j["within_bounds"].get<bool>());
  ASSERT_EQ(j["reports"].size(), reports.size());
  for (size_t k = 0; k < reports.size(); ++k) {
    const ToleranceReport& r = reports[k];
    const auto& jr = j["reports"][k];
    EXPECT_EQ(jr["impl"], r.impl);
    EXPECT_EQ(jr["dtype"], "float32");
    EXPECT_EQ(jr["within_bounds"].get<bool>(), r.within_bounds());
    EXPECT_EQ(jr["rtols"].get<std::vector<double>>(), kRtols);
    ASSERT_EQ(jr["tensors"].size(), r.tensors.size());
    for (size_t i = 0; i < r.tensors.size(); ++i) {
      const TensorSummary& s = r.tensors[i];
      const auto& js = jr["tensors"][i];
      EXPECT_EQ(js["tensor"], s.tensor);
      EXPECT_EQ(js["cases"].get<int64_t>(), s.cases);
      EXPECT_EQ(js["cases_over_bound"].get<int64_t>(), s.cases_over_bound);
      EXPECT_EQ(js["max_abs"].get<double>(), s.max_abs) << s.tensor;
      EXPECT_EQ(js["max_rel"].get<double>(), s.max_rel) << s.tensor;
      EXPECT_EQ(js["max_error_over_bound"].get<double>(), s.error_over_bound) << s.tensor;
      ASSERT_EQ(js["atol"].size(), kRtols.size());
      for (size_t q = 0; q < kRtols.size(); ++q) {
        EXPECT_EQ(js["atol"][q]["rtol"].get<double>(), kRtols[q]);
        EXPECT_EQ(js["atol"][q]["atol"].get<double>(), s.atol[q]) << s.tensor;
      }
      EXPECT_EQ(js["worst"]["case"], s.worst_case);
      EXPECT_EQ(js["worst"]["index"].get<std::vector<int64_t>>(), s.worst_index);
      EXPECT_EQ(js["worst"]["region"], s.worst_region);
    }
    const auto& jc = jr["per_case"][0]["tensors"];
    const auto& measured = r.cases[0].tensors;
    ASSERT_EQ(jc.size(), measured.size());
    for (size_t i = 0; i < measured.size(); ++i) {
      EXPECT_EQ(jc[i]["error_over_bound"].get<double>(), measured[i].error_over_bound);
      EXPECT_EQ(jc[i]["actual"].get<double>(), measured[i].actual);
      EXPECT_EQ(jc[i]["expected"].get<double>(), measured[i].expected);
      EXPECT_EQ(jc[i]["over_bound"].get<int64_t>(), measured[i].over_bound);
    }
  }
  // Non-finite numbers are not JSON: they are written as strings.
  const auto odd = tolerance_reports(std::vector<CaseTolerance>{made_case(
                                         "x", DType::float32, {made("y", kInf, 0, {kInf}, kInf)})},
                                     {0.0});
  const auto jo = tolerance_json(odd);
  EXPECT_EQ(jo["reports"][0]["tensors"][0]["max_abs"], "inf");
  EXPECT_EQ(jo["reports"][0]["tensors"][0]["atol"][0]["atol"], "inf");
}

TEST(ToleranceReportTest, MarkdownHasATablePerReportAndAReadingGuide) {
  const auto reports = tolerance_reports(std::vector<CaseTolerance>{measure_tolerance(
                                             clamped_two_short_sequences(), kRtols, "clamped")},
                                         {0.0, 1e-2, 1e-1});
  const std::string md = tolerance_markdown(reports);
  EXPECT_NE(md.find("## Tolerance of causal_conv1d / tiled@clamped in float32"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| tensor | max abs | max rel | atol@rtol=0 | atol@rtol=1e-2 | "
                    "atol@rtol=1e-1 | max err/bound | worst case/where |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| dw |"), std::string::npos) << md;
  EXPECT_NE(md.find("clamped: dw["), std::string::npos) << md;
  EXPECT_NE(md.find("taps that read h0"), std::string::npos) << md;
  EXPECT_NE(md.find("err/bound <= 1: within the rounding error the computation allows"),
            std::string::npos);
  EXPECT_NE(md.find("> 1: a bug or an under-derived bound"), std::string::npos);
  // The worst case is listed with its summary (generators/schema.h), every parameter.
  EXPECT_NE(md.find("- clamped: `causal_conv1d W=3 layout=packed lengths=1,1 splits= "
                    "initial_state=true D=32 num_cores=1 activation=none bias=true "
                    "final_state_grad=false float32 seed=0 normal`\n"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace kprop

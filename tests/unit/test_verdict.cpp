// Verdicts (harness/model/verdict.h): the per-tensor comparison, the conclusion drawn from it,
// and the signature that deduplicates failures.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <vector>

#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/model/verdict.h"
#include "harness/presentation/report.h"
#include "kernels/causal_conv1d/schema.h"
#include "kernels/causal_conv1d/shape.h"

namespace kprop {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

// The schema's default case: packed, one sequence of 16 rows, D = 32, W = 4, bias and h0.
Case default_conv_case() {
  Case base;
  base.impl = "tiled";
  return default_case(causal_conv1d::schema(), base);
}

class VerdictTest : public ::testing::Test {
 protected:
  // The default case: packed, one sequence of 16 rows, D = 32, W = 4.
  VerdictTest() : kernel_(find_kernel("causal_conv1d")), problem_(kernel_.materialize(default_conv_case())) {}

  // A float64 tensor of x's shape [1, 16, 32], deterministic.
  at::Tensor y_like(uint64_t seed = 1) const {
    return at::randn({1, 16, 32}, at::detail::createCPUGenerator(seed), at::kDouble);
  }
  std::vector<TensorError> compare1(const std::string& name, const at::Tensor& actual,
                                    const at::Tensor& expected, const at::Tensor& bound,
                                    const std::string& check = "") const {
    NamedTensors a, e, b;
    a.set(name, actual);
    e.set(name, expected);
    b.set(name, bound);
    return compare(kernel_, problem_, a, e, b, check);
  }

  const Kernel& kernel_;
  Problem problem_;
};

TEST_F(VerdictTest, ProblemOfDefaultCase) {
  ASSERT_EQ(problem_.inputs.get("x").sizes(), at::IntArrayRef({1, 16, 32}));
  ASSERT_EQ(causal_conv1d::conv_shape(problem_.c).W, 4);
}

TEST_F(VerdictTest, EqualTensorPasses) {
  const auto e = y_like();
  const auto rows = compare1("y", e.clone(), e, at::full_like(e, 1e-6), "chunked");
  ASSERT_EQ(rows.size(), 1u);
  const TensorError& r = rows[0];
  EXPECT_EQ(r.tensor, "y");
  EXPECT_EQ(r.check, "chunked");
  EXPECT_EQ(r.label(), "y (chunked)");
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.elements, 16 * 32);
  EXPECT_EQ(r.max_abs, 0.0);
  EXPECT_EQ(r.max_rel, 0.0);
  EXPECT_EQ(r.error_over_bound, 0.0);
  EXPECT_EQ(r.region, "");
}

TEST_F(VerdictTest, DifferencesWithinTheBoundPass) {
  const auto e = y_like();
  auto a = e.clone();
  a[0][3][4] += 0.9e-3;
  const auto rows = compare1("y", a, e, at::full_like(e, 1e-3));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].passed());
  EXPECT_NEAR(rows[0].max_abs, 0.9e-3, 1e-12);
  EXPECT_NEAR(rows[0].error_over_bound, 0.9, 1e-9);
  EXPECT_EQ(rows[0].label(), "y");
}

TEST_F(VerdictTest, DifferencesOverTheBoundAreCountedAndLocated) {
  auto e = y_like();
  e[0][14][3] = 2.0;
  e[0][5][7] = 0.25;
  e[0][1][0] = 4.0;
  auto a = e.clone();
  a[0][14][3] += 1.0;   // error/bound 1000, relative 0.5: the worst element
  a[0][5][7] += 0.5;    // error/bound 500, relative 2: the largest relative error
  a[0][1][0] += 5e-4;   // within its bound
  const auto rows = compare1("y", a, e, at::full_like(e, 1e-3));
  ASSERT_EQ(rows.size(), 1u);
  const TensorError& r = rows[0];
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.elements, 512);
  EXPECT_EQ(r.index, (std::vector<int64_t>{0, 14, 3}));
  EXPECT_DOUBLE_EQ(r.actual, 3.0);
  EXPECT_DOUBLE_EQ(r.expected, 2.0);
  EXPECT_DOUBLE_EQ(r.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(r.max_rel, 2.0);
  EXPECT_NEAR(r.error_over_bound, 1000.0, 1e-9);
  // Row 14 of a 16-row sequence with W = 4 is among the last W rows.
  EXPECT_EQ(r.region, "tail rows");
}

TEST_F(VerdictTest, WorstElementIsLargestErrorOverBoundNotLargestError) {
  const auto e = y_like();
  auto bound = at::full_like(e, 1e-3);
  bound[0][4][4] = 10.0;  // a loose bound where the absolute error is largest
  auto a = e.clone();
  a[0][4][4] += 5.0;      // error/bound 0.5: within its bound
  a[0][13][2] += 0.01;    // error/bound 10: the worst
  a[0][6][1] += 0.002;    // error/bound 2
  const auto rows = compare1("y", a, e, bound);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].mismatches, 2);
  EXPECT_EQ(rows[0].index, (std::vector<int64_t>{0, 13, 2}));
  EXPECT_NEAR(rows[0].error_over_bound, 10.0, 1e-6);
  EXPECT_NEAR(rows[0].max_abs, 5.0, 1e-12);
  EXPECT_EQ(rows[0].region, "tail rows");
}

TEST_F(VerdictTest, RegionOfTheWorstElement) {
  const auto e = y_like();
  struct Row {
    int64_t t;
    const char* region;
  };
  for (const Row& row : {Row{0, "head rows"}, Row{2, "head rows"}, Row{3, "body rows"},
                         Row{11, "body rows"}, Row{12, "tail rows"}, Row{15, "tail rows"}}) {
    auto a = e.clone();
    a[0][row.t][9] += 1.0;
    const auto r = compare1("dx", a, e, at::full_like(e, 1e-3));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].index, (std::vector<int64_t>{0, row.t, 9}));
    EXPECT_EQ(r[0].region, row.region) << "row " << row.t;
  }
  // dw [D, W]: the last tap never reads h0.
  const auto w = at::randn({32, 4}, at::kDouble);
  auto aw = w.clone();
  aw[5][3] += 1;
  EXPECT_EQ(compare1("dw", aw, w, at::full_like(w, 1e-3))[0].region, "last tap");
  aw = w.clone();
  aw[5][1] += 1;
  EXPECT_EQ(compare1("dw", aw, w, at::full_like(w, 1e-3))[0].region, "taps that read h0");
}

TEST_F(VerdictTest, RegionOfShortSequenceInDh0) {
  causal_conv1d::Shape shape = causal_conv1d::conv_shape(default_conv_case());
  shape.lengths = {2, 16};
  const Case c = causal_conv1d::with_shape(default_conv_case(), shape);
  ASSERT_TRUE(validate(causal_conv1d::schema(), c).empty());
  const Problem p = kernel_.materialize(c);
  const auto e = at::randn({2, 32, 4}, at::kDouble);
  for (int64_t n : {0, 1}) {
    auto a = e.clone();
    a[n][7][2] += 1;
    NamedTensors actual, expected, bounds;
    actual.set("dh0", a);
    expected.set("dh0", e);
    bounds.set("dh0", at::full_like(e, 1e-3));
    const auto rows = compare(kernel_, p, actual, expected, bounds);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].index, (std::vector<int64_t>{n, 7, 2}));
    EXPECT_EQ(rows[0].region, n == 0 ? "sequence shorter than W" : "") << n;
  }
}

TEST_F(VerdictTest, NanInActualFails) {
  const auto e = y_like();
  auto a = e.clone();
  a[0][2][3] = std::nan("");
  const auto rows = compare1("y", a, e, at::full_like(e, 1.0));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].passed());
  EXPECT_EQ(rows[0].mismatches, 1);
  EXPECT_EQ(rows[0].index, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(rows[0].max_abs, kInf);
  EXPECT_EQ(rows[0].error_over_bound, kInf);
  EXPECT_EQ(rows[0].region, "head rows");
  // Infinity where a finite value is expected fails too.
  a = e.clone();
  a[0][9][1] = kInf;
  EXPECT_EQ(compare1("y", a, e, at::full_like(e, 1.0))[0].mismatches, 1);
  // NaN where NaN is expected is agreement.
  auto en = e.clone();
  en[0][2][3] = std::nan("");
  auto an = en.clone();
  EXPECT_TRUE(compare1("y", an, en, at::full_like(e, 1.0))[0].passed());
}

TEST_F(VerdictTest, ZeroOrMissingBoundDemandsExactEquality) {
  const auto e = y_like();
  EXPECT_TRUE(compare1("y", e.clone(), e, at::Tensor())[0].passed());
  EXPECT_TRUE(compare1("y", e.clone(), e, at::zeros_like(e))[0].passed());
  auto a = e.clone();
  a[0][8][8] = std::nextafter(a[0][8][8].item<double>(), kInf);
  const auto r = compare1("y", a, e, at::Tensor());
  EXPECT_EQ(r[0].mismatches, 1);
  EXPECT_EQ(r[0].error_over_bound, kInf);
  EXPECT_EQ(r[0].index, (std::vector<int64_t>{0, 8, 8}));
}

TEST_F(VerdictTest, MissingActualTensorFails) {
  const auto e = y_like();
  NamedTensors actual, expected, bounds;
  actual.set("y", e.clone());
  expected.set("y", e);
  expected.set("dx", e);
  expected.set("db", at::Tensor());  // undefined expected: not compared
  bounds.set("y", at::full_like(e, 1e-6));
  bounds.set("dx", at::full_like(e, 1e-6));
  const auto rows = compare(kernel_, problem_, actual, expected, bounds, "gradient");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tensor, "y");
  EXPECT_TRUE(rows[0].passed());
  EXPECT_EQ(rows[1].tensor, "dx");
  EXPECT_FALSE(rows[1].passed());
  EXPECT_EQ(rows[1].mismatches, rows[1].elements);
  EXPECT_EQ(rows[1].elements, 512);
  EXPECT_EQ(rows[1].region, "missing");
  EXPECT_EQ(rows[1].max_abs, kInf);
  EXPECT_EQ(rows[1].check, "gradient");
  // An explicitly undefined actual is missing too.
  actual.set("dx", at::Tensor());
  EXPECT_EQ(compare(kernel_, problem_, actual, expected, bounds)[1].region, "missing");
}

TEST_F(VerdictTest, ShapeMismatchFails) {
  const auto e = y_like();
  const auto a = e.narrow(1, 0, 15).clone();
  const auto rows = compare1("y", a, e, at::full_like(e, 1.0));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].passed());
  EXPECT_EQ(rows[0].mismatches, 512);
  EXPECT_EQ(rows[0].region, "shape differs");
  // Same number of elements, other shape: still a mismatch.
  EXPECT_EQ(compare1("y", e.reshape({16, 32}), e, at::full_like(e, 1.0))[0].region,
            "shape differs");
}

TEST_F(VerdictTest, LowPrecisionActualIsWidened) {
  const auto e = y_like().to(at::kBFloat16).to(at::kDouble);
  const auto rows = compare1("y", e.to(at::kBFloat16), e, at::Tensor());
  EXPECT_TRUE(rows[0].passed());
}

// ---- conclude ----------------------------------------------------------------------

TensorError row(const std::string& tensor, int64_t mismatches, const std::string& check = "",
                const std::string& region = "") {
  TensorError t;
  t.tensor = tensor;
  t.check = check;
  t.region = region;
  t.mismatches = mismatches;
  t.elements = 10;
  return t;
}

MemoryFinding finding(MemoryFinding::Kind kind, const std::string& tensor,
                      const std::string& site) {
  return MemoryFinding{kind, tensor, site, 17, 64, 1};
}

TEST_F(VerdictTest, ConcludePass) {
  Verdict v;
  v.status = Verdict::Status::fail;  // recomputed from the tensors
  v.tensors = {row("y", 0), row("dx", 0, "chunked")};
  conclude(v);
  EXPECT_EQ(v.status, Verdict::Status::pass);
  EXPECT_FALSE(v.failed());
  EXPECT_EQ(v.message, "");
}

TEST_F(VerdictTest, ConcludeFailNamesTheFailingTensors) {
  Verdict v;
  v.tensors = {row("y", 0), row("dw", 3, "chunked"), row("dh0", 1)};
  v.memory = {finding(MemoryFinding::Kind::write_conflict, "dh0", "dh0 slot store")};
  conclude(v);
  EXPECT_EQ(v.status, Verdict::Status::fail);
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(v.message, "dw (chunked), dh0 out of bounds");
}

TEST_F(VerdictTest, ConcludeFailOnMemoryFindingAlone) {
  Verdict v;
  v.tensors = {row("y", 0)};
  const auto f = finding(MemoryFinding::Kind::out_of_bounds_load, "dy", "dh0 row load");
  v.memory = {f};
  conclude(v);
  EXPECT_EQ(v.status, Verdict::Status::fail);
  EXPECT_EQ(v.message, "memory checker: " + describe(f));
  EXPECT_NE(v.message.find("out-of-bounds load of dy"), std::string::npos) << v.message;
}

TEST_F(VerdictTest, ConcludeKeepsRejectedAndSkipped) {
  for (auto status : {Verdict::Status::rejected, Verdict::Status::skipped}) {
    Verdict v;
    v.status = status;
    v.message = "D must be divisible by BD";
    v.tensors = {row("dw", 2)};
    v.memory = {finding(MemoryFinding::Kind::write_conflict, "dh0", "s")};
    conclude(v);
    EXPECT_EQ(v.status, status);
    EXPECT_FALSE(v.failed());
    EXPECT_EQ(v.message, "D must be divisible by BD");
  }
}

TEST_F(VerdictTest, StatusNames) {
  EXPECT_EQ(to_string(Verdict::Status::pass), "pass");
  EXPECT_EQ(to_string(Verdict::Status::fail), "fail");
  EXPECT_EQ(to_string(Verdict::Status::rejected), "rejected");
  EXPECT_EQ(to_string(Verdict::Status::skipped), "skipped");
}

// ---- signature ---------------------------------------------------------------------

Verdict named(const std::string& impl, const std::string& property) {
  Verdict v;
  v.kernel = "causal_conv1d";
  v.impl = impl;
  v.property = property;
  return v;
}

// Memory findings enter the signature by kind only (verdict.h): which tensor an
// unmasked load reads is a detail that shrinking may change.
TEST_F(VerdictTest, SignatureListsFailingTensorsRegionsAndMemoryKinds) {
  Verdict v = named("tiled@clamped", "packed");
  v.tensors = {row("dx", 0, "", "head rows"), row("dw", 4, "", "taps that read h0"),
               row("dh0", 2)};
  v.memory = {finding(MemoryFinding::Kind::write_conflict, "dh0", "dh0 slot store"),
              finding(MemoryFinding::Kind::write_conflict, "dh0", "other store")};
  conclude(v);
  EXPECT_EQ(v.signature(),
            "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0; write conflict");
}

TEST_F(VerdictTest, SignatureNamesEachTensorOnceWithTheFirstLocatedRegion) {
  Verdict v = named("tiled@original", "gradient");
  v.tensors = {row("dh0", 1, "directional"), row("dw", 1, "directional", "last tap"),
               row("dh0", 1, "full Jacobian", "sequence shorter than W"),
               row("dw", 1, "full Jacobian", "taps that read h0")};
  v.memory = {finding(MemoryFinding::Kind::out_of_bounds_load, "dy", "a"),
              finding(MemoryFinding::Kind::write_conflict, "dh0", "b"),
              finding(MemoryFinding::Kind::out_of_bounds_load, "dy", "c")};
  EXPECT_EQ(v.signature(),
            "causal_conv1d/tiled@original/gradient/dh0 [sequence shorter than W], dw [last tap]; "
            "out-of-bounds load, write conflict");
  // A finding of the same kind on another tensor does not change it.
  const std::string before = v.signature();
  v.memory.push_back(finding(MemoryFinding::Kind::out_of_bounds_load, "y", "d"));
  EXPECT_EQ(v.signature(), before);
  v.memory.push_back(finding(MemoryFinding::Kind::out_of_bounds_store, "dx", "e"));
  EXPECT_EQ(v.signature(), before + ", out-of-bounds store");
}

TEST_F(VerdictTest, SignatureOfMemoryOnlyPassRejectedSkipped) {
  Verdict m = named("tiled@clamped", "cores");
  m.tensors = {row("y", 0)};
  m.memory = {finding(MemoryFinding::Kind::out_of_bounds_load, "dy", "dh0 row load")};
  conclude(m);
  EXPECT_EQ(m.signature(), "causal_conv1d/tiled@clamped/cores/out-of-bounds load");

  Verdict p = named("tiled", "vs_reference");
  p.tensors = {row("y", 0)};
  conclude(p);
  EXPECT_EQ(p.signature(), "causal_conv1d/tiled/vs_reference/pass");

  Verdict r = named("tiled", "chunked");
  r.status = Verdict::Status::rejected;
  EXPECT_EQ(r.signature(), "causal_conv1d/tiled/chunked/rejected");

  Verdict s = named("tiled", "packed");
  s.status = Verdict::Status::skipped;
  EXPECT_EQ(s.signature(), "causal_conv1d/tiled/packed/skipped");
}

// Symptoms are the parts of the signature, one per failing tensor and per memory kind,
// in the same order; shows() asks about one of them, and only of a failure.
TEST_F(VerdictTest, SymptomsAreThePartsOfTheSignature) {
  Verdict v = named("tiled@original", "gradient");
  v.tensors = {row("dh0", 1, "directional"), row("y", 0), row("dw", 1, "", "last tap"),
               row("dh0", 1, "full Jacobian", "sequence shorter than W")};
  v.memory = {finding(MemoryFinding::Kind::out_of_bounds_load, "dy", "a"),
              finding(MemoryFinding::Kind::write_conflict, "dh0", "b"),
              finding(MemoryFinding::Kind::out_of_bounds_load, "y", "c")};
  conclude(v);
  EXPECT_EQ(v.symptoms(),
            (std::vector<std::string>{"dh0 [sequence shorter than W]", "dw [last tap]",
                                      "out-of-bounds load", "write conflict"}));
  EXPECT_EQ(v.signature(),
            "causal_conv1d/tiled@original/gradient/dh0 [sequence shorter than W], dw [last tap]; "
            "out-of-bounds load, write conflict");
  EXPECT_TRUE(v.shows("dw [last tap]"));
  EXPECT_TRUE(v.shows("write conflict"));
  EXPECT_FALSE(v.shows("dw"));  // the region is part of the symptom
  EXPECT_FALSE(v.shows("y"));   // passed
  EXPECT_FALSE(v.shows("out-of-bounds store"));

  // Not a failure: nothing is shown, whatever the rows say.
  Verdict r = v;
  r.status = Verdict::Status::rejected;
  EXPECT_FALSE(r.shows("dw [last tap]"));
  Verdict p = named("tiled", "vs_reference");
  p.tensors = {row("y", 0)};
  conclude(p);
  EXPECT_TRUE(p.symptoms().empty());
}

TEST_F(VerdictTest, SignatureFromCompare) {
  // The full path: compare fills regions, conclude the status, signature the key.
  const auto e = y_like();
  auto a = e.clone();
  a[0][0][0] += 1;
  NamedTensors actual, expected, bounds;
  actual.set("y", e.clone());
  actual.set("dx", a);
  expected.set("y", e);
  expected.set("dx", e);
  bounds.set("y", at::full_like(e, 1e-6));
  bounds.set("dx", at::full_like(e, 1e-6));
  Verdict v = named("tiled@fixed", "gradient");
  v.tensors = compare(kernel_, problem_, actual, expected, bounds, "directional");
  conclude(v);
  EXPECT_EQ(v.status, Verdict::Status::fail);
  EXPECT_EQ(v.message, "dx (directional) out of bounds");
  EXPECT_EQ(v.signature(), "causal_conv1d/tiled@fixed/gradient/dx [head rows]");
}

// A fault (the implementation raised, crashed, hung or exited) is a symptom like a failing
// tensor: it fails the verdict, names the signature and the identity, and never carries
// the exception's message, which varies from case to case.
TEST_F(VerdictTest, FaultIsASymptomWithoutTheMessage) {
  const Case c = default_conv_case();
  Verdict raised = fault_verdict(c, {Fault::Kind::raised, "bad size (D = 96, call 5)"});
  EXPECT_EQ(raised.status, Verdict::Status::fail);
  EXPECT_EQ(raised.message, "raised: bad size (D = 96, call 5)");
  EXPECT_EQ(raised.symptoms(), std::vector<std::string>{"exception"});
  EXPECT_EQ(raised.signature(), "causal_conv1d/tiled/" + c.property + "/exception");
  EXPECT_TRUE(raised.shows("exception"));
  EXPECT_FALSE(raised.shows("crash (SIGSEGV)"));
  // Another message on another case: the same symptom, hence the same identity.
  Verdict other = fault_verdict(c, {Fault::Kind::raised, "bad size (D = 32, call 9)"});
  EXPECT_EQ(other.signature(), raised.signature());
  EXPECT_EQ(identity(causal_conv1d::schema(), c, other.symptoms()[0]),
            identity(causal_conv1d::schema(), c, raised.symptoms()[0]));

  const Verdict crashed = fault_verdict(c, {Fault::Kind::crashed, "SIGSEGV"});
  EXPECT_EQ(crashed.message, "crashed with SIGSEGV");
  EXPECT_EQ(crashed.symptoms(), std::vector<std::string>{"crash (SIGSEGV)"});
  EXPECT_TRUE(crashed.shows("crash (SIGSEGV)"));
  EXPECT_FALSE(crashed.shows("crash (SIGABRT)"));
  const std::string id = identity(causal_conv1d::schema(), c, "crash (SIGSEGV)");
  EXPECT_EQ(symptom_of(id), "crash (SIGSEGV)");
  EXPECT_EQ(id.rfind("causal_conv1d/tiled/crash (SIGSEGV)", 0), 0u) << id;

  const Verdict hung = fault_verdict(c, {Fault::Kind::timed_out, "20"});
  EXPECT_EQ(hung.message, "timed out after 20 s");
  EXPECT_EQ(hung.symptoms(), std::vector<std::string>{"hang (timeout)"});
  const Verdict exited = fault_verdict(c, {Fault::Kind::exited, "3"});
  EXPECT_EQ(exited.message, "exited with code 3");
  EXPECT_EQ(exited.symptoms(), std::vector<std::string>{"exit (code 3)"});
  EXPECT_TRUE(exited.failed());
}

TEST_F(VerdictTest, FaultFollowsTensorsAndMemoryInTheSignature) {
  Verdict v = named("tiled", "packed");
  v.tensors = {row("dw", 3, "", "head taps")};
  v.memory = {{MemoryFinding::Kind::out_of_bounds_load, "dy", "dy tile", 99, 64, 1}};
  v.fault = {Fault::Kind::raised, "late error"};
  conclude(v);
  EXPECT_EQ(v.status, Verdict::Status::fail);
  EXPECT_EQ(v.message, "raised: late error");
  EXPECT_EQ(v.symptoms(),
            (std::vector<std::string>{"dw [head taps]", "out-of-bounds load", "exception"}));
  EXPECT_EQ(v.signature(), "causal_conv1d/tiled/packed/dw [head taps]; out-of-bounds load, exception");
}

// What an isolated worker answers is read back into the same verdict (harness/presentation/report.h):
// every field, infinite and NaN numbers, the fault, an unlocated tensor.
TEST_F(VerdictTest, JsonRoundTrip) {
  Verdict v = named("tiled@clamped", "gradient");
  TensorError t = row("dh0", 2, "directional", "sequence shorter than W");
  t.index = {0, 3, 1};
  t.actual = 1.5;
  t.expected = -0.25;
  t.max_abs = kInf;
  t.max_rel = std::numeric_limits<double>::quiet_NaN();
  t.error_over_bound = 7.125;
  t.located = false;
  v.tensors = {row("y", 0, "", ""), t};
  v.memory = {{MemoryFinding::Kind::write_conflict, "dw", "dw slot store", 5, 128, 4}};
  conclude(v);
  const Verdict back = verdict_from_json(verdict_to_json(v));
  EXPECT_EQ(verdict_to_json(back).dump(), verdict_to_json(v).dump());
  EXPECT_EQ(back.status, v.status);
  EXPECT_EQ(back.message, v.message);
  EXPECT_EQ(back.signature(), v.signature());
  EXPECT_EQ(back.symptoms(), v.symptoms());
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_FALSE(back.tensors[1].located);
  EXPECT_EQ(back.tensors[1].max_abs, kInf);
  EXPECT_TRUE(std::isnan(back.tensors[1].max_rel));
  EXPECT_EQ(back.tensors[1].index, (std::vector<int64_t>{0, 3, 1}));
  EXPECT_EQ(back.memory[0].count, 4);

  const Verdict crashed = fault_verdict(default_conv_case(), {Fault::Kind::crashed, "SIGABRT"});
  const Verdict crashed_back = verdict_from_json(verdict_to_json(crashed));
  EXPECT_EQ(crashed_back.fault.kind, Fault::Kind::crashed);
  EXPECT_EQ(crashed_back.fault.detail, "SIGABRT");
  EXPECT_EQ(crashed_back.signature(), crashed.signature());
  EXPECT_TRUE(crashed_back.failed());

  Verdict rejected = named("tiled", "chunked");
  rejected.status = Verdict::Status::rejected;
  rejected.message = "D must be divisible by BD (D = 96, BD = 256)";
  const Verdict rejected_back = verdict_from_json(verdict_to_json(rejected));
  EXPECT_EQ(rejected_back.status, Verdict::Status::rejected);
  EXPECT_EQ(rejected_back.message, rejected.message);
  EXPECT_FALSE(rejected_back.fault);

  EXPECT_THROW(verdict_from_json(nlohmann::json{{"status", "maybe"}}), std::runtime_error);
  EXPECT_THROW(verdict_from_json(nlohmann::json::object()), std::runtime_error);
}

// Exactness checks (compare_exact): any difference is a mismatch, measured in ulps of the
// dtype; the symptom says what the tensor deviates from and where (the region
// kernel names, else the region), with no number of the case in it.
TEST_F(VerdictTest, ExactComparisonCountsUlpsAndNamesTheDeviation) {
  const auto e = y_like().to(at::kBFloat16);
  auto a = e.clone();
  // One element one bfloat16 ulp away, another three (its bits moved; no sign crossed).
  int16_t* bits = a.view({-1}).view(at::kShort).data_ptr<int16_t>();
  bits[5] += 1;
  bits[40] -= 3;
  NamedTensors actual, expected;
  actual.set("y", a);
  expected.set("y", e);
  auto rows = compare_exact(kernel_, problem_, actual, expected, "deviates from policy", "policy");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].mismatches, 2);
  EXPECT_EQ(rows[0].max_ulps, 3);
  EXPECT_EQ(rows[0].index, (std::vector<int64_t>{0, 1, 8}));  // element 40 of [1, 16, 32]
  EXPECT_TRUE(rows[0].exact());
  rows[0].rounding_point = "product from the fp32 gelu";
  rows[0].error_over_bound = 0.25;
  Verdict v;
  v.kernel = "k";
  v.impl = "i";
  v.property = "policy";
  v.tensors = rows;
  conclude(v);
  EXPECT_TRUE(v.failed());
  // The region of the worst element (row 1 of 16: W = 4); the rounding point is in the
  // message only.
  EXPECT_EQ(v.symptoms(), std::vector<std::string>{"y deviates from policy [head rows]"});
  EXPECT_EQ(v.message, "y deviates from policy by up to 3 ulps in 2 of 512 elements (within the "
                       "derived bound: 0.25 of it; product from the fp32 gelu)");
  EXPECT_TRUE(v.shows("y deviates from policy [head rows]"));
  EXPECT_FALSE(v.shows("y"));
  // Bit-identical: a passing row with no ulps.
  const auto same = compare_exact(kernel_, problem_, expected, expected, "varies with layout", "layout");
  EXPECT_TRUE(same[0].passed());
  EXPECT_EQ(same[0].max_ulps, 0);
  // The verdict crosses a process boundary (worker isolation) whole.
  const Verdict back = verdict_from_json(verdict_to_json(v));
  EXPECT_EQ(back.signature(), v.signature());
  EXPECT_EQ(back.tensors[0].max_ulps, 3);
  EXPECT_EQ(back.tensors[0].rounding_point, "product from the fp32 gelu");
}

TEST_F(VerdictTest, ExactComparisonSeesTheSignOfZeroAndAnotherDtype) {
  const auto zero = at::zeros({1, 16, 32}, at::kFloat);
  NamedTensors plus, minus, wide;
  plus.set("y", zero);
  minus.set("y", -zero);
  wide.set("y", zero.to(at::kDouble));
  const auto sign = compare_exact(kernel_, problem_, minus, plus, "deviates from policy", "");
  EXPECT_EQ(sign[0].mismatches, 512);
  EXPECT_EQ(sign[0].max_ulps, 1);
  const auto dtype = compare_exact(kernel_, problem_, wide, plus, "deviates from policy", "");
  EXPECT_EQ(dtype[0].region, "dtype differs");
  EXPECT_FALSE(dtype[0].passed());
}

// An infinite bound (the exact value overflows the dtype) admits any value, infinity and
// NaN included.
TEST_F(VerdictTest, InfiniteBoundAdmitsAnything) {
  const auto e = y_like();
  auto a = e.clone();
  a.view({-1})[0] = kInf;
  a.view({-1})[1] = std::nan("");
  auto bound = at::full_like(e, 1e-12);
  bound.view({-1})[0] = kInf;
  bound.view({-1})[1] = kInf;
  const auto rows = compare1("y", a, e, bound);
  EXPECT_TRUE(rows[0].passed());
  EXPECT_EQ(rows[0].error_over_bound, 0);
}

}  // namespace
}  // namespace kprop

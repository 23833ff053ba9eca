// cross_entropy (kernels/cross_entropy/cross_entropy.cpp): its emulation of Liger's row
// kernel passes every property over every option (ignored rows, smoothing, softcap, z-loss,
// the three reductions, peaked logits), also at Liger's block edges past 2^14 classes; it
// returns what Liger returns where every row is ignored; each planted variant is found from
// a cold start and shrunk to its known 1-minimal case, which the correct emulation passes.
#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "harness/spec/kernel_spec.h"
#include "tests/planted.h"
#include "tests/search_options.h"

namespace kprop {
namespace {
using T = at::Tensor;

const Kernel& kernel() { return find_kernel("cross_entropy"); }

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties, std::map<std::string, int64_t> limits) {
  return search_options("cross_entropy", impl, cases, seed, std::move(properties), std::move(limits));
}

const KnownDefect& defect_of(const std::string& impl) { return known_defect_of("cross_entropy", impl); }

Case ce_case(const std::string& impl, int64_t rows, int64_t V) {
  Case c = default_case(kernel().schema(), Case{});
  c.kernel = "cross_entropy";
  c.impl = impl;
  c.seed = 3;
  c.set("rows", rows);
  c.set("V", V);
  return c;
}

// Away from the scale edge: 700 cases over the seven properties (neutral skips: no input of
// cross_entropy declares a neutral value).
TEST(CrossEntropy, TheRowEmulationPassesEveryProperty) {
  const SearchResult r = search(options("rows", 700, 5, {}, {{"V_at_scale", 0}}));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal()) << "\n"
                          << format_error_table(r.failure->verdict());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.skipped, 100);
  EXPECT_EQ(r.tally.passed, 600);
}

// Past 2^14 classes (one block of 2^15, and two and three blocks with an online softmax
// across them), in every dtype, within the bound.
TEST(CrossEntropy, TheRowEmulationPassesAtLigersBlockEdges) {
  const SearchResult r = search(options("rows", 12, 3, {"vs_reference"}, {{"V_at_scale", 50}}));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.passed, 12);
}

// Liger's mean over no rows is 0 (n_non_ignore = 0 never divides: every row returns early
// with a zero loss and a zero gradient), where torch's is NaN.
TEST(CrossEntropy, EveryRowIgnoredGivesZeroLossAndZeroGradient) {
  for (const char* reduction : {"mean", "sum", "none"}) {
    Case c = ce_case("rows", 3, 7);
    c.set("reduction", std::string(reduction));
    c.set("ignored", std::string("all"));
    const Problem p = kernel().materialize(c);
    ASSERT_TRUE(p.inputs.get("target").eq(-100).all().item<bool>());
    for (const char* impl : {"rows", "reference"}) {
      const NamedTensors out = kernel().forward(implementation_namespace(impl), p);
      EXPECT_TRUE(out.get("loss").eq(0).all().item<bool>()) << impl << " " << reduction;
      const T dloss = at::ones_like(out.get("loss")) * 0.5;
      const NamedTensors g = kernel().backward(implementation_namespace(impl), p, {{"dloss", dloss}});
      EXPECT_TRUE(g.get("dx").eq(0).all().item<bool>()) << impl << " " << reduction;
    }
    c.property = "vs_reference";
    EXPECT_EQ(evaluate(c).status, Verdict::Status::pass) << reduction;
  }
}

// The loss is one value for 'mean' and 'sum', one per row for 'none'; the ignored rows hold
// 0 in 'none'; the reference is torch's cross entropy with its options.
TEST(CrossEntropy, ReductionsShapeTheLossAndIgnoredRowsCountForNothing) {
  Case c = ce_case("rows", 6, 5);
  c.set("ignored", std::string("some"));
  c.set("reduction", std::string("none"));
  const Problem p = kernel().materialize(c);
  const T target = p.inputs.get("target");
  ASSERT_TRUE(target.eq(-100).any().item<bool>());
  ASSERT_TRUE(target.ne(-100).any().item<bool>());
  const T loss = kernel().forward(implementation_namespace("reference"), kernel().in_dtype(p, DType::float64)).get("loss");
  ASSERT_EQ(loss.sizes(), (std::vector<int64_t>{6}));
  EXPECT_TRUE(loss.masked_select(target.eq(-100)).eq(0).all().item<bool>());
  // Against torch's own: -log_softmax at the target, mean over the rows not ignored.
  const T x = p.inputs.get("x").to(at::kDouble);
  const T nll = -x.log_softmax(1).gather(1, at::where(target.eq(-100), at::zeros_like(target), target).unsqueeze(1)).squeeze(1);
  EXPECT_TRUE(at::allclose(loss.masked_select(target.ne(-100)), nll.masked_select(target.ne(-100))));
  c.set("reduction", std::string("mean"));
  const T mean = kernel().forward(implementation_namespace("reference"),
                                  kernel().in_dtype(kernel().materialize(c), DType::float64)).get("loss");
  ASSERT_EQ(mean.dim(), 0);
  EXPECT_NEAR(mean.item<double>(), nll.masked_select(target.ne(-100)).mean().item<double>(), 1e-12);
}

// peaked: softmax >= 0.98 at the target, the cancellation #1329 is about; saturated: 1 in fp32.
TEST(CrossEntropy, PeakedLogitsPutTheSoftmaxAtTheTarget) {
  for (const char* logits : {"peaked", "saturated"}) {
    Case c = ce_case("rows", 8, 100);
    c.set("logits", std::string(logits));
    const Problem p = kernel().materialize(c);
    const T target = p.inputs.get("target");
    const T soft = p.inputs.get("x").to(at::kDouble).softmax(1).gather(1, target.unsqueeze(1));
    EXPECT_GE(soft.min().item<double>(), logits == std::string("peaked") ? 0.98 : 1 - 1e-12) << logits;
  }
}

// The gradient check's finite differences of a loss near 0 (logits peaked at the target:
// lse - x_y cancels) are as noisy as lse is large: it takes that noise from the loss's
// derived bound, not from the loss's own size (a false failure before).
TEST(CrossEntropy, FiniteDifferencesOfALossNearZeroKnowItsNoise) {
  Case c = ce_case("rows", 1, 255);
  c.property = "gradient";
  c.dtype = DType::float64;
  c.set("logits", std::string("peaked"));
  c.seed = 9186481849412136897ull;
  const Verdict v = evaluate(c);
  EXPECT_EQ(v.status, Verdict::Status::pass) << format_error_table(v);
}

struct Planted {
  std::string impl;
  // Its 1-minimal cases have the known defect's shape and this identity, followed by what
  // else the case needs: each defect has several 1-minimal cases (V = 2, or V = 1 with an
  // option that gives the one class a gradient), and the shrinker reaches one or another
  // from where the search found it.
  std::string identity;
};
void PrintTo(const Planted& p, std::ostream* os) { *os << p.impl; }

class CrossEntropyPlanted : public testing::TestWithParam<Planted> {};

TEST_P(CrossEntropyPlanted, IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const Planted& planted = GetParam();
  const KnownDefect& d = defect_of(planted.impl);
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SearchResult r = search(options(planted.impl, 400, seed, {d.property}, d.limits));
    ASSERT_TRUE(r.failure) << planted.impl << " passed 400 cases";
    const Failure& f = *r.failure;
    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_EQ(f.identity.rfind(planted.identity, 0), 0u) << f.identity << "\n" << text;
    expect_minimal_finding(d, f, "rows");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, CrossEntropyPlanted,
    testing::Values(
        // rows=2: V=2, or V=1 where only the z-loss has a gradient.
        Planted{"rows@grad_output_scalar", "cross_entropy/rows@grad_output_scalar/dx {reduction=none"},
        // rows=1, bf16 or fp16: V=2, or V=1 with smoothing, a softcap or the z-loss.
        Planted{"rows@dxy_rmw", "cross_entropy/rows@dxy_rmw/dx"},
        // rows=1, V=3 (one padded lane), softcap=3.
        Planted{"rows@softcap_padding", "cross_entropy/rows@softcap_padding/loss {softcap=3"}),
    [](const testing::TestParamInfo<Planted>& info) {
      return info.param.impl.substr(info.param.impl.find('@') + 1);
    });

}  // namespace
}  // namespace kprop

// fused_linear_cross_entropy (kernels/fused_linear_cross_entropy/): its emulation of Liger's
// chunked forward passes every property over cross entropy's options with and without a
// bias; the planted #1298 path (reduction='none' scaling dh, dW and db by grad_output[0]) is
// found from a cold start and shrunk to its 1-minimal case, which the correct chunks pass.
#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/planted.h"
#include "tests/search_options.h"

namespace kprop {
namespace {

const Kernel& kernel() { return find_kernel("fused_linear_cross_entropy"); }

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties = {},
                      std::map<std::string, int64_t> limits = {}) {
  return search_options("fused_linear_cross_entropy", impl, cases, seed, std::move(properties),
                        std::move(limits));
}

// 700 cases over the seven properties; neutral compares no bias with a zero bias.
TEST(FusedLinearCrossEntropy, TheChunksPassEveryProperty) {
  const SearchResult r = search(options("chunks", 700, 5));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal()) << "\n"
                          << format_error_table(r.failure->verdict());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_GT(r.tally.passed, 600);  // neutral skips the cases where no bias can be left out
}

// Many rows over few classes: several chunks, each rounded into dW's and db's dtype.
TEST(FusedLinearCrossEntropy, ManyChunksPassInEveryDtype) {
  const SearchResult r = search(options("chunks", 60, 3, {"vs_reference"},
                                        {{"max_rows", 64}, {"max_V", 8}, {"max_H", 16}}));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.passed, 60);
}

TEST(FusedLinearCrossEntropy, Liger1298IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const std::string impl = "chunks@grad_output_scalar";
  const KnownDefect d = kernel().known_defects().front();
  ASSERT_EQ(d.impls, std::vector<std::string>{impl});
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SearchResult r = search(options(impl, 400, seed, {d.property}, d.limits));
    ASSERT_TRUE(r.failure) << impl << " passed 400 cases";
    const Failure& f = *r.failure;
    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_EQ(f.identity.rfind("fused_linear_cross_entropy/chunks@grad_output_scalar/dh {reduction=none", 0), 0u)
        << f.identity;
    expect_minimal_finding(d, f, "chunks");
  }
}

}  // namespace
}  // namespace kprop

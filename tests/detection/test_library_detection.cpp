// The kernel library's one-file kernels (kernels/<name>/<name>.cpp) whose tests are their
// declarations: each kernel's own emulation passes every property, and each of its known
// defects is found from a cold start by the property that hunts it, from several seeds,
// shrunk to a 1-minimal case of the declared shape, which the emulation passes.
#include <gtest/gtest.h>

#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/search_options.h"

namespace kprop {
namespace {

// Kernels whose every check is declared; rms_norm and swiglu have tests of their own.
const std::vector<std::string> kKernels{"kl_div", "rope", "linear_attn", "delta_rule"};

class KernelPasses : public testing::TestWithParam<std::string> {};

// 200 cases per property, each property in turn.
TEST_P(KernelPasses, EveryPropertyWithItsOwnEmulation) {
  const Kernel& kernel = find_kernel(GetParam());
  const auto properties = kernel.properties();
  const SearchResult r = search(search_options(kernel.name(), kernel.default_implementation(),
                                               200 * static_cast<int64_t>(properties.size()), 7));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_GT(r.tally.passed, 100 * static_cast<int64_t>(properties.size())) << kernel.name();
}

INSTANTIATE_TEST_SUITE_P(Library, KernelPasses, testing::ValuesIn(kKernels),
                         [](const auto& info) { return info.param; });

struct Target {
  std::string kernel;
  KnownDefect defect;
};

std::vector<Target> targets() {
  std::vector<Target> out;
  for (const auto& name : kKernels)
    for (const KnownDefect& d : find_kernel(name).known_defects()) out.push_back({name, d});
  return out;
}

void PrintTo(const Target& t, std::ostream* os) { *os << t.kernel << ": " << t.defect.name; }

class KnownDefectIsFound : public testing::TestWithParam<Target> {};

TEST_P(KnownDefectIsFound, FromThreeSeedsShrunkToItsShape) {
  const Target& t = GetParam();
  const Kernel& kernel = find_kernel(t.kernel);
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(t.defect.name + ", seed " + std::to_string(seed));
    const SearchResult r = search(search_options(t.kernel, t.defect.impls.front(), 400, seed,
                                                 {t.defect.property}, t.defect.limits));
    ASSERT_TRUE(r.failure) << "not found in 400 cases";
    const Failure& f = *r.failure;
    EXPECT_TRUE(shows(t.defect, f)) << f.identity << "\n" << format_case(f.minimal());
    const Case& m = f.minimal();
    const auto shows_symptom = [&](const Case& c) { return evaluate(c).shows(f.symptom); };
    EXPECT_TRUE(is_one_minimal(kernel.schema(), m, find_property(m.property).dtypes(), shows_symptom))
        << format_case(m);
    Case correct = m;
    correct.impl = kernel.default_implementation();
    EXPECT_EQ(evaluate(correct).status, Verdict::Status::pass) << format_case(correct);
  }
}

INSTANTIATE_TEST_SUITE_P(Library, KnownDefectIsFound, testing::ValuesIn(targets()),
                         [](const auto& info) {
                           std::string name = info.param.kernel + "_" + info.param.defect.name;
                           for (char& ch : name)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace kprop

// scaled_tanh, a kernel that exists only in tests/kernels/: kprop's generic harness runs
// on it unchanged. The correct implementation passes every property that applies and the
// three that need tiling hints or sequences are skipped; each planted defect is found
// from a cold start, shrunk to a 1-minimal case with its own identity, kept in a corpus
// and replayed as recorded; and its cases round-trip through the fuzzer's bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "generators/choices.h"
#include "generators/draw.h"
#include "generators/shrink.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/engine/replay.h"
#include "harness/engine/runner.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "tests/planted.h"
#include "tests/search_options.h"
#include "tests/test_names.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;

const char* kKernel = "scaled_tanh";
const Kernel& kernel() { return find_kernel(kKernel); }
const Schema& schema() { return kernel().schema(); }

// The schema's default case (4 rows, 16 columns, a bias) for an implementation and property.
Case default_for(const std::string& impl, const std::string& property = "vs_reference") {
  Case base;
  base.kernel = kKernel;
  base.impl = impl;
  base.property = property;
  return default_case(schema(), base);
}

SearchOptions options(const std::string& impl, int64_t cases, uint64_t seed,
                      std::vector<std::string> properties = {}) {
  return search_options(kKernel, impl, cases, seed, std::move(properties));
}

// A fresh folder for a corpus, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("kprop-elementwise-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// --- The correct implementation -----------------------------------------------------

TEST(ElementwiseKernel, IsRegisteredWithItsImplementationsAndProperties) {
  const auto names = kernel_names();
  EXPECT_NE(std::find(names.begin(), names.end(), kKernel), names.end());
  std::vector<std::string> impls;
  for (const auto& impl : kernel().implementations()) impls.push_back(impl.name);
  EXPECT_EQ(impls, (std::vector<std::string>{"reference", "toy", "toy@tail", "toy@bias"}));
  EXPECT_EQ(kernel().default_implementation(), "toy");
  EXPECT_EQ(kernel().properties(), (std::vector<std::string>{"gradient", "vs_reference", "chunked",
                                                             "packed", "cores", "layout",
                                                             "determinism", "guard", "neutral",
                                                             "composition"}));
  EXPECT_EQ(kernel().sequences(), nullptr);
  EXPECT_FALSE(kernel().retiled(default_for("toy")));
}

// 4000 cases over the ten properties in turn, 400 each: gradient, vs_reference, layout,
// determinism, guard, neutral and composition pass every one of theirs, chunked, packed and
// cores skip every one of theirs.
TEST(ElementwiseKernel, CorrectImplementationPassesAndSkipsWhatDoesNotApply) {
  const SearchResult r = search(options("toy", 4000, 7));
  ASSERT_FALSE(r.failure) << r.failure->verdict().signature() << "\n"
                          << format_case(r.failure->minimal());
  EXPECT_EQ(r.tally.cases, 4000);
  EXPECT_EQ(r.tally.passed, 2800);
  EXPECT_EQ(r.tally.skipped, 1200);
  EXPECT_EQ(r.tally.failed, 0);
  EXPECT_EQ(r.tally.rejected, 0);
  EXPECT_EQ(r.tally.known, 0);
}

TEST(ElementwiseKernel, PropertiesWithoutTheirHookSkipEveryCaseSayingWhy) {
  const std::map<std::string, std::string> why{
      {"chunked", "scaled_tanh has no state to hand on"},
      {"packed", "scaled_tanh has no packed sequences"},
      {"cores", "scaled_tanh has no tiling hint to vary"},
  };
  for (const auto& [property, message] : why) {
    SCOPED_TRACE(property);
    const SearchResult r = search(options("toy", 200, 3, {property}));
    EXPECT_FALSE(r.failure);
    EXPECT_EQ(r.tally.skipped, 200);
    EXPECT_EQ(r.tally.cases, 200);
    // Skipped, whatever the implementation does.
    const Verdict v = evaluate(default_for("toy@bias", property));
    EXPECT_EQ(v.status, Verdict::Status::skipped);
    EXPECT_EQ(v.message, message);
  }
}

// --- The planted defects ------------------------------------------------------------

struct Planted {
  std::string impl;
  std::string identity;           // of the minimal case
  int64_t cols;                   // of the minimal case (rows: 1)
  bool bias;
};

// gtest prints a parameter in test names and failures: the implementation says it all.
void PrintTo(const Planted& planted, std::ostream* os) { *os << planted.impl; }

const KnownDefect& defect_of(const std::string& impl) { return known_defect_of(kKernel, impl); }

// A search of the defect's property from a cold start; its first failure is the defect.
Failure first_failure(const Planted& planted, uint64_t seed) {
  const KnownDefect& d = defect_of(planted.impl);
  const SearchResult r = search(options(planted.impl, 2000, seed, {d.property}));
  if (!r.failure) throw std::runtime_error(planted.impl + " passed 2000 cases");
  return *r.failure;
}

class PlantedDefect : public testing::TestWithParam<Planted> {};

TEST_P(PlantedDefect, IsFoundFromAColdStartAndShrunkToOneMinimal) {
  const Planted& planted = GetParam();
  const KnownDefect& d = defect_of(planted.impl);
  for (uint64_t seed : {1, 2, 3, 4}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Failure f = first_failure(planted, seed);
    ASSERT_TRUE(f.shrunk);
    EXPECT_FALSE(f.shrunk->budget_exhausted);
    EXPECT_EQ(f.symptom, d.symptom);
    EXPECT_EQ(f.identity, planted.identity);

    const Case& m = f.minimal();
    const std::string text = format_case(m);
    EXPECT_EQ(m.integer("rows"), 1) << text;
    EXPECT_EQ(m.integer("cols"), planted.cols) << text;
    EXPECT_EQ(m.flag("bias"), planted.bias) << text;
    EXPECT_EQ(m.dtype, DType::float32) << text;
    EXPECT_EQ(m.distribution, Distribution::normal) << text;
    EXPECT_EQ(identity(schema(), m, f.symptom), f.identity);

    EXPECT_TRUE(evaluate(m).shows(f.symptom)) << text;
    // 1-minimal, and the correct implementation passes the very case that shows the defect.
    expect_minimal_finding(d, f, "toy");
  }
}

TEST_P(PlantedDefect, KeptInACorpusAndReplayedAsRecorded) {
  const Planted& planted = GetParam();
  const Failure f = first_failure(planted, 1);
  const TempDir corpus;

  const CaseFile described = describe_failure(f, {{"found_by", "test_elementwise_kernel"}});
  // Every built-in implementation's verdict on the minimal case: only the defect fails.
  EXPECT_EQ(described.expect,
            (std::map<std::string, Verdict::Status>{{"reference", Verdict::Status::pass},
                                                    {"toy", Verdict::Status::pass},
                                                    {"toy@bias", planted.impl == "toy@bias"
                                                                     ? Verdict::Status::fail
                                                                     : Verdict::Status::pass},
                                                    {"toy@tail", planted.impl == "toy@tail"
                                                                     ? Verdict::Status::fail
                                                                     : Verdict::Status::pass}}));
  const Kept kept = keep(corpus.str(), described);
  ASSERT_TRUE(kept.written);
  EXPECT_EQ(fs::path(kept.path).parent_path(), fs::path(corpus.str()) / kKernel);

  const CaseFile read = read_case_file(kept.path);
  EXPECT_EQ(read.c, f.minimal());
  EXPECT_EQ(read.identity, planted.identity);
  EXPECT_EQ(read.signature, described.signature);
  const ReplayResult r = replay(read);
  EXPECT_TRUE(r.fingerprint_matches);
  EXPECT_TRUE(r.signature_matches);
  EXPECT_EQ(r.runs.size(), 4u);
  EXPECT_TRUE(r.as_recorded());

  // One defect, one entry: keeping it again writes nothing.
  const Kept again = keep(corpus.str(), described);
  EXPECT_FALSE(again.written);
  EXPECT_EQ(again.path, kept.path);
}

INSTANTIATE_TEST_SUITE_P(
    ScaledTanh, PlantedDefect,
    testing::Values(Planted{"toy@tail", "scaled_tanh/toy@tail/y [last column]", 7, false},
                    Planted{"toy@bias", "scaled_tanh/toy@bias/y [8-wide blocks] {bias}", 8, true}),
    [](const auto& info) { return test_name(info.param.impl); });

// toy@tail's forward and backward share the loop that drops the lane, so they agree
// with each other: the gradient check is blind to it, the reference is not. The bias
// defect is in the forward only, so the gradient check sees it too, as a wrong db; the
// failure is then localized to the forward call that is wrong, and named and kept as
// the same defect the reference finds.
TEST(ElementwiseKernel, GradientCheckSeesOnlyADefectTheBackwardDoesNotShare) {
  const SearchResult tail = search(options("toy@tail", 400, 1, {"gradient"}));
  EXPECT_FALSE(tail.failure) << tail.failure->identity;
  EXPECT_EQ(tail.tally.passed, 400);

  const SearchResult bias = search(options("toy@bias", 400, 1, {"gradient"}));
  ASSERT_TRUE(bias.failure);
  const Failure& f = *bias.failure;
  EXPECT_EQ(f.found_verdict.property, "gradient");
  EXPECT_TRUE(f.found_verdict.shows("db [8-wide blocks]")) << f.found_verdict.signature();
  EXPECT_EQ(f.minimal().property, "vs_reference");
  EXPECT_EQ(f.identity, "scaled_tanh/toy@bias/y [8-wide blocks] {bias}");
}

// --- Cases as bytes -----------------------------------------------------------------

// decode(encode(c)) == c for every drawn case, in every property's space, with a pinned
// parameter, and at the far ends of the bounds that random draws never reach.
TEST(ElementwiseKernel, CasesRoundTripThroughBytes) {
  auto round_trip = [](const Case& c, const CaseSpace& space) {
    const auto bytes = encode(schema(), c, space);
    const Case back = decode(schema(), bytes.data(), bytes.size(), space);
    EXPECT_EQ(back, c) << format_case(c) << "decoded as\n" << format_case(back);
  };
  SearchOptions o = options("toy", 0, 0);
  int64_t cases = 0;
  for (const std::string& property : kernel().properties())
    for (int64_t i = 0; i < 300; ++i) {
      const CaseSpace space = search_space(o, property, i);
      RandomChoices choices(case_seed(11, i));
      round_trip(draw_case(schema(), choices, space), space);
      ++cases;
    }
  EXPECT_EQ(cases, 3000);

  o.fixed = {{"cols", int64_t{9}}};
  for (int64_t i = 0; i < 100; ++i) {
    const CaseSpace space = search_space(o, "vs_reference", i);
    RandomChoices choices(case_seed(12, i));
    const Case c = draw_case(schema(), choices, space);
    EXPECT_EQ(c.integer("cols"), 9);
    round_trip(c, space);
  }

  CaseSpace space = search_space(options("toy", 0, 0), "vs_reference", 0);
  Case far = default_for("toy");
  far.set("rows", int64_t{4096});
  far.set("cols", int64_t{4095});
  round_trip(far, space);

  // All-zero bytes are the simplest case.
  const std::vector<uint8_t> zeros(64, 0);
  const Case simplest = decode(schema(), zeros.data(), zeros.size(), space);
  EXPECT_EQ(simplest.integer("rows"), 1);
  EXPECT_EQ(simplest.integer("cols"), 1);
  EXPECT_FALSE(simplest.flag("bias"));
}

}  // namespace
}  // namespace kprop

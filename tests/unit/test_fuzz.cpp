// What the libFuzzer targets and the nightly run build on, tested without libFuzzer: the
// fuzz input format (property byte + case bytes) round-trips every corpus case; a target
// counts failures of known identities and reports new ones, each shrunk and named; a hunt
// reports only its defect; implementation names from binary names; libFuzzer's stats
// lines; triage shrinks a signature once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <c10/util/Exception.h>
#include <torch/version.h>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/engine/triage.h"
#include "harness/execution/cheap_errors.h"
#include "harness/fuzz/fuzz_input.h"
#include "harness/fuzz/fuzz_target.h"
#include "harness/fuzz/seeds.h"
#include "harness/model/kernel.h"
#include "harness/nightly/fuzzer_process.h"
#include "harness/storage/case_file.h"
#include "tests/source_tree.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;

const std::string kCorpus = (source_tree() / "corpus").string();

std::vector<CaseFile> corpus_cases() {
  std::vector<CaseFile> out;
  for (const auto& path : case_files_under({kCorpus})) out.push_back(read_case_file(path));
  return out;
}

TEST(FuzzInput, EveryCorpusCaseRoundTripsThroughTheFuzzersBytes) {
  const auto cases = corpus_cases();
  ASSERT_GE(cases.size(), 10u);
  for (const auto& f : cases) {
    const FuzzSpace space{f.c.kernel, f.c.impl, "", {}};
    const auto bytes = encode_fuzz_input(space, f.c);
    EXPECT_EQ(decode_fuzz_input(space, bytes.data(), bytes.size()), f.c) << f.path;
  }
}

// libFuzzer's length control starts inputs at a few bytes: an encoded case carries no
// trailing zeros (absent bytes read as zeros), and its simplest form is the seed alone.
TEST(FuzzInput, EncodedInputsAreAsShortAsTheirCase) {
  for (const auto& f : corpus_cases()) {
    const FuzzSpace space{f.c.kernel, f.c.impl, "", {}};
    const auto bytes = encode_fuzz_input(space, f.c);
    if (!bytes.empty()) {
      EXPECT_NE(bytes.back(), 0) << f.path;
    }
  }
  const FuzzSpace space{"causal_conv1d", "tiled", "", {}};
  Case simplest = decode_fuzz_input(space, nullptr, 0);
  EXPECT_TRUE(encode_fuzz_input(space, simplest).empty());
  simplest.seed = 0x0102030405060708ULL;
  EXPECT_EQ(encode_fuzz_input(space, simplest).size(), 9u);  // property byte + seed
}

// The simplest case (what short inputs decode to) is one the device emulation runs: no
// h0 and D = 256, not the D = 32 it refuses (issue 24: 90% of tiled's inputs were that).
TEST(FuzzInput, TheEmptyInputIsACaseTiledRuns) {
  const FuzzSpace space{"causal_conv1d", "tiled", "vs_reference", {}};
  const Case simplest = decode_fuzz_input(space, nullptr, 0);
  EXPECT_FALSE(simplest.flag("initial_state"));
  EXPECT_EQ(simplest.integer("D"), 256);
  EXPECT_NE(evaluate(simplest).status, Verdict::Status::rejected);
  // With h0 the narrowest D, 32, stays the simplest.
  Case with_h0 = simplest;
  with_h0.set("initial_state", true);
  for (const auto& spec : find_kernel("causal_conv1d").schema().params)
    if (spec.name == "D") {
      EXPECT_EQ(std::get<int64_t>(spec.simplest_in(with_h0)), 32);
      EXPECT_EQ(std::get<int64_t>(spec.simplest_in(simplest)), 256);
    }
}

// A refusal (a c10::Error) carries no symbolized stack trace in a fuzz target: it was a
// fifth of every execution under libtorch 1.x.
TEST(CheapErrors, ErrorsCarryNoStackTraceOnceAsked) {
  skip_cpp_stack_traces_of_errors();
  try {
    TORCH_CHECK(false, "refused");
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what()).find("frame #"), std::string::npos) << e.what();
  }
}

TEST(FuzzInput, ByteZeroChoosesThePropertyUnlessTheTargetPinsOne) {
  const Kernel& k = find_kernel("causal_conv1d");
  const auto props = k.properties();
  for (size_t i = 0; i < props.size() * 2; ++i) {
    const uint8_t bytes[] = {static_cast<uint8_t>(i)};
    EXPECT_EQ(decode_fuzz_input({"causal_conv1d", "tiled", "", {}}, bytes, 1).property,
              props[i % props.size()]);
    EXPECT_EQ(decode_fuzz_input({"causal_conv1d", "tiled", "packed", {}}, bytes, 1).property,
              "packed");
  }
  // The empty input: the simplest case of the first property.
  const Case empty = decode_fuzz_input({"causal_conv1d", "tiled", "", {}}, nullptr, 0);
  EXPECT_EQ(empty.property, props.front());
  EXPECT_EQ(empty.impl, "tiled");
}

TEST(FuzzInput, AnyBytesDecodeToAValidCase) {
  std::mt19937 rng(5);
  const Schema& schema = find_kernel("causal_conv1d").schema();
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes(rng() % 64);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    const Case c = decode_fuzz_input({"causal_conv1d", "tiled", "", {}}, bytes.data(), bytes.size());
    EXPECT_TRUE(validate(schema, c).empty()) << c;
  }
}

TEST(FuzzInput, CasesOutsideTheTargetsSpaceAreRefusedByName) {
  Case c = corpus_cases().front().c;
  EXPECT_THROW(encode_fuzz_input({"causal_conv1d", "tiled", "nonesuch_property", {}}, c), CaseError);
  c.property = "nonesuch";
  EXPECT_THROW(encode_fuzz_input({"causal_conv1d", "tiled", "", {}}, c), CaseError);
}

// Per kernel with a corpus: one seed per distinct corpus case of that kernel, decoding to it.
TEST(FuzzSeeds, OneSeedPerDistinctCaseAndTheyDecodeToTheCorpusCases) {
  for (const std::string kernel : {"causal_conv1d", "geglu"}) {
    const std::string impl = find_kernel(kernel).default_implementation();
    const FuzzSpace space{kernel, impl, "", {}};
    const fs::path dir = fs::temp_directory_path() / ("kprop-seeds-" + std::to_string(getpid()));
    fs::remove_all(dir);
    const auto out = write_seeds(space, {kCorpus}, dir.string());
    EXPECT_TRUE(out.skipped.empty());
    std::set<std::string> distinct(out.files.begin(), out.files.end());
    EXPECT_EQ(static_cast<size_t>(std::distance(fs::directory_iterator(dir), {})), distinct.size());
    std::set<std::string> decoded, expected;
    for (const auto& f : corpus_cases()) {
      if (f.c.kernel != kernel) continue;
      Case c = f.c;
      c.impl = impl;
      expected.insert(case_to_json(c).dump());
    }
    for (const auto& file : distinct) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      decoded.insert(case_to_json(decode_fuzz_input(space,
                                                    reinterpret_cast<const uint8_t*>(bytes.data()),
                                                    bytes.size()))
                         .dump());
    }
    EXPECT_FALSE(expected.empty()) << kernel;
    EXPECT_EQ(decoded, expected) << kernel;
    fs::remove_all(dir);
  }
}

// The bytes of the corpus case of `impl` (its first one).
std::vector<uint8_t> corpus_input(const std::string& impl, Case* c = nullptr) {
  for (const auto& f : corpus_cases())
    if (f.c.impl == impl) {
      if (c) *c = f.c;
      return encode_fuzz_input({f.c.kernel, impl, "", {}}, f.c);
    }
  ADD_FAILURE() << "no corpus case of " << impl;
  return {};
}

FuzzOptions options_for(const std::string& impl, bool know_corpus) {
  FuzzOptions o;
  o.space = {"causal_conv1d", impl, "", {}};
  if (know_corpus)
    for (const auto& [id, file] : corpus_identities(kCorpus)) o.known.insert(id);
  o.shrink_seconds = 20;
  return o;
}

TEST(FuzzTarget, AKnownIdentityIsCountedNotReported) {
  Case c;
  const auto bytes = corpus_input("tiled@fixed", &c);
  FuzzTarget target(options_for("tiled@fixed", true));
  for (int i = 0; i < 3; ++i) {
    const FuzzOutcome out = target.run(bytes.data(), bytes.size());
    EXPECT_TRUE(out.verdict.failed());
    EXPECT_TRUE(out.fresh.empty()) << out.fresh.front().identity;
  }
  EXPECT_EQ(target.stats().failed, 3);
  EXPECT_EQ(target.stats().known, 3);
  const std::string identity = read_case_file(case_files_under({kCorpus}).front()).identity;
  int64_t sightings = 0;
  for (const auto& [id, n] : target.stats().sightings) {
    EXPECT_NE(id.find("causal_conv1d/tiled@fixed/"), std::string::npos) << id;
    sightings += n;
  }
  EXPECT_GE(sightings, 3);
}

TEST(FuzzTarget, ANewIdentityIsReportedOnceShrunkAndThenKnown) {
  Case c;
  const auto bytes = corpus_input("tiled@fixed", &c);
  FuzzTarget target(options_for("tiled@fixed", false));
  const FuzzOutcome first = target.run(bytes.data(), bytes.size());
  ASSERT_FALSE(first.fresh.empty());
  const std::string id = first.fresh.front().identity;
  EXPECT_EQ(id.rfind("causal_conv1d/tiled@fixed/", 0), 0u) << id;
  // The minimal case is the corpus's: same identity as the file kept for it.
  std::set<std::string> corpus_ids;
  for (const auto& [i, f] : corpus_identities(kCorpus)) corpus_ids.insert(i);
  EXPECT_TRUE(corpus_ids.count(id)) << id;
  const std::string report = finding_report(first);
  EXPECT_NE(report.find("identity: " + id), std::string::npos);
  EXPECT_NE(report.find("\"schema\": \"kprop-case/2\""), std::string::npos);
  // Reported once: the same input again is a sighting.
  const FuzzOutcome again = target.run(bytes.data(), bytes.size());
  EXPECT_TRUE(again.fresh.empty());
  EXPECT_EQ(target.stats().known, 1);
}

TEST(FuzzTarget, AHuntReportsOnlyItsDefect) {
  const Kernel& k = find_kernel("causal_conv1d");
  Case c;
  const auto bytes = corpus_input("tiled@fixed", &c);  // dh0 of short sequences
  for (const auto& d : k.known_defects()) {
    if (std::find(d.impls.begin(), d.impls.end(), "tiled@fixed") == d.impls.end()) continue;
    FuzzOptions o = options_for("tiled@fixed", false);
    o.hunt = d;
    o.space.property = c.property;  // the corpus case's property, whatever the defect's
    FuzzTarget target(o);
    const FuzzOutcome out = target.run(bytes.data(), bytes.size());
    ASSERT_TRUE(out.verdict.failed());
    for (const auto& f : out.fresh) EXPECT_TRUE(shows(d, f)) << d.name << ": " << f.identity;
    EXPECT_EQ(out.fresh.size() + target.stats().passed_over, 1u) << d.name;
  }
}

TEST(FuzzTarget, TheBinarysNameSelectsTheImplementation) {
  EXPECT_EQ(implementation_from_program_name("causal_conv1d", "/x/fuzz_causal_conv1d"), "");
  EXPECT_EQ(implementation_from_program_name("causal_conv1d", "/x/fuzz_causal_conv1d-tiled_clamped"),
            "tiled@clamped");
  EXPECT_EQ(implementation_from_program_name("causal_conv1d", "fuzz_causal_conv1d-reference"),
            "reference");
  EXPECT_THROW(implementation_from_program_name("causal_conv1d", "fuzz_causal_conv1d-tiled_x"),
               UsageError);
  for (const auto& impl : find_kernel("causal_conv1d").implementations())
    EXPECT_EQ(implementation_from_program_name(
                  "causal_conv1d", "/out/" + fuzz_target_name("causal_conv1d", impl.name)),
              impl.name);
}

TEST(FuzzerLog, TheLastStatisticsLineOfEitherModeIsRead) {
  const std::string fork_mode =
      "INFO: -fork=2: fuzzing in separate process(s)\n"
      "#1000: cov: 10 ft: 20 corp: 3 exec/s 100 oom/timeout/crash: 0/0/0 time: 5s job: 1 dft_time: 0\n"
      "#52413: cov: 1809 ft: 6231 corp: 310 exec/s 1747 oom/timeout/crash: 1/2/3 time: 31s job: 7 dft_time: 0\n"
      "kprop: 5 cases\n";
  const FuzzerStats f = parse_fuzzer_log(fork_mode);
  EXPECT_EQ(f.executions, 52413);
  EXPECT_EQ(f.coverage, 1809);
  EXPECT_EQ(f.features, 6231);
  EXPECT_EQ(f.corpus, 310);
  EXPECT_EQ(f.exec_per_second, 1747);
  EXPECT_EQ(f.ooms, 1);
  EXPECT_EQ(f.timeouts, 2);
  EXPECT_EQ(f.crashes, 3);
  EXPECT_EQ(f.seconds, 31);
  const FuzzerStats p = parse_fuzzer_log(
      "#4096\tpulse  cov: 2995 ft: 5664 corp: 94/1182b lim: 17 exec/s: 1365 rss: 674Mb\n"
      "#7354\tDONE   cov: 3104 ft: 7608 corp: 160/2295b lim: 17 exec/s: 350 rss: 1094Mb\n");
  EXPECT_EQ(p.executions, 7354);
  EXPECT_EQ(p.coverage, 3104);
  EXPECT_EQ(p.exec_per_second, 350);
  EXPECT_EQ(parse_fuzzer_log("no statistics yet\n").executions, 0);
}

TEST(Triage, ASignatureWhoseIdentitiesAreKnownIsNotShrunkAgain) {
  Case c;
  corpus_input("tiled@fixed", &c);
  const Verdict v = evaluate(c);
  ASSERT_TRUE(v.failed());
  Triage triage(TriageOptions{{}, true, 20, {}, {}, nullptr});
  const TriageOutcome first = triage.classify(c, v);
  ASSERT_FALSE(first.fresh.empty());
  for (const auto& f : first.fresh) triage.learn(f.identity);
  int steps = 0;
  const TriageOutcome second = triage.classify(c, v, [&](const ShrinkResult&) { ++steps; });
  EXPECT_TRUE(second.fresh.empty());
  EXPECT_TRUE(second.all_known);
  const TriageOutcome third = triage.classify(c, v, [&](const ShrinkResult&) { ++steps; });
  EXPECT_TRUE(third.all_known);
  EXPECT_EQ(third.known_seen, second.known_seen);
  EXPECT_EQ(third.shrink_seconds, 0.0);  // remembered by signature: no diagnosis at all
}

}  // namespace
}  // namespace kprop

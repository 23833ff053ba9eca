// Case files and the corpus: round trips, strict reading, atomic writes, deduplication
// and bit-identical replay.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "generators/causal_conv1d.h"
#include "harness/case_file.h"
#include "harness/corpus.h"
#include "harness/errors.h"
#include "harness/fingerprint.h"
#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/replay.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kprop-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The clamped leak, as the search shrinks it.
Case clamped_leak() {
  Case c;
  c.impl = "tiled@clamped";
  c.property = "packed";
  c.lengths = {1, 1};
  c.W = 3;
  c.num_cores = 1;
  c.has_bias = false;
  c.has_initial_state = true;
  c.seed = 42;
  return c;
}

// Through a named stream: inserting into a temporary std::ofstream crashed (a call through
// a null pointer) in a binary linked with torch 2.11's libtorch.
void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A file whose JSON differs from a valid one at `pointer`, written and read back.
std::string read_error(const std::string& name, const std::string& pointer, const json& value,
                       bool erase = false) {
  CaseFile f;
  f.c = clamped_leak();
  f.expect["reference"] = Verdict::Status::pass;
  json j = to_json(f);
  if (erase)
    j[json::json_pointer(pointer).parent_pointer()].erase(
        json::json_pointer(pointer).back());
  else
    j[json::json_pointer(pointer)] = value;
  const fs::path path = fresh_dir("bad") / (name + ".json");
  write_text(path, j.dump(2));
  try {
    read_case_file(path.string());
  } catch (const CaseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CaseFileTest, EveryGeneratedCaseRoundTripsThroughJsonAndAFile) {
  CaseSpace space;
  space.dtypes = {DType::float32, DType::bfloat16, DType::float64};
  const fs::path dir = fresh_dir("roundtrip");
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const Case c = draw_causal_conv1d_case(space, seed, 100).value();
    EXPECT_EQ(case_from_json(case_to_json(c), "x"), c);
    CaseFile f;
    f.c = c;
    f.expect = {{"reference", Verdict::Status::pass}, {"tiled@clamped", Verdict::Status::fail}};
    f.signature = "causal_conv1d/tiled/packed/dw";
    f.inputs_fingerprint = "fnv1a64:0123456789abcdef";
    f.provenance = {{"search_seed", seed}, {"date", "2026-11-30"}};
    f.notes = "round trip";
    const std::string path = (dir / "case.json").string();
    write_case_file(path, f);
    const CaseFile back = read_case_file(path);
    EXPECT_EQ(back.c, c);
    EXPECT_EQ(back.expect, f.expect);
    EXPECT_EQ(back.signature, f.signature);
    EXPECT_EQ(back.inputs_fingerprint, f.inputs_fingerprint);
    EXPECT_EQ(back.provenance, f.provenance);
    EXPECT_EQ(back.notes, f.notes);
  }
}

TEST(CaseFileTest, SeedsAboveTwoToThe53RoundTripExactly) {
  Case c = clamped_leak();
  c.seed = 18446744073709551557ULL;
  EXPECT_EQ(case_from_json(json::parse(case_to_json(c).dump()), "x").seed, c.seed);
}

TEST(CaseFileTest, ErrorsNameTheFileAndTheField) {
  auto expect_error = [](const std::string& error, const std::vector<std::string>& parts) {
    for (const auto& part : parts) EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  expect_error(read_error("unknown", "/case/lenghts", json::array({1})),
               {"unknown.json", "case.lenghts", "unknown field"});
  expect_error(read_error("type", "/case/D", "32"), {"type.json", "case.D", "integer"});
  expect_error(read_error("zero", "/case/lengths", json::array({1, 0})),
               {"zero.json", "case.lengths[1]", "zero-length"});
  expect_error(read_error("width", "/case/W", 0), {"width.json", "case.W"});
  expect_error(read_error("elem", "/case/lengths", json::array({1, "x"})),
               {"elem.json", "case.lengths[1]", "integer"});
  expect_error(read_error("dtype", "/case/dtype", "float8"), {"dtype.json", "case.dtype", "float8"});
  expect_error(read_error("split", "/case/splits", json::array({2, 1})),
               {"split.json", "case.splits[0]"});
  expect_error(read_error("schema", "/schema", "kprop-case/9"), {"schema.json", "schema"});
  expect_error(read_error("verdict", "/expect/reference", "passes"),
               {"verdict.json", "expect.reference", "passes"});
  expect_error(read_error("missing", "/case/W", nullptr, true), {"missing.json", "case.W", "missing"});
  expect_error(read_error("top", "/extra", 1), {"top.json", "extra", "unknown field"});

  const fs::path broken = fresh_dir("json") / "broken.json";
  write_text(broken, "{ \"schema\": ");
  try {
    read_case_file(broken.string());
    ADD_FAILURE() << "broken JSON was accepted";
  } catch (const CaseError& e) {
    expect_error(e.what(), {"broken.json", "not valid JSON"});
  }
}

TEST(CaseFileTest, WritesReplaceWholeFilesAndLeaveNoTemporaries) {
  const fs::path dir = fresh_dir("atomic");
  CaseFile f;
  f.c = clamped_leak();
  f.expect["reference"] = Verdict::Status::pass;
  f.notes = std::string(10000, 'x');  // a long first version
  const std::string path = (dir / "sub" / "case.json").string();
  write_case_file(path, f);
  f.notes = "short";
  write_case_file(path, f);
  EXPECT_EQ(read_case_file(path).notes, "short");
  for (const auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();

  // A write that cannot complete leaves what was there, and no temporary.
  const fs::path occupied = dir / "occupied.json";
  fs::create_directories(occupied / "inside");
  EXPECT_THROW(write_case_file(occupied.string(), f), CaseError);
  EXPECT_TRUE(fs::is_directory(occupied / "inside"));
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// A real minimal failure: the first one the search finds in tiled@clamped's packing.
SearchResult clamped_search() {
  SearchOptions o;
  o.impl = "tiled@clamped";
  o.properties = {"packed"};
  o.seed = 3;
  return search(o);
}

TEST(CorpusTest, AFailureIsKeptOnceWithEveryImplementationsVerdict) {
  const fs::path dir = fresh_dir("corpus");
  const SearchResult r = clamped_search();
  ASSERT_TRUE(r.failure);
  const CaseFile f = describe_failure(*r.failure, {{"search_seed", 3}});
  EXPECT_EQ(f.expect.at("tiled@clamped"), Verdict::Status::fail);
  EXPECT_EQ(f.expect.at("tiled@fixed"), Verdict::Status::pass);
  EXPECT_EQ(f.expect.at("tiled"), Verdict::Status::pass);
  EXPECT_EQ(f.expect.at("reference"), Verdict::Status::pass);

  const Kept first = keep(dir.string(), f);
  EXPECT_TRUE(first.written);
  EXPECT_EQ(fs::path(first.path).parent_path().filename(), "causal_conv1d");
  const Kept again = keep(dir.string(), f);
  EXPECT_FALSE(again.written);
  EXPECT_EQ(again.path, first.path);
  EXPECT_EQ(case_files_under({dir.string()}).size(), 1u);
  EXPECT_EQ(find_signature(dir.string(), f.signature), first.path);
}

TEST(ReplayTest, TensorsAreRebuiltBitForBitFromTheSeed) {
  const auto& kernel = find_kernel("causal_conv1d");
  Case c = clamped_leak();
  for (DType d : {DType::float32, DType::bfloat16, DType::float16, DType::float64}) {
    c.dtype = d;
    const Problem a = kernel.materialize(c), b = kernel.materialize(c);
    for (const auto& [name, t] : a.inputs)
      if (t.defined()) EXPECT_TRUE(at::equal(t, b.inputs.get(name))) << name;
    EXPECT_EQ(inputs_fingerprint(a), inputs_fingerprint(b));
  }
  Case other = c;
  other.seed += 1;
  EXPECT_NE(inputs_fingerprint(kernel.materialize(c)),
            inputs_fingerprint(kernel.materialize(other)));
}

TEST(ReplayTest, ARecordedCaseReplaysAsRecordedAndAChangeIsReported) {
  const SearchResult r = clamped_search();
  ASSERT_TRUE(r.failure);
  CaseFile f = describe_failure(*r.failure, {});
  EXPECT_TRUE(replay(f).as_recorded());

  CaseFile wrong_expectation = f;
  wrong_expectation.expect["tiled@clamped"] = Verdict::Status::pass;
  EXPECT_FALSE(replay(wrong_expectation).as_recorded());

  CaseFile other_inputs = f;
  other_inputs.inputs_fingerprint = "fnv1a64:0000000000000000";
  const ReplayResult changed = replay(other_inputs);
  EXPECT_FALSE(changed.fingerprint_matches);
  EXPECT_FALSE(changed.as_recorded());

  CaseFile other_signature = f;
  other_signature.signature = "causal_conv1d/tiled@clamped/packed/db";
  EXPECT_FALSE(replay(other_signature).as_recorded());

  // One implementation alone, judged like check.
  const ReplayResult fixed = replay(f, "tiled@fixed");
  ASSERT_EQ(fixed.runs.size(), 1u);
  EXPECT_EQ(fixed.runs[0].verdict.status, Verdict::Status::pass);
}

}  // namespace
}  // namespace kprop

// Case files and the corpus: round trips, strict reading, atomic writes, deduplication
// and bit-identical replay.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/engine/replay.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/storage/case_file.h"
#include "harness/storage/fingerprint.h"
#include "kernels/causal_conv1d/schema.h"
#include "kernels/causal_conv1d/shape.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Everything a case file records besides its case, read back as written.
void expect_same_record(const CaseFile& back, const CaseFile& f) {
  EXPECT_EQ(back.expect, f.expect);
  EXPECT_EQ(back.signature, f.signature);
  EXPECT_EQ(back.identity, f.identity);
  EXPECT_EQ(back.shrinks_to, f.shrinks_to);
  EXPECT_EQ(back.inputs_fingerprint, f.inputs_fingerprint);
  EXPECT_EQ(back.provenance, f.provenance);
  EXPECT_EQ(back.notes, f.notes);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kprop-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const Schema& conv_schema() { return causal_conv1d::schema(); }

// The clamped leak, as the search shrinks it.
Case clamped_leak() {
  Case base;
  base.impl = "tiled@clamped";
  base.property = "packed";
  base.seed = 42;
  const Case defaults = default_case(conv_schema(), base);
  causal_conv1d::Shape s = causal_conv1d::conv_shape(defaults);
  s.lengths = {1, 1};
  s.W = 3;
  s.num_cores = 1;
  s.has_bias = false;
  s.has_initial_state = true;
  const Case c = causal_conv1d::with_shape(defaults, s);
  EXPECT_TRUE(validate(conv_schema(), c).empty()) << c;
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
  space.impl = "tiled";
  space.dtypes = {DType::float32, DType::bfloat16, DType::float64};
  const fs::path dir = fresh_dir("roundtrip");
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RandomChoices choices(seed);
    const Case c = draw_case(conv_schema(), choices, space);
    ASSERT_TRUE(validate(conv_schema(), c).empty()) << c;
    EXPECT_EQ(case_from_json(case_to_json(c), "x"), c);
    CaseFile f;
    f.c = c;
    f.expect = {{"reference", Verdict::Status::pass}, {"tiled@clamped", Verdict::Status::fail}};
    f.signature = "causal_conv1d/tiled/packed/dw";
    f.identity = "causal_conv1d/tiled/dw {initial_state}";
    f.shrinks_to = "causal_conv1d/tiled-packed-dw.json";
    f.inputs_fingerprint = "fnv1a64:0123456789abcdef";
    f.provenance = {{"search_seed", seed}, {"date", "2026-11-30"}};
    f.notes = "round trip";
    const std::string path = (dir / "case.json").string();
    write_case_file(path, f);
    const CaseFile back = read_case_file(path);
    EXPECT_EQ(back.c, c);
    expect_same_record(back, f);
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
               {"zero.json", "case.lengths[1]: 0 is outside 1..1048576"});
  expect_error(read_error("width", "/case/W", 0), {"width.json", "case.W: 0 is outside 1..256"});
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

// Where error_of_file(name, ...) writes its file.
std::string file_path(const std::string& name) {
  return (fs::temp_directory_path() / ("kprop-test-file-" + name) / (name + ".json")).string();
}

// The message of the CaseError that reading `text` (written to file_path(name)) throws,
// "no error" when it reads.
std::string error_of_file(const std::string& name, const std::string& text) {
  fresh_dir("file-" + name);
  const std::string path = file_path(name);
  write_text(path, text);
  try {
    read_case_file(path);
  } catch (const CaseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CaseFileTest, AVersion2FileRoundTripsWithIdentityAndShrinksTo) {
  CaseFile f;
  f.c = clamped_leak();
  f.expect = {{"reference", Verdict::Status::pass},
              {"tiled@clamped", Verdict::Status::fail},
              {"tiled@fixed", Verdict::Status::pass}};
  f.signature = "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0";
  f.identity = "causal_conv1d/tiled@clamped/dw [taps that read h0] {initial_state}";
  f.shrinks_to = "corpus/causal_conv1d/dw-head-row-leak--tiled-clamped.json";
  f.inputs_fingerprint = "fnv1a64:0123456789abcdef";
  f.provenance = {{"found_by", "kprop shrink upstream.json"}, {"shrink_steps", 3}};
  f.notes = "as reported upstream";
  const std::string path = (fresh_dir("v2") / "v2.json").string();
  write_case_file(path, f);

  // On disk: version 2, with both new fields.
  std::ifstream in(path);
  const json j = json::parse(in);
  EXPECT_EQ(j.at("schema"), "kprop-case/2");
  EXPECT_EQ(j.at("identity"), f.identity);
  EXPECT_EQ(j.at("shrinks_to"), f.shrinks_to);
  EXPECT_EQ(j.at("case").at("lengths"), json::array({1, 1}));
  EXPECT_EQ(j.at("case").at("W"), 3);

  const CaseFile back = read_case_file(path);
  EXPECT_EQ(back.path, path);
  EXPECT_EQ(back.c, f.c);
  expect_same_record(back, f);
  // Written again, it is the same file.
  const std::string again = (fresh_dir("v2-again") / "v2.json").string();
  write_case_file(again, back);
  std::ifstream in_again(again);
  EXPECT_EQ(json::parse(in_again), j);

  // No shrinks_to: the key is left out, and reads back empty.
  f.shrinks_to.clear();
  write_case_file(path, f);
  std::ifstream in2(path);
  EXPECT_FALSE(json::parse(in2).contains("shrinks_to"));
  EXPECT_EQ(read_case_file(path).shrinks_to, "");
}

// A corpus file as kprop wrote it before version 2 (corpus/causal_conv1d/
// dw-head-row-leak--tiled-clamped.json at the time): same flat keys, no identity.
const char* kVersion1File = R"({
  "case": {
    "D": 32, "W": 4, "activation": "none", "bias": false, "distribution": "normal",
    "dtype": "float32", "final_state_grad": false, "impl": "tiled@clamped",
    "initial_state": true, "kernel": "causal_conv1d", "layout": "packed",
    "lengths": [1, 1], "num_cores": 1, "property": "packed",
    "seed": 13005257595902511272, "splits": []
  },
  "expect": {
    "reference": "pass", "tiled": "pass", "tiled@clamped": "fail", "tiled@fixed": "pass",
    "tiled@original": "fail"
  },
  "inputs_fingerprint": "fnv1a64:9b64b4ac2c46ce42",
  "notes": "mask_head_rows = o_t < i_w admits rows past a short segment's end",
  "provenance": { "case_number": 1, "defect": "dw head-row leak", "search_seed": 1 },
  "schema": "kprop-case/1",
  "signature": "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0 [sequence shorter than W]; out-of-bounds load"
})";

TEST(CaseFileTest, AVersion1FileStillReadsAndReplays) {
  const fs::path path = fresh_dir("v1") / "v1.json";
  write_text(path, kVersion1File);
  const CaseFile f = read_case_file(path.string());
  const causal_conv1d::Shape s = causal_conv1d::conv_shape(f.c);
  EXPECT_EQ(f.c.kernel, "causal_conv1d");
  EXPECT_EQ(f.c.impl, "tiled@clamped");
  EXPECT_EQ(f.c.property, "packed");
  EXPECT_EQ(f.c.dtype, DType::float32);
  EXPECT_EQ(f.c.seed, 13005257595902511272ULL);
  EXPECT_EQ(f.c.distribution, Distribution::normal);
  EXPECT_EQ(s.layout, causal_conv1d::Layout::packed);
  EXPECT_EQ(s.lengths, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s.D, 32);
  EXPECT_EQ(s.W, 4);
  EXPECT_EQ(s.num_cores, 1);
  EXPECT_EQ(s.activation, causal_conv1d::Activation::none);
  EXPECT_FALSE(s.has_bias);
  EXPECT_TRUE(s.has_initial_state);
  EXPECT_FALSE(s.has_final_state_grad);
  EXPECT_TRUE(s.splits.empty());
  EXPECT_EQ(f.c.params.size(), conv_schema().params.size());
  EXPECT_EQ(f.expect.size(), 5u);
  EXPECT_EQ(f.expect.at("tiled@original"), Verdict::Status::fail);
  EXPECT_EQ(f.signature,
            "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0 [sequence "
            "shorter than W]; out-of-bounds load");
  EXPECT_EQ(f.identity, "");
  EXPECT_EQ(f.shrinks_to, "");
  EXPECT_EQ(f.inputs_fingerprint, "fnv1a64:9b64b4ac2c46ce42");
  EXPECT_EQ(f.provenance.at("defect"), "dw head-row leak");
  // The same tensors and the same verdicts as when it was written.
  const ReplayResult r = replay(f);
  EXPECT_TRUE(r.fingerprint_matches) << r.fingerprint;
  EXPECT_TRUE(r.as_recorded());

  // Written back, it is a version 2 file of the same case.
  const std::string v2 = (fresh_dir("v1-to-v2") / "v2.json").string();
  write_case_file(v2, f);
  std::ifstream in(v2);
  EXPECT_EQ(json::parse(in).at("schema"), "kprop-case/2");
  EXPECT_EQ(read_case_file(v2).c, f.c);
}

TEST(CaseFileTest, AHandWrittenFileNeedsOnlyItsSchemaAndCase) {
  const json c = case_to_json(clamped_leak());
  for (const char* schema : {"kprop-case/2", "kprop-case/1"}) {
    SCOPED_TRACE(schema);
    const fs::path path = fresh_dir("hand") / "hand.json";
    write_text(path, json{{"schema", schema}, {"case", c}}.dump(2));
    const CaseFile f = read_case_file(path.string());
    EXPECT_EQ(f.c, clamped_leak());
    EXPECT_TRUE(f.expect.empty());
    EXPECT_EQ(f.signature, "");
    EXPECT_EQ(f.identity, "");
    EXPECT_EQ(f.shrinks_to, "");
    EXPECT_EQ(f.inputs_fingerprint, "");
    EXPECT_EQ(f.provenance, json::object());
    EXPECT_EQ(f.notes, "");
    // Written back, it reads again (found by fuzz_case_file: an empty "expect" map was
    // written, which the reader refuses).
    const CaseFile again = parse_case_file(to_json(f).dump(2), "again.json");
    EXPECT_EQ(again.c, f.c);
    EXPECT_TRUE(again.expect.empty());
  }
  // Still strict: the case itself must be there, and the schema. (Top-level fields are
  // named "<file>.<field>", case fields "<file>: case.<field>".)
  EXPECT_EQ(error_of_file("nocase", R"({"schema": "kprop-case/2"})"),
            file_path("nocase") + ".case: missing");
  EXPECT_EQ(error_of_file("noschema", json{{"case", c}}.dump()),
            file_path("noschema") + ".schema: missing");
}

TEST(CaseFileTest, AnUnknownKeyInTheCaseIsAnErrorNamingTheFileAndTheField) {
  for (const std::string key : {"lenghts", "w", "h0", "max_segments", "length"}) {
    SCOPED_TRACE(key);
    json c = case_to_json(clamped_leak());
    c[key] = 1;
    const std::string name = "unknown-" + key;
    EXPECT_EQ(error_of_file(name, json{{"schema", "kprop-case/2"}, {"case", c}}.dump(2)),
              file_path(name) + ": case." + key + ": unknown field");
  }
  // In the file around the case, too.
  CaseFile f;
  f.c = clamped_leak();
  json j = to_json(f);
  j["identiy"] = "x";
  EXPECT_EQ(error_of_file("top", j.dump(2)), file_path("top") + ".identiy: unknown field");
}

// Every parameter of the schema must be written: none is filled in silently (a file that
// lost its W would otherwise test W = 4).
TEST(CaseFileTest, AMissingParameterIsAnErrorNamingIt) {
  for (const std::string schema : {"kprop-case/2", "kprop-case/1"}) {
    for (const auto& spec : conv_schema().params) {
      SCOPED_TRACE(schema + " " + spec.name);
      json c = case_to_json(clamped_leak());
      ASSERT_TRUE(c.contains(spec.name));
      c.erase(spec.name);
      const std::string name = "missing-" + spec.name;
      EXPECT_EQ(error_of_file(name, json{{"schema", schema}, {"case", c}}.dump(2)),
                file_path(name) + ": case." + spec.name + ": missing");
    }
  }
  // And the common fields.
  for (const std::string field : {"kernel", "impl", "property", "dtype", "seed", "distribution"}) {
    SCOPED_TRACE(field);
    json c = case_to_json(clamped_leak());
    c.erase(field);
    EXPECT_EQ(error_of_file("common", json{{"schema", "kprop-case/2"}, {"case", c}}.dump(2)),
              file_path("common") + ": case." + field + ": missing");
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
  o.kernel = "causal_conv1d";
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
  ASSERT_FALSE(f.identity.empty());
  EXPECT_EQ(f.identity, r.failure->identity);
  EXPECT_EQ(find_identity(dir.string(), f.identity), first.path);
  EXPECT_EQ(read_case_file(first.path).identity, f.identity);

  // One defect, one entry: another case with the same identity is not kept again.
  CaseFile same_defect = f;
  same_defect.c.seed += 1;
  same_defect.signature += ", db";
  const Kept third = keep(dir.string(), same_defect);
  EXPECT_FALSE(third.written);
  EXPECT_EQ(third.path, first.path);
  EXPECT_EQ(case_files_under({dir.string()}).size(), 1u);
}

TEST(ReplayTest, TensorsAreRebuiltBitForBitFromTheSeed) {
  const auto& kernel = find_kernel("causal_conv1d");
  Case c = clamped_leak();
  for (DType d : {DType::float32, DType::bfloat16, DType::float16, DType::float64}) {
    c.dtype = d;
    const Problem a = kernel.materialize(c), b = kernel.materialize(c);
    for (const auto& [name, t] : a.inputs) {
      if (t.defined()) {
        EXPECT_TRUE(at::equal(t, b.inputs.get(name))) << name;
      }
    }
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

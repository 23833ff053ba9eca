// Hostile input: a damaged, mutated or absurd case file is a CaseError naming the file
// and the field, never a crash, an uncaught exception or a replay that passes without
// checking. Ends with a deterministic mutation fuzz over every corpus file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "generators/schema.h"
#include "harness/engine/corpus.h"
#include "harness/engine/replay.h"
#include "harness/engine/runner.h"
#include "harness/model/kernel.h"
#include "harness/storage/case_file.h"
#include "tests/source_tree.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kGood =
    source_tree() / "corpus/causal_conv1d/dw-head-row-leak--tiled-clamped.json";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kprop-hostile-" + name);
  std::error_code ec;
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

json good_json() { return json::parse(slurp(kGood)); }

// The CaseError message read_case_file gives for `text`, or "" if it reads.
std::string read_error(const fs::path& dir, const std::string& text) {
  const std::string path = write(dir / "x.json", text);
  try {
    read_case_file(path);
  } catch (const CaseError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(HostileInput, NumberOverflowIsACaseError) {
  const auto dir = fresh_dir("overflow");
  const std::string good = slurp(kGood);
  for (const std::string number : {"1e999", "-1e999", "123456789012345678901234567890"}) {
    const std::string e = read_error(dir, replace_once(good, "\"D\": 32", "\"D\": " + number));
    EXPECT_FALSE(e.empty()) << number;
  }
  // 2^63 is an unsigned integer to nlohmann: out of range for an integer parameter.
  const std::string e =
      read_error(dir, replace_once(good, "\"D\": 32", "\"D\": 9223372036854775808"));
  EXPECT_TRUE(has(e, "case.D")) << e;
}

TEST(HostileInput, DeepNestingIsRefusedBeforeParsing) {
  const auto dir = fresh_dir("nesting");
  const std::string good = slurp(kGood);
  for (const size_t depth : {65, 1000, 100000}) {
    const std::string deep = std::string(depth, '[') + "1" + std::string(depth, ']');
    const std::string e =
        read_error(dir, replace_once(good, "\"D\": 32", "\"D\": " + deep));
    EXPECT_TRUE(has(e, "nested deeper than 64")) << e.substr(0, 300);
  }
  // Brackets inside strings are text, not nesting.
  json j = good_json();
  j["notes"] = std::string(100000, '[');
  EXPECT_EQ(read_error(dir, j.dump()), "");
}

TEST(HostileInput, DuplicateKeysAreAnErrorNamingTheKey) {
  const auto dir = fresh_dir("duplicates");
  const std::string good = slurp(kGood);
  std::string e = read_error(dir, replace_once(good, "\"W\": 4", "\"W\": 4, \"W\": 8"));
  EXPECT_TRUE(has(e, "\"W\" appears twice")) << e;
  e = read_error(dir, replace_once(good, "\"expect\": {", "\"expect\": {\"tiled\": \"fail\", "));
  EXPECT_TRUE(has(e, "\"tiled\" appears twice")) << e;
  e = read_error(dir, replace_once(good, "\"schema\"", "\"notes\": \"a\", \"notes\": \"b\", \"schema\""));
  EXPECT_TRUE(has(e, "\"notes\" appears twice")) << e;
  // The same key in two different objects is fine.
  json j = good_json();
  j["provenance"]["W"] = 4;
  j["provenance"]["nested"] = {{"W", 1}, {"kernel", "x"}};
  EXPECT_EQ(read_error(dir, j.dump()), "");
}

TEST(HostileInput, LongValuesAreQuotedShortly) {
  const auto dir = fresh_dir("long");
  json j = good_json();
  j["case"]["D"] = std::string(100000, 'x');
  std::string e = read_error(dir, j.dump());
  EXPECT_TRUE(has(e, "case.D: must be an integer")) << e.substr(0, 300);
  EXPECT_LT(e.size(), 400u);
  j = good_json();
  j["case"]["dtype"] = std::string(100000, 'y');
  e = read_error(dir, j.dump());
  EXPECT_LT(e.size(), 400u) << e.substr(0, 300);
  j = good_json();
  j["case"][std::string(100000, 'z')] = 1;
  e = read_error(dir, j.dump());
  EXPECT_TRUE(has(e, "unknown field")) << e.substr(0, 300);
  EXPECT_LT(e.size(), 400u);
}

TEST(HostileInput, HugeCasesAreRefusedBeforeAllocating) {
  const auto dir = fresh_dir("huge");
  ::unsetenv("KPROP_MAX_ELEMENTS");
  json j = good_json();
  j["case"]["D"] = 16384;
  j["case"]["lengths"] = std::vector<int64_t>(64, int64_t{1} << 20);  // 2^40 elements
  j["case"]["splits"] = json::array();
  std::string e = read_error(dir, j.dump());
  EXPECT_TRUE(has(e, "case.lengths: x would hold 1099511627776 elements, more than the limit "
                     "16777216 (KPROP_MAX_ELEMENTS raises it)"))
      << e;
  // At the limit: 1024 tokens of 16384 channels is 2^24 elements.
  j["case"]["lengths"] = {512, 512};
  EXPECT_EQ(read_error(dir, j.dump()), "");
  j["case"]["lengths"] = {512, 513};
  EXPECT_TRUE(has(read_error(dir, j.dump()), "more than the limit 16777216"));
  ::setenv("KPROP_MAX_ELEMENTS", "20000000", 1);
  EXPECT_EQ(read_error(dir, j.dump()), "");
  ::unsetenv("KPROP_MAX_ELEMENTS");
  // The initial state [N, D, W] counts too: 64 x 16384 x 256 = 2^28.
  j["case"]["lengths"] = std::vector<int64_t>(64, 1);
  j["case"]["W"] = 256;
  j["case"]["initial_state"] = true;
  e = read_error(dir, j.dump());
  EXPECT_TRUE(has(e, "case.initial_state: initial_state would hold 268435456 elements")) << e;
}

// A search whose limits let the generator draw past the element limit (what `--limit
// max_rows=256 --limit max_cols=1024` did to Liger's GEGLU on the H200) counts those draws
// as rejected and goes on; it used to end the whole run with exit 2.
TEST(HostileInput, DrawsPastTheElementLimitAreRejectedAndTheSearchGoesOn) {
  ::setenv("KPROP_MAX_ELEMENTS", "64", 1);
  SearchOptions options;
  options.kernel = "geglu";
  options.impl = "reference";
  options.properties = {"vs_reference"};
  options.cases = 40;
  options.seed = 3;
  SearchResult r;
  EXPECT_NO_THROW(r = search(options));
  ::unsetenv("KPROP_MAX_ELEMENTS");
  EXPECT_EQ(r.tally.cases, 40);
  const std::string message = "drawn too large to materialize: more than 64 elements in one "
                              "tensor (KPROP_MAX_ELEMENTS)";
  ASSERT_EQ(r.rejections.count(message), 1u);
  EXPECT_GT(r.rejections.at(message), 0);
  EXPECT_EQ(r.tally.rejected, r.rejections.at(message));
  EXPECT_GT(r.tally.passed, 0);  // the small draws still ran
  EXPECT_EQ(r.tally.passed + r.tally.rejected, 40);
}

TEST(HostileInput, FilesystemTroubleIsACaseErrorNamingThePath) {
  const auto dir = fresh_dir("fs");
  // A folder where a file should be (also one named x.json).
  fs::create_directories(dir / "folder.json");
  EXPECT_THROW(read_case_file((dir / "folder.json").string()), CaseError);
  EXPECT_TRUE(case_files_under({(dir / "folder.json").string()}).empty());
  // A symlink loop.
  fs::create_symlink(dir / "b.json", dir / "a.json");
  fs::create_symlink(dir / "a.json", dir / "b.json");
  try {
    read_case_file((dir / "a.json").string());
    ADD_FAILURE() << "a symlink loop read";
  } catch (const CaseError& e) {
    EXPECT_TRUE(has(e.what(), (dir / "a.json").string())) << e.what();
  }
  EXPECT_THROW(case_files_under({(dir / "a.json").string()}), CaseError);
  // Inside a folder the loop is listed, so that a folder replay names it and goes on.
  const auto listed = case_files_under({dir.string()});
  EXPECT_EQ(listed.size(), 2u);  // a.json and b.json, not the folder folder.json
  // A missing file.
  EXPECT_THROW(read_case_file((dir / "missing.json").string()), CaseError);
  // An unreadable folder (root reads everything: nothing to see then).
  if (::geteuid() != 0) {
    fs::create_directories(dir / "locked" / "inner");
    write(dir / "locked" / "inner" / "c.json", slurp(kGood));
    fs::permissions(dir / "locked", fs::perms::none);
    EXPECT_THROW(case_files_under({(dir / "locked").string()}), CaseError);
    fs::permissions(dir / "locked", fs::perms::owner_all);
  }
}

// A case kept from an outside kernel (a GPU kernel) replays against a built-in one on a
// machine without that kernel; without --impl, or for a bogus built-in name, it is refused.
TEST(HostileInput, ReplayWithImplNeedsNoOutsideKernel) {
  const auto dir = fresh_dir("outside");
  json j = good_json();
  const std::string kernel = j["case"]["kernel"];
  const std::string outside = "gpu::" + kernel;
  j["case"]["impl"] = outside;
  j["expect"] = {{outside, "fail"}};
  const auto file = write(dir / "outside.json", j.dump());
  EXPECT_THROW(replay(read_case_file(file)), CaseError);
  const auto r = replay(read_case_file(file), "reference");
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].impl, "reference");
  EXPECT_TRUE(r.fingerprint_matches);
  EXPECT_FALSE(r.runs[0].verdict.failed());
  // --builtin-only: the built-in expectations run, the outside one is left out; a file
  // with no built-in expectation replays nothing, which is refused.
  EXPECT_THROW(replay(read_case_file(file), "", true), CaseError);
  j["expect"]["reference"] = "pass";
  const auto builtin = replay(read_case_file(write(dir / "builtin.json", j.dump())), "", true);
  ASSERT_EQ(builtin.runs.size(), 1u);
  EXPECT_EQ(builtin.runs[0].impl, "reference");
  EXPECT_TRUE(builtin.as_recorded());
  j["expect"]["reference"] = "fail";
  EXPECT_FALSE(
      replay(read_case_file(write(dir / "changed.json", j.dump())), "", true).as_recorded());
  j["expect"]["bogus"] = "pass";
  EXPECT_THROW(replay(read_case_file(write(dir / "bogus.json", j.dump())), "reference"),
               CaseError);
  j["expect"] = {{"gpu::other_kernel", "fail"}};
  EXPECT_THROW(replay(read_case_file(write(dir / "other.json", j.dump())), "reference"),
               CaseError);
}

TEST(HostileInput, ReplayRefusesUnknownImplementations) {
  const auto dir = fresh_dir("impls");
  json j = good_json();
  j["case"]["impl"] = "bogus";
  try {
    replay(read_case_file(write(dir / "impl.json", j.dump())));
    ADD_FAILURE() << "an unknown case.impl replayed";
  } catch (const CaseError& e) {
    EXPECT_TRUE(has(e.what(), "impl.json: case.impl")) << e.what();
  }
  j = good_json();
  j["expect"]["bogus"] = "rejected";
  try {
    replay(read_case_file(write(dir / "expect.json", j.dump())));
    ADD_FAILURE() << "an unknown implementation in expect replayed";
  } catch (const CaseError& e) {
    EXPECT_TRUE(has(e.what(), "expect.json: expect.bogus")) << e.what();
  }
}

TEST(HostileInput, ReplayRefusesAFailingCaseWithoutSignature) {
  const auto dir = fresh_dir("signature");
  json j = good_json();
  j["signature"] = "";
  try {
    replay(read_case_file(write(dir / "nosig.json", j.dump())));
    ADD_FAILURE() << "a failing case with an empty signature replayed";
  } catch (const CaseError& e) {
    EXPECT_TRUE(has(e.what(), "nosig.json: signature: empty")) << e.what();
  }
}

// --- Mutation fuzz --------------------------------------------------------------------

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : next() % n; }
};

// Positions where a number starts (a digit or '-' not preceded by a digit, outside strings).
std::vector<std::pair<size_t, size_t>> numbers_in(const std::string& t) {
  std::vector<std::pair<size_t, size_t>> out;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') { in_string = true; continue; }
    if (isdigit(static_cast<unsigned char>(ch)) || ch == '-') {
      size_t j = i;
      while (j < t.size() && (isdigit(static_cast<unsigned char>(t[j])) || strchr("-+.eE", t[j])))
        ++j;
      out.push_back({i, j - i});
      i = j - 1;
    }
  }
  return out;
}

// Positions of `"key":` (a key and its colon).
std::vector<std::pair<size_t, size_t>> keys_in(const std::string& t) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = t.find("\":"); i != std::string::npos; i = t.find("\":", i + 1)) {
    const size_t open = t.rfind('"', i - 1);
    if (open != std::string::npos) out.push_back({open, i + 2 - open});
  }
  return out;
}

std::string mutate(const std::string& t, Rng& rng, std::string& what) {
  static const std::vector<std::string> hostile_numbers{
      "1e999", "-1e999", "-1", "0", "9223372036854775808", "18446744073709551616",
      "99999999999999999999999", "1e18", "16384", "1048576", "-9223372036854775808",
      "3.5", "-0.0", "1e-999", "\"1\"", "null", "true", "[]", "{}", "[1048576, 1048576]"};
  std::string s = t;
  const auto nums = numbers_in(t);
  const auto keys = keys_in(t);
  switch (rng.below(9)) {
    case 0: {
      const size_t at = rng.below(s.size());
      s.erase(at, 1);
      what = "delete a char";
      break;
    }
    case 1: {
      static const std::string chars = "{}[]\",:0123456789e.-\\ \x00\xff";
      s.insert(s.begin() + rng.below(s.size() + 1), chars[rng.below(chars.size())]);
      what = "insert a char";
      break;
    }
    case 2: {
      s[rng.below(s.size())] = static_cast<char>(rng.below(256));
      what = "replace a byte";
      break;
    }
    case 3: {
      s.resize(rng.below(s.size()));
      what = "truncate";
      break;
    }
    case 4:
    case 5: {
      if (nums.empty()) return s;
      const auto [at, len] = nums[rng.below(nums.size())];
      const std::string& n = hostile_numbers[rng.below(hostile_numbers.size())];
      s.replace(at, len, n);
      what = "number -> " + n;
      break;
    }
    case 6: {
      if (keys.empty()) return s;
      const auto [at, len] = keys[rng.below(keys.size())];
      s.insert(at, s.substr(at, len) + " 1, ");
      what = "duplicate a key";
      break;
    }
    case 7: {
      if (nums.empty()) return s;
      const auto [at, len] = nums[rng.below(nums.size())];
      static const std::vector<size_t> depths{1, 63, 64, 65, 1000, 100000};
      const size_t d = depths[rng.below(depths.size())];
      s.replace(at, len, std::string(d, '[') + s.substr(at, len) + std::string(d, ']'));
      what = "nest " + std::to_string(d) + " deep";
      break;
    }
    case 8: {
      if (keys.empty()) return s;
      const auto [at, len] = keys[rng.below(keys.size())];
      static const std::vector<std::string> values{
          "\"" + std::string(100000, 'a') + "\"", "\"\\ud800\"", "\"\xff\xfe\"", "[", "{",
          "\"tiled@bogus\"", "\"\""};
      const std::string& v = values[rng.below(values.size())];
      s.insert(at + len, " " + v + ", \"zz_" + std::to_string(rng.below(1000)) + "\":");
      what = "insert a hostile value";
      break;
    }
  }
  return s;
}

TEST(HostileInput, MutatedCorpusFilesReadOrFailWithACaseError) {
  const auto dir = fresh_dir("fuzz");
  const auto files = case_files_under({(source_tree() / "corpus").string()});
  ASSERT_FALSE(files.empty());
  // About 30,000 mutated files in all, spread over the corpus as it grows (300 a file when
  // it held 102): the test's time stays as the corpus gains files.
  const int kPerFile = std::max(50, 30000 / static_cast<int>(files.size()));
  std::map<std::string, int> outcomes;
  int tried = 0;
  Rng rng{20261130};
  for (const auto& file : files) {
    const std::string original = slurp(file);
    for (int i = 0; i < kPerFile; ++i) {
      std::string what;
      std::string text = original;
      const int rounds = 1 + static_cast<int>(rng.below(3));
      std::string all;
      for (int r = 0; r < rounds; ++r) {
        text = mutate(text, rng, what);
        all += (all.empty() ? "" : " + ") + what;
      }
      const std::string path = write(dir / "m.json", text);
      ++tried;
      try {
        const CaseFile f = read_case_file(path);
        const auto problems = validate(find_kernel(f.c.kernel).schema(), f.c);
        EXPECT_TRUE(problems.empty()) << all << ": read but invalid: " << problems.front();
        ++outcomes["read, valid"];
      } catch (const CaseError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos)
            << all << ": " << std::string(e.what()).substr(0, 200);
        ++outcomes["CaseError"];
      } catch (const std::exception& e) {
        ADD_FAILURE() << fs::path(file).filename() << ": " << all << ": "
                      << typeid(e).name() << ": " << std::string(e.what()).substr(0, 200);
        ++outcomes["other exception"];
      } catch (...) {
        ADD_FAILURE() << fs::path(file).filename() << ": " << all << ": a non-std exception";
        ++outcomes["other exception"];
      }
    }
  }
  std::cout << "mutated case files tried: " << tried << " (" << files.size()
            << " corpus files)\n";
  for (const auto& [outcome, n] : outcomes) std::cout << "  " << outcome << ": " << n << "\n";
  EXPECT_GE(tried, 3000);
  EXPECT_EQ(outcomes["other exception"], 0);
}

}  // namespace
}  // namespace kprop

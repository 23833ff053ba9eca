// Choice sources and the byte encoding of cases (generators/choices.h, draw.h): what a
// recorder writes a byte reader reads back, `decode(encode(c)) == c` for drawn and corpus
// cases, every byte string decodes to a valid case, zero bytes are the simplest case, and
// the data seed lives in bytes 0..7 alone, and the flags in byte 8. Fixed seeds: every run checks the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/errors.h"
#include "generators/case.h"
#include "generators/choices.h"
#include "generators/draw.h"
#include "generators/schema.h"
#include "harness/storage/case_file.h"
#include "kernels/causal_conv1d/schema.h"
#include "tests/source_tree.h"

namespace kprop {
namespace {

using Bytes = std::vector<uint8_t>;

const Schema& conv() { return causal_conv1d::schema(); }

std::string show(const Case& c) { return summary(conv(), c); }

std::string problems_of(const Case& c) {
  std::string text;
  for (const auto& p : validate(conv(), c)) text += p + "; ";
  return text;
}

Case decode_bytes(const Bytes& bytes, const CaseSpace& space) {
  return decode(conv(), bytes.data(), bytes.size(), space);
}

// Spaces that differ in every way decoding depends on: dtypes, limits, size, pins.
std::vector<CaseSpace> spaces() {
  CaseSpace plain;
  CaseSpace all;
  all.impl = "tiled@clamped";
  all.property = "packed";
  all.dtypes = all_dtypes();
  CaseSpace wide;
  wide.impl = "tiled";
  wide.property = "chunked";
  wide.dtypes = {DType::bfloat16, DType::float16};
  wide.limits = {{"max_segments", 64}, {"max_length", 4096}};
  CaseSpace tiny;
  tiny.limits = {{"max_segments", 1}, {"max_length", 1}};
  tiny.size = 3;
  CaseSpace pinned;
  pinned.dtypes = all_dtypes();
  pinned.fixed = {{"layout", std::string("dense")}, {"W", int64_t{3}}, {"bias", true}};
  return {plain, all, wide, tiny, pinned};
}

struct CorpusCase {
  std::string path;
  Case c;
  CaseSpace space;  // all dtypes, the case's impl and property
};

std::vector<CorpusCase> corpus_cases() {
  std::vector<CorpusCase> out;
  const std::filesystem::path root = source_tree() / "corpus";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    CorpusCase k{entry.path().string(), read_case_file(entry.path().string()).c, {}};
    if (k.c.kernel != conv().kernel) continue;
    k.space.impl = k.c.impl;
    k.space.property = k.c.property;
    k.space.dtypes = all_dtypes();
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(),
            [](const CorpusCase& a, const CorpusCase& b) { return a.path < b.path; });
  return out;
}

// ---- choice sources ------------------------------------------------------------------

// Weight lists: one option, zero weights (never drawn, still encodable), small totals
// (one byte) and totals of 255 or more (two bytes).
std::vector<std::vector<uint32_t>> weight_lists() {
  return {{1},          {0},           {40, 60},          {0, 5, 0, 7},
          {70, 10, 10, 10}, {0, 40, 15, 15, 8, 6, 6, 10, 0},
          {0, 773, 135, 55, 15, 10, 12, 0}, {1, 253}, {1, 254}, {1, 255},
          std::vector<uint32_t>(300, 1), {0, 30000, 30000, 5535}};
}

// Bytes a pick writes: none for one option; one while the non-first weights (zeros
// counted as one) sum below 255; two above.
size_t expected_pick_width(const std::vector<uint32_t>& weights) {
  if (weights.size() <= 1) return 0;
  uint64_t total = 0;
  for (size_t i = 1; i < weights.size(); ++i) total += std::max<uint32_t>(weights[i], 1);
  return total < 255 ? 1 : 2;
}

TEST(ChoicesTest, RecordedPicksReadBackWithTheirWidth) {
  for (const auto& weights : weight_lists()) {
    for (size_t wanted = 0; wanted < weights.size(); ++wanted) {
      ChoiceRecorder recorder;
      ASSERT_EQ(recorder.pick(weights, wanted), wanted);
      const Bytes& bytes = recorder.bytes();
      ASSERT_EQ(bytes.size(), kFirstStreamByte + expected_pick_width(weights))
          << weights.size() << " options";
      ByteChoices reader(bytes.data(), bytes.size());
      EXPECT_EQ(reader.pick(weights, 0), wanted) << weights.size() << " options";
      EXPECT_EQ(reader.consumed(), bytes.size());
      if (wanted == 0) {
        EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; }))
            << "option 0 must be all-zero bytes";
      }
    }
  }
}

TEST(ChoicesTest, PicksWhoseWeightsSumPast65535RoundTrip) {
  // Weights are uint32_t: a schema may weigh in parts per million. The recorder must then
  // write more than two bytes, or option 2 (raw 65536) wraps to option 0.
  for (const std::vector<uint32_t>& weights :
       {std::vector<uint32_t>{0, 65535, 65535, 3}, std::vector<uint32_t>{1, 900000, 100000}}) {
    for (size_t wanted = 0; wanted < weights.size(); ++wanted) {
      ChoiceRecorder recorder;
      recorder.pick(weights, wanted);
      const Bytes& bytes = recorder.bytes();
      ByteChoices reader(bytes.data(), bytes.size());
      EXPECT_EQ(reader.pick(weights, 0), wanted)
          << "option " << wanted << " of weights summing past 65535 came back wrong";
    }
  }
}

TEST(ChoicesTest, EveryRawValueOfAPickIsAnOption) {
  // Bytes never pick out of range, and each option (zero weights too) is reachable.
  for (const auto& weights : weight_lists()) {
    const size_t width = expected_pick_width(weights);
    if (width != 1) continue;
    std::vector<bool> reached(weights.size(), false);
    for (int raw = 0; raw < 256; ++raw) {
      Bytes bytes(kFirstStreamByte, 0);
      bytes.push_back(static_cast<uint8_t>(raw));
      ByteChoices reader(bytes.data(), bytes.size());
      const size_t option = reader.pick(weights, 0);
      ASSERT_LT(option, weights.size());
      reached[option] = true;
    }
    EXPECT_TRUE(std::all_of(reached.begin(), reached.end(), [](bool r) { return r; }))
        << weights.size() << " options";
  }
}

TEST(ChoicesTest, RecordedBelowReadsBackWithTheWidthOfNMinusOne) {
  const std::vector<std::pair<uint64_t, size_t>> widths = {
      {1, 0},           {2, 1},           {255, 1},         {256, 1},
      {257, 2},         {65536, 2},       {65537, 3},       {uint64_t{1} << 32, 4},
      {(uint64_t{1} << 32) + 1, 5},       {uint64_t{1} << 63, 8}, {UINT64_MAX, 8}};
  for (const auto& [n, width] : widths) {
    for (uint64_t wanted : {uint64_t{0}, n / 2, n - 1, n > 7 ? uint64_t{7} : uint64_t{0}}) {
      ChoiceRecorder recorder;
      ASSERT_EQ(recorder.below(n, wanted), wanted);
      const Bytes& bytes = recorder.bytes();
      ASSERT_EQ(bytes.size(), kFirstStreamByte + width) << "n = " << n;
      ByteChoices reader(bytes.data(), bytes.size());
      EXPECT_EQ(reader.below(n, 0), wanted) << "n = " << n;
      EXPECT_EQ(reader.consumed(), bytes.size());
    }
  }
}

TEST(ChoicesTest, ReadsBelowNStayBelowN) {
  std::mt19937_64 rng(5);
  for (uint64_t n : {uint64_t{3}, uint64_t{100}, uint64_t{300}, uint64_t{1} << 20}) {
    for (int i = 0; i < 500; ++i) {
      Bytes bytes(16);
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      ByteChoices reader(bytes.data(), bytes.size());
      EXPECT_LT(reader.below(n, 0), n);
    }
  }
}

TEST(ChoicesTest, TheDataSeedIsBytesZeroToSevenBigEndian) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x0102030405060708}, UINT64_MAX}) {
    ChoiceRecorder recorder;
    recorder.below(1000, 999);  // decisions before and after do not move it
    EXPECT_EQ(recorder.data_seed(seed), seed);
    recorder.pick({1, 2, 3}, 2);
    const Bytes& bytes = recorder.bytes();
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(bytes[static_cast<size_t>(i)], static_cast<uint8_t>(seed >> (8 * (7 - i))));
    ByteChoices reader(bytes.data(), bytes.size());
    EXPECT_EQ(reader.below(1000, 0), 999u);
    EXPECT_EQ(reader.data_seed(0), seed);
    EXPECT_EQ(reader.pick({1, 2, 3}, 0), 2u);
  }
}

TEST(ChoicesTest, ExhaustedInputReadsZero) {
  const Bytes three = {0x01, 0x02, 0x03};
  ByteChoices reader(three.data(), three.size());
  EXPECT_EQ(reader.data_seed(0), 0x0102030000000000u);
  EXPECT_EQ(reader.pick({1, 2, 3}, 0), 0u);
  EXPECT_EQ(reader.below(1u << 20, 0), 0u);
  EXPECT_EQ(reader.pick(std::vector<uint32_t>(300, 1), 0), 0u);
  EXPECT_EQ(reader.consumed(), kFirstStreamByte + 1 + 3 + 2);  // the cursor still moves by each width

  // Half a two-byte read: the missing low byte reads as zero.
  Bytes half(kFirstStreamByte, 0);
  half.push_back(0x01);
  ByteChoices partial(half.data(), half.size());
  EXPECT_EQ(partial.below(65536, 0), 0x0100u);

  ByteChoices none(nullptr, 0);
  EXPECT_EQ(none.data_seed(0), 0u);
  EXPECT_EQ(none.pick({0, 5, 5}, 0), 0u);
  EXPECT_EQ(none.below(UINT64_MAX, 0), 0u);
}

TEST(ChoicesTest, MixedDecisionsRoundTripInOrder) {
  std::mt19937_64 rng(2024);
  const auto lists = weight_lists();
  for (int trial = 0; trial < 300; ++trial) {
    struct Decision {
      bool is_pick;
      size_t list;
      uint64_t n, value;
    };
    std::vector<Decision> decisions;
    ChoiceRecorder recorder;
    const uint64_t seed = rng();
    recorder.data_seed(seed);
    for (int i = 0, count = static_cast<int>(rng() % 40); i < count; ++i) {
      Decision d{rng() % 2 == 0, rng() % lists.size(), 0, 0};
      if (d.is_pick) {
        d.value = rng() % lists[d.list].size();
        recorder.pick(lists[d.list], d.value);
      } else {
        d.n = 1 + rng() % (uint64_t{1} << (rng() % 64));
        d.value = rng() % d.n;
        recorder.below(d.n, d.value);
      }
      decisions.push_back(d);
    }
    const Bytes& bytes = recorder.bytes();
    ByteChoices reader(bytes.data(), bytes.size());
    EXPECT_EQ(reader.data_seed(0), seed);
    for (const Decision& d : decisions)
      ASSERT_EQ(d.is_pick ? reader.pick(lists[d.list], 0) : reader.below(d.n, 0), d.value)
          << "trial " << trial;
    EXPECT_EQ(reader.consumed(), bytes.size());
  }
}

TEST(ChoicesTest, RecorderRefusesAnImpossibleValue) {
  ChoiceRecorder recorder;
  EXPECT_THROW(recorder.pick({1, 2}, 2), std::logic_error);
  EXPECT_THROW(recorder.below(10, 10), std::logic_error);
  EXPECT_TRUE(recorder.recording());
  EXPECT_FALSE(RandomChoices(1).recording());
}

TEST(ChoicesTest, RandomChoicesFollowTheWeightsAndRepeatPerSeed) {
  RandomChoices a(77), b(77), c(78);
  std::vector<long> counts(4, 0);
  bool differs = false;
  for (int i = 0; i < 20000; ++i) {
    const size_t x = a.pick({0, 10, 0, 30}, 0);
    ASSERT_EQ(x, b.pick({0, 10, 0, 30}, 0));
    differs |= x != c.pick({0, 10, 0, 30}, 0);
    ++counts[x];
    ASSERT_LT(a.below(7, 0), 7u);
    b.below(7, 0);
    c.below(7, 0);
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(counts[0], 0) << "a zero weight was drawn";
  EXPECT_EQ(counts[2], 0) << "a zero weight was drawn";
  EXPECT_NEAR(counts[3] / 20000.0, 0.75, 0.02);
  EXPECT_EQ(a.pick({0, 0}, 1), 0u);  // nothing to draw: the simplest
  EXPECT_EQ(a.below(1, 0), 0u);
}

// ---- encode and decode ---------------------------------------------------------------

TEST(EncodingTest, DecodeOfEncodeIsTheCaseForDrawnCases) {
  const auto all = spaces();
  int round_trips = 0;
  for (int i = 0; i < 10000; ++i) {
    CaseSpace space = all[static_cast<size_t>(i) % all.size()];
    space.size = i % 101;
    RandomChoices choices(900000 + static_cast<uint64_t>(i));
    const Case c = draw_case(conv(), choices, space);
    const Bytes bytes = encode(conv(), c, space);
    ByteChoices reader(bytes.data(), bytes.size());
    const Case again = draw_case(conv(), reader, space);
    ASSERT_EQ(again, c) << show(c) << " came back as " << show(again);
    // Tight: no byte is written that decoding does not read.
    ASSERT_EQ(reader.consumed(), bytes.size()) << show(c);
    ++round_trips;
  }
  EXPECT_EQ(round_trips, 10000);
}

TEST(EncodingTest, DecodeOfEncodeIsTheCaseForCorpusCases) {
  const auto corpus = corpus_cases();
  ASSERT_GE(corpus.size(), 5u) << "corpus/ not found under " << source_tree();
  for (const auto& k : corpus) {
    SCOPED_TRACE(k.path);
    ASSERT_TRUE(validate(conv(), k.c).empty()) << problems_of(k.c);
    const Bytes bytes = encode(conv(), k.c, k.space);
    EXPECT_EQ(decode_bytes(bytes, k.space), k.c);
  }
}

TEST(ChoicesTest, RandomFlagsDrawAsTheirPickDoes) {
  // Searches keep their random stream: a flag is the pick it replaced, draw for draw.
  RandomChoices a(99), b(99);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t simplest_weight = static_cast<uint32_t>(i % 101);
    ASSERT_EQ(a.flag(simplest_weight, 100 - simplest_weight, false),
              b.pick({simplest_weight, 100 - simplest_weight}, 0) == 1)
        << "draw " << i;
  }
  EXPECT_EQ(a.next(), b.next());
}

TEST(ChoicesTest, TheFirstEightFlagsAreTheBitsOfByteEight) {
  for (unsigned pattern = 0; pattern < 1024; pattern += 37) {
    ChoiceRecorder recorder;
    for (int k = 0; k < 10; ++k) recorder.flag(50, 50, (pattern >> k) & 1);
    const Bytes& bytes = recorder.bytes();
    EXPECT_EQ(bytes[kFlagByte], pattern & 0xFF);
    ASSERT_EQ(bytes.size(), kFirstStreamByte + 2) << "flags 9 and 10 are stream picks";
    ByteChoices reader(bytes.data(), bytes.size());
    for (int k = 0; k < 10; ++k)
      EXPECT_EQ(reader.flag(50, 50, false), ((pattern >> k) & 1) == 1) << "flag " << k;
    EXPECT_EQ(reader.consumed(), bytes.size());
  }
}

TEST(EncodingTest, AFlagIsOneBitNearTheFrontWhereverTheSchemaDrawsIt) {
  // Toggling the k-th flag of a case is toggling bit k of byte 8, and a case that
  // differs from the simplest by one flag needs no byte after it: libFuzzer's short
  // inputs reach every flag, the schema's last ones too.
  CaseSpace space;
  const Case simplest = decode(conv(), nullptr, 0, space);
  std::vector<std::string> flags;
  for (const auto& spec : conv().params)
    if (spec.type == ParamType::flag) flags.push_back(spec.name);
  ASSERT_GE(flags.size(), 3u);
  for (size_t k = 0; k < flags.size(); ++k) {
    SCOPED_TRACE(flags[k]);
    Bytes bytes(kFlagByte + 1, 0);
    bytes[kFlagByte] = static_cast<uint8_t>(1u << k);
    const Case c = decode_bytes(bytes, space);
    for (size_t j = 0; j < flags.size(); ++j)
      EXPECT_EQ(c.flag(flags[j]), simplest.flag(flags[j]) != (j == k)) << flags[j];
    Bytes again = encode(conv(), c, space);
    while (!again.empty() && again.back() == 0) again.pop_back();
    EXPECT_EQ(again, bytes) << show(c);
  }
}

TEST(EncodingTest, HandMadeCasesOffTheDrawnEdgesRoundTrip) {
  // Values random draws never take (W = 200, D = 33, 64 segments, a length of 2^20) are
  // still encodable: the whole-bounds option covers them.
  Case base;
  base.impl = "tiled";
  Case c = simplest_case(conv(), base);
  c.set("W", int64_t{200});
  c.set("D", int64_t{33});
  c.set("num_cores", int64_t{4096});
  std::vector<int64_t> lengths(64, 3);
  lengths[5] = int64_t{1} << 20;
  c.set("lengths", lengths);
  c.set("splits", std::vector<int64_t>(64, 2));
  c.seed = UINT64_MAX;
  c.distribution = Distribution::small_integers;
  ASSERT_TRUE(validate(conv(), c).empty()) << problems_of(c);
  CaseSpace space;
  space.impl = "tiled";
  space.size = 0;  // the ranges collapse; the encoding must not depend on them
  EXPECT_EQ(decode_bytes(encode(conv(), c, space), space), c);
}

// The simplest case a space can hold (data seed 0, the space's first dtype).
Case simplest_of(const CaseSpace& space) {
  Case base;
  base.impl = space.impl;
  base.property = space.property;
  base.dtype = space.dtype_choices().front();
  base.seed = 0;
  return simplest_case(conv(), base);
}

TEST(EncodingTest, TheSimplestCaseIsAllZeroBytes) {
  for (const CaseSpace& space : spaces()) {
    if (!space.fixed.empty()) continue;
    const Case simplest = simplest_of(space);
    const Bytes bytes = encode(conv(), simplest, space);
    EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; }))
        << show(simplest);
  }
}

TEST(EncodingTest, ZeroBytesAndEmptyInputDecodeToTheSimplestCase) {
  for (const CaseSpace& space : spaces()) {
    if (!space.fixed.empty()) continue;
    const Case simplest = simplest_of(space);
    EXPECT_EQ(decode(conv(), nullptr, 0, space), simplest);
    for (size_t n = 0; n <= 300; n += 7)
      EXPECT_EQ(decode_bytes(Bytes(n, 0), space), simplest) << n << " zero bytes";
  }
}

void expect_decodes_validly(const Bytes& bytes, const CaseSpace& space, const char* what) {
  Case c;
  try {
    c = decode_bytes(bytes, space);
  } catch (const std::exception& e) {
    FAIL() << what << ": decode threw " << e.what();
  }
  ASSERT_TRUE(validate(conv(), c).empty()) << what << ": " << problems_of(c) << " in " << show(c);
  EXPECT_EQ(c.impl, space.impl);
  EXPECT_EQ(c.property, space.property);
  const auto dtypes = space.dtype_choices();
  EXPECT_NE(std::find(dtypes.begin(), dtypes.end(), c.dtype), dtypes.end());
  for (const auto& [name, value] : space.fixed) EXPECT_EQ(c.params.at(name), value) << name;
}

TEST(EncodingTest, EveryByteStringDecodesToAValidCase) {
  const auto all = spaces();
  std::mt19937_64 rng(31337);
  for (int i = 0; i < 20000; ++i) {
    Bytes bytes(rng() % 65);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    // Dense 0xFF runs hit the "never drawn" options and the longest lists.
    if (i % 10 == 0) std::fill(bytes.begin(), bytes.end(), uint8_t{0xFF});
    expect_decodes_validly(bytes, all[static_cast<size_t>(i) % all.size()], "random bytes");
    if (HasFatalFailure()) return;
  }
  for (const CaseSpace& space : all) {
    expect_decodes_validly({}, space, "empty input");
    expect_decodes_validly(Bytes(64, 0), space, "zero bytes");
  }
}

// One random edit of a byte string: overwrite, insert, delete or truncate at or after
// `from`, or append.
Bytes mutate(Bytes bytes, std::mt19937_64& rng, size_t from) {
  const auto at = [&] {
    return bytes.size() > from ? from + rng() % (bytes.size() - from) : bytes.size();
  };
  switch (rng() % 5) {
    case 0:
      if (bytes.size() > from) {
        const size_t i = at();
        bytes[i] = static_cast<uint8_t>(bytes[i] + 1 + rng() % 255);  // a different byte
      }
      break;
    case 1:
      bytes.insert(bytes.begin() + static_cast<long>(at()), static_cast<uint8_t>(rng()));
      break;
    case 2:
      if (bytes.size() > from) bytes.erase(bytes.begin() + static_cast<long>(at()));
      break;
    case 3: bytes.resize(at()); break;
    case 4:
      for (int k = static_cast<int>(rng() % 8); k >= 0; --k)
        bytes.push_back(static_cast<uint8_t>(rng()));
      break;
  }
  return bytes;
}

TEST(EncodingTest, MutatedCorpusCasesDecodeToValidCases) {
  std::mt19937_64 rng(4242);
  long decoded = 0;
  for (const auto& k : corpus_cases()) {
    SCOPED_TRACE(k.path);
    const Bytes original = encode(conv(), k.c, k.space);
    for (int i = 0; i < 500; ++i) {
      Bytes bytes = original;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits)
        bytes = mutate(std::move(bytes), rng, 0);
      expect_decodes_validly(bytes, k.space, "a mutated corpus case");
      if (HasFatalFailure()) return;
      ++decoded;
    }
  }
  EXPECT_GE(decoded, 2500);
}

TEST(EncodingTest, MutationsPastByteSevenKeepTheDataSeed) {
  std::mt19937_64 rng(777);
  std::vector<std::pair<Case, CaseSpace>> cases;
  for (const auto& k : corpus_cases()) cases.emplace_back(k.c, k.space);
  const auto all = spaces();
  for (uint64_t i = 0; i < 200; ++i) {
    RandomChoices choices(i + 1);
    cases.emplace_back(draw_case(conv(), choices, all[i % all.size()]), all[i % all.size()]);
  }
  long changed_structure = 0;
  for (const auto& [c, space] : cases) {
    const Bytes original = encode(conv(), c, space);
    for (int i = 0; i < 40; ++i) {
      const Case m = decode_bytes(mutate(original, rng, 8), space);
      ASSERT_EQ(m.seed, c.seed) << "a mutation past byte 7 changed the data seed of " << show(c);
      changed_structure += m != c;
    }
  }
  // The mutations did reach the structure: the test is not vacuous.
  EXPECT_GT(changed_structure, 1000);
}

TEST(EncodingTest, MutationsOfBytesZeroToSevenChangeOnlyTheDataSeed) {
  std::mt19937_64 rng(8);
  for (const auto& k : corpus_cases()) {
    const Bytes original = encode(conv(), k.c, k.space);
    for (int i = 0; i < 50; ++i) {
      Bytes bytes = original;
      const size_t at = rng() % 8;
      bytes[at] = static_cast<uint8_t>(bytes[at] + 1 + rng() % 255);
      Case m = decode_bytes(bytes, k.space);
      EXPECT_NE(m.seed, k.c.seed);
      m.seed = k.c.seed;
      EXPECT_EQ(m, k.c) << k.path;
    }
  }
}

}  // namespace
}  // namespace kprop

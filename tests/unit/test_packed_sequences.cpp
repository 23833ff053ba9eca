// The packed layout of a declared sequence family (harness/spec/token_sequences.h), on
// linear_attn: a case is dense or packed, the list of lengths follows the layout through
// drawing, validation, fitting and shrinking, and a packed case's inputs are one row with
// its cu_seqlens and one state per sequence.
#include <gtest/gtest.h>

#include <numeric>

#include "generators/choices.h"
#include "generators/draw.h"
#include "generators/schema.h"
#include "generators/shrink.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"
#include "harness/model/sequence_family.h"

namespace kprop {
namespace {

const Kernel& linear_attn() { return find_kernel("linear_attn"); }

Case packed_case(std::vector<int64_t> lengths) {
  const Schema& schema = linear_attn().schema();
  Case c = default_case(schema, Case{});
  c.kernel = "linear_attn";
  c.impl = "recurrent";
  set_param(schema, c, "layout", "packed");
  c.set("lengths", lengths);
  c.set("initial_state", true);
  c.set("final_state", true);
  fit(schema, c);
  return c;
}

TEST(PackedSequences, DrawnCasesAreDenseOrOneRowOfTheirLengths) {
  const Schema& schema = linear_attn().schema();
  CaseSpace space;
  space.impl = "recurrent";
  int packed = 0, several = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    RandomChoices choices(seed);
    const Case c = draw_case(schema, choices, space);
    ASSERT_TRUE(validate(schema, c).empty()) << summary(schema, c);
    const auto& L = c.integers("lengths");
    if (c.choice("layout") == "dense") {
      EXPECT_TRUE(L.empty()) << summary(schema, c);
      continue;
    }
    ++packed;
    several += L.size() > 1;
    ASSERT_FALSE(L.empty()) << summary(schema, c);
    EXPECT_EQ(c.integer("batch"), 1);
    EXPECT_EQ(c.integer("seq"), std::accumulate(L.begin(), L.end(), int64_t{0}));
  }
  EXPECT_GT(packed, 60);   // 30% of draws
  EXPECT_GT(several, 30);  // most packed cases have neighbours to leak into
}

TEST(PackedSequences, TheListFollowsTheLayoutInValidationFittingAndShrinking) {
  const Schema& schema = linear_attn().schema();
  Case dense = packed_case({3, 5});
  dense.set("layout", std::string("dense"));
  const auto problems = validate(schema, dense);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("lengths"), std::string::npos) << problems.front();
  fit(schema, dense);  // a dense case has no lengths; its row keeps the tokens
  EXPECT_TRUE(dense.integers("lengths").empty());
  EXPECT_EQ(dense.integer("seq"), 8);
  EXPECT_TRUE(validate(schema, dense).empty());

  Case empty = packed_case({3, 5});
  empty.set("lengths", std::vector<int64_t>{});
  EXPECT_FALSE(validate(schema, empty).empty());  // a packed case has a sequence

  // Shrinking drops sequences (never the last), shortens them, and tries the dense row.
  bool fewer = false, dense_step = false;
  for (const Case& s : shrink_steps(schema, packed_case({3, 5}), {DType::float32}, {})) {
    ASSERT_TRUE(validate(schema, s).empty()) << summary(schema, s);
    fewer |= s.choice("layout") == "packed" && s.integers("lengths").size() == 1;
    dense_step |= s.choice("layout") == "dense";
  }
  EXPECT_TRUE(fewer);
  EXPECT_TRUE(dense_step);
}

TEST(PackedSequences, APackedCaseIsOneRowWithItsOffsetsAndAStatePerSequence) {
  const Kernel& k = linear_attn();
  const Problem p = k.materialize(packed_case({3, 1, 4}));
  EXPECT_EQ(p.inputs.get("q").sizes(), (std::vector<int64_t>{1, 8, 1, 4}));
  EXPECT_EQ(p.inputs.get("h0").size(0), 3);
  const at::Tensor offsets = p.inputs.get("cu_seqlens");
  ASSERT_TRUE(offsets.defined());
  EXPECT_EQ(offsets.scalar_type(), at::kLong);
  EXPECT_TRUE(offsets.equal(at::tensor(std::vector<int64_t>{0, 3, 4, 8}, at::kLong)));
  // A dense case has none, and no entry that would change its inputs' fingerprint.
  Case dense = packed_case({3});
  dense.set("layout", std::string("dense"));
  fit(k.schema(), dense);
  bool named = false;
  for (const auto& [name, t] : k.materialize(dense).inputs) named |= name == "cu_seqlens";
  EXPECT_FALSE(named);
}

TEST(PackedSequences, SeparatingGivesEachSequenceItsTokensAndState) {
  const Kernel& k = linear_attn();
  const Problem p = k.materialize(packed_case({3, 1, 4}));
  const auto parts = k.sequences()->separate(p);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 3u);
  const Problem& second = (*parts)[1];
  EXPECT_EQ(second.c.choice("layout"), "dense");
  EXPECT_EQ(second.c.integer("seq"), 1);
  EXPECT_FALSE(second.inputs.has("cu_seqlens"));
  EXPECT_TRUE(second.inputs.get("q").equal(p.inputs.get("q").narrow(1, 3, 1)));
  EXPECT_TRUE(second.inputs.get("h0").equal(p.inputs.get("h0").narrow(0, 1, 1)));
  // The packed call gives what the three calls give (the reference of each sequence).
  const auto packed_out = k.forward("kprop_reference", p);
  std::vector<NamedTensors> outs;
  for (const auto& part : *parts) outs.push_back(k.forward("kprop_reference", part));
  const NamedTensors joined = k.sequences()->join_separate_outputs(p, outs);
  EXPECT_TRUE(joined.get("o").allclose(packed_out.get("o")));
  EXPECT_TRUE(joined.get("ht").allclose(packed_out.get("ht")));
  EXPECT_EQ(joined.get("ht").size(0), 3);
}

// chunked cuts a packed row as context parallelism does: inside a sequence (its state
// handed on), on a boundary (nothing handed on) and inside the first sequence.
TEST(PackedSequences, ChunkedCutsThePackedRowAndHandsTheCutSequencesStateOn) {
  const Kernel& k = linear_attn();
  Case c = packed_case({3, 5});
  c.property = "chunked";
  c.set("normalize", true);
  for (int64_t split : {4, 3, 1, 7}) {
    c.set("split", split);
    SCOPED_TRACE("split " + std::to_string(split));
    const auto ch = k.sequences()->split(k.materialize(c));
    ASSERT_TRUE(ch);
    const auto& first = ch->first.c.integers("lengths");
    EXPECT_EQ(std::accumulate(first.begin(), first.end(), int64_t{0}), split);
    EXPECT_EQ(evaluate(c).status, Verdict::Status::pass);
    // A backward that drops dht is seen through the handed-on state's gradient: where the
    // cut falls inside a sequence, and only there.
    Case planted = c;
    planted.impl = "recurrent@final_state_detached";
    EXPECT_EQ(evaluate(planted).status, split == 3 ? Verdict::Status::pass : Verdict::Status::fail);
  }
  c.set("split", 4);
  const auto ch = k.sequences()->split(k.materialize(c));
  EXPECT_EQ(ch->first.c.integers("lengths"), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(ch->second.c.integers("lengths"), (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace kprop

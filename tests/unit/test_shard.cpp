// Shards of a nightly run (harness/nightly/shard.h): the index and count come from --shard
// or an engine's environment, bad values are refused naming where they came from, and the
// shards of one run split its fuzz targets and its search cases with no gap and no overlap.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/errors.h"
#include "harness/nightly/shard.h"

namespace kprop {
namespace {

Environment with(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

const Environment no_environment = with({});

void expect_refused(const std::string& option, const Environment& environment,
                    const std::string& names) {
  try {
    shard_from(option, environment);
    ADD_FAILURE() << "accepted: '" << option << "'";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(ShardFrom, TheOptionNamesIndexAndCount) {
  const Shard s = shard_from("2/8", no_environment);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.folder_name(), "shard-3-of-8");
  EXPECT_TRUE(s.sharded());
  EXPECT_FALSE(shard_from("", no_environment).sharded());
  // One shard of one is still a shard: an array of one task writes where one of eight would.
  EXPECT_TRUE(shard_from("0/1", no_environment).sharded());
  EXPECT_EQ(shard_from("0/1", no_environment).folder_name(), "shard-1-of-1");
}

TEST(ShardFrom, EachEnginesVariablesGiveTheShard) {
  // Slurm: --array=1-8 hands task 3 its place 2 in the array; --array=0-14:2, task 6, 3.
  Shard s = shard_from("", with({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                 {"SLURM_ARRAY_TASK_COUNT", "8"}}));
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  EXPECT_NE(s.source.find("SLURM_ARRAY_TASK_ID=3"), std::string::npos) << s.source;
  s = shard_from("", with({{"SLURM_ARRAY_TASK_ID", "6"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                           {"SLURM_ARRAY_TASK_STEP", "2"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}));
  EXPECT_EQ(s.index, 3);
  s = shard_from("", with({{"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "4"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 4);
  // Kubernetes gives the index alone; "/N" adds the count.
  s = shard_from("/4", with({{"JOB_COMPLETION_INDEX", "3"}}));
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  EXPECT_NE(s.source.find("JOB_COMPLETION_INDEX=3"), std::string::npos) << s.source;
  // --shard I/N wins over the environment.
  s = shard_from("1/2", with({{"GTEST_SHARD_INDEX", "3"}, {"GTEST_TOTAL_SHARDS", "4"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 2);
}

TEST(ShardFrom, BadValuesAreRefusedNamingTheirSource) {
  expect_refused("8/8", no_environment, "--shard 8/8: shard index 8 is not below the count 8");
  expect_refused("x/2", no_environment, "--shard x/2: the index 'x' is not a whole number");
  expect_refused("3", no_environment, "--shard 3: expected I/N");
  expect_refused("1/0", no_environment, "the shard count must be at least 1");
  expect_refused("/4", no_environment, "--shard /4: no index in the environment");
  expect_refused("", with({{"JOB_COMPLETION_INDEX", "2"}}),
                 "JOB_COMPLETION_INDEX=2 comes without a shard count: pass --shard /N");
  expect_refused("", with({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}),
                 "SLURM_ARRAY_TASK_ID='x': expected a whole number");
  expect_refused("", with({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
                 "shard index 9 is not below the count 8");
  expect_refused("", with({{"GTEST_SHARD_INDEX", "-1"}, {"GTEST_TOTAL_SHARDS", "2"}}),
                 "GTEST_SHARD_INDEX='-1'");
}

TEST(Shards, EachShardOfAHostTakesAGpuOfItsOwn) {
  const Shard fourth = shard_from("3/8", no_environment);
  EXPECT_EQ(fourth.device("cuda", 8), "cuda:3");
  EXPECT_EQ(fourth.device("cuda", 2), "cuda:1");
  EXPECT_EQ(fourth.device("cuda", 1), "cuda");      // CUDA_VISIBLE_DEVICES gave it one
  EXPECT_EQ(fourth.device("cuda:5", 8), "cuda:5");  // chosen by hand
  EXPECT_EQ(fourth.device("cpu", 8), "cpu");
  EXPECT_EQ(shard_from("", no_environment).device("cuda", 8), "cuda");  // not a shard
}

TEST(Shards, EveryTargetRunsAndEveryShardFuzzes) {
  for (int count = 1; count <= 9; ++count)
    for (size_t targets = 1; targets <= 7; ++targets) {
      std::map<size_t, std::set<uint64_t>> seeds_of_target;
      for (int index = 0; index < count; ++index) {
        const Shard shard{index, count, ""};
        int runs = 0;
        for (size_t t = 0; t < targets; ++t)
          if (shard.runs_target(t, targets)) {
            ++runs;
            seeds_of_target[t].insert(shard.fuzzer_seed(0));
          }
        EXPECT_GE(runs, 1) << "shard " << index << " of " << count << ", " << targets << " targets";
      }
      size_t copies = 0;
      for (size_t t = 0; t < targets; ++t) {
        ASSERT_EQ(seeds_of_target.count(t), 1u) << "target " << t << " of " << targets << " never runs";
        copies += seeds_of_target[t].size();
        // With no more shards than targets, a target runs once.
        if (size_t(count) <= targets) {
          EXPECT_EQ(seeds_of_target[t].size(), 1u);
        }
      }
      // Each copy of a target has a seed of its own: max(count, targets) copies in all.
      EXPECT_EQ(copies, std::max(size_t(count), targets)) << count << " shards, " << targets << " targets";
    }
}

// Each shard walks its searches as nightly does: a slice from its next case to the end
// of that block. Between them the shards check cases 0..limit of every search once.
TEST(Shards, SearchSlicesCoverEveryCaseOnce) {
  const int64_t limit = 37 * kSearchBlock;
  for (int count = 1; count <= 9; ++count)
    for (size_t search = 0; search < 5; ++search) {
      std::vector<int> checked(limit, 0);
      for (int index = 0; index < count; ++index) {
        const Shard shard{index, count, ""};
        int64_t position = 0, owned = 0;
        while (true) {
          const int64_t first = shard.next_owned_case(search, position);
          if (first >= limit) break;
          const int64_t end = end_of_block(first);
          EXPECT_TRUE(shard.owns_block(search, first / kSearchBlock));
          for (int64_t c = first; c < end; ++c) ++checked[c];
          owned += end - first;
          // A slice that stops at a failure goes on from that case, in the same block.
          position = end;
        }
        // An equal share: within one block per shard of limit / count.
        EXPECT_LE(std::abs(owned - limit / count), kSearchBlock) << index << " of " << count;
      }
      for (int64_t c = 0; c < limit; ++c)
        ASSERT_EQ(checked[c], 1) << "case " << c << " of search " << search << ", " << count << " shards";
    }
  // A position inside an owned block is where the search goes on.
  const Shard shard{1, 3, ""};
  for (int64_t p = 0; p < 10 * kSearchBlock; ++p)
    if (shard.owns_block(0, p / kSearchBlock)) {
      EXPECT_EQ(shard.next_owned_case(0, p), p);
    }
}

}  // namespace
}  // namespace kprop

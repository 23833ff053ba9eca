// One share of a nightly run. The engines that schedule fleets (Slurm job arrays,
// Kubernetes indexed Jobs, a CI matrix, gtest's sharding) hand each worker an index and a
// count; kprop only turns that pair into a deterministic share of the work:
//
// - fuzz targets: shard I runs target t when t % N == I % T (T targets). With N <= T each
//   target runs in one shard; with more shards than targets each target runs in several,
//   every copy with its own libFuzzer seed.
// - searches: every kernel x implementation x property case stream is cut into blocks of
//   kSearchBlock cases, and block b of search j belongs to shard (j + b) % N. The N shards
//   of one seed check between them the cases one unsharded run of that seed checks, each
//   once, and each shard takes an equal share of every property, slow or fast.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace kprop {

inline constexpr int64_t kSearchBlock = 100;

struct Shard {
  int index = 0;       // 0-based
  int count = 1;
  std::string source;  // what named it: "--shard 2/8", "SLURM_ARRAY_TASK_ID=3 ..."; "": none

  // A shard was named, even the one of one (an array of one task): the run then has the
  // layout of a shard (folder_name) whatever the count.
  bool sharded() const { return !source.empty(); }
  // "shard-3-of-8": the shard's folder under the run's --out (1-based, as people count).
  std::string folder_name() const;

  bool runs_target(size_t target, size_t targets) const;
  // libFuzzer's -seed for this shard's copy of a target: distinct across shards, never 0
  // (libFuzzer's "random").
  uint64_t fuzzer_seed(uint64_t run_seed) const;
  bool owns_block(size_t search, int64_t block) const;
  // The first case at or after `position` that this shard checks in search `search`.
  int64_t next_owned_case(size_t search, int64_t position) const;
  // Shards on one host take one GPU each: `--device cuda` is shard I's cuda:(I mod `gpus`,
  // the GPUs it sees) when it sees several; any other device (cuda:K, cpu) stays.
  std::string device(const std::string& wanted, int gpus) const;
};

// The end of the block that holds `position` (where a slice of a search stops).
inline int64_t end_of_block(int64_t position) {
  return (position / kSearchBlock + 1) * kSearchBlock;
}

using Environment = std::function<const char*(const char*)>;

// The shard that `option` (the value of --shard: "I/N" with 0 <= I < N, or "/N" for the
// index alone from the environment) or, when it is empty, the environment names:
// Slurm's SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN, over SLURM_ARRAY_TASK_STEP) of
// SLURM_ARRAY_TASK_COUNT, gtest's GTEST_SHARD_INDEX of GTEST_TOTAL_SHARDS, or Kubernetes'
// JOB_COMPLETION_INDEX (which comes without a count: then "/N" gives it). Nothing set: one
// shard of one. Throws UsageError naming the option or the variable on a bad value.
Shard shard_from(const std::string& option, const Environment& environment);

}  // namespace kprop

#include "harness/nightly/shard.h"

#include <fmt/format.h>

#include <optional>

#include "core/errors.h"

namespace kprop {

namespace {

// A whole number >= 0 written in decimal digits alone; nullopt otherwise.
std::optional<int64_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

int64_t number_in(const Environment& environment, const char* name) {
  const char* value = environment(name);
  const auto n = whole_number(value ? value : "");
  if (!n) throw UsageError(fmt::format("{}='{}': expected a whole number", name, value ? value : ""));
  return *n;
}

bool is_set(const Environment& environment, const char* name) {
  const char* value = environment(name);
  return value && *value;
}

Shard checked(int64_t index, int64_t count, const std::string& source) {
  if (count < 1) throw UsageError(fmt::format("{}: the shard count must be at least 1", source));
  if (index >= count)
    throw UsageError(fmt::format("{}: shard index {} is not below the count {} (indices run "
                                 "from 0)", source, index, count));
  return {int(index), int(count), source};
}

// The index an engine hands its worker, and what said so; nullopt when none is set.
std::optional<std::pair<int64_t, std::string>> index_from(const Environment& environment) {
  if (is_set(environment, "SLURM_ARRAY_TASK_ID")) {
    int64_t id = number_in(environment, "SLURM_ARRAY_TASK_ID");
    // An array --array=1-8 or 0-14:2: the index is the task's place in it.
    const int64_t min = is_set(environment, "SLURM_ARRAY_TASK_MIN")
                            ? number_in(environment, "SLURM_ARRAY_TASK_MIN") : 0;
    const int64_t step = is_set(environment, "SLURM_ARRAY_TASK_STEP")
                             ? number_in(environment, "SLURM_ARRAY_TASK_STEP") : 1;
    if (id < min || step < 1 || (id - min) % step != 0)
      throw UsageError(fmt::format("SLURM_ARRAY_TASK_ID={} is not a task of the array {}..:{}",
                                   id, min, step));
    return std::make_pair((id - min) / step, fmt::format("SLURM_ARRAY_TASK_ID={}", id));
  }
  if (is_set(environment, "JOB_COMPLETION_INDEX"))
    return std::make_pair(number_in(environment, "JOB_COMPLETION_INDEX"),
                          fmt::format("JOB_COMPLETION_INDEX={}", environment("JOB_COMPLETION_INDEX")));
  if (is_set(environment, "GTEST_SHARD_INDEX"))
    return std::make_pair(number_in(environment, "GTEST_SHARD_INDEX"),
                          fmt::format("GTEST_SHARD_INDEX={}", environment("GTEST_SHARD_INDEX")));
  return std::nullopt;
}

// The count the engine of that index hands its worker, if it hands one.
std::optional<int64_t> count_from(const Environment& environment, const std::string& index_source) {
  if (index_source.rfind("SLURM", 0) == 0 && is_set(environment, "SLURM_ARRAY_TASK_COUNT"))
    return number_in(environment, "SLURM_ARRAY_TASK_COUNT");
  if (index_source.rfind("GTEST", 0) == 0 && is_set(environment, "GTEST_TOTAL_SHARDS"))
    return number_in(environment, "GTEST_TOTAL_SHARDS");
  return std::nullopt;
}

}  // namespace

std::string Shard::folder_name() const { return fmt::format("shard-{}-of-{}", index + 1, count); }

bool Shard::runs_target(size_t target, size_t targets) const {
  if (targets == 0) return false;
  return target % size_t(count) == size_t(index) % targets;
}

uint64_t Shard::fuzzer_seed(uint64_t run_seed) const {
  return 1 + uint64_t(index) + uint64_t(count) * run_seed;
}

bool Shard::owns_block(size_t search, int64_t block) const {
  return (int64_t(search % size_t(count)) + block % count) % count == index;
}

int64_t Shard::next_owned_case(size_t search, int64_t position) const {
  int64_t block = position / kSearchBlock;
  if (owns_block(search, block)) return position;
  while (!owns_block(search, block)) ++block;  // at most count - 1 steps
  return block * kSearchBlock;
}

std::string Shard::device(const std::string& wanted, int gpus) const {
  if (wanted != "cuda" || !sharded() || gpus < 2) return wanted;
  return fmt::format("cuda:{}", index % gpus);
}

Shard shard_from(const std::string& option, const Environment& environment) {
  if (!option.empty()) {
    const std::string where = "--shard " + option;
    const auto slash = option.find('/');
    const auto count = slash == std::string::npos ? std::nullopt : whole_number(option.substr(slash + 1));
    if (!count)
      throw UsageError(fmt::format("{}: expected I/N (shard I of N, I from 0) or /N (the index "
                                   "from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or "
                                   "GTEST_SHARD_INDEX)", where));
    const std::string index_text = option.substr(0, slash);
    if (index_text.empty()) {
      const auto index = index_from(environment);
      if (!index)
        throw UsageError(fmt::format("{}: no index in the environment (SLURM_ARRAY_TASK_ID, "
                                     "JOB_COMPLETION_INDEX or GTEST_SHARD_INDEX)", where));
      return checked(index->first, *count, fmt::format("{} with {}", where, index->second));
    }
    const auto index = whole_number(index_text);
    if (!index) throw UsageError(fmt::format("{}: the index '{}' is not a whole number", where, index_text));
    return checked(*index, *count, where);
  }
  const auto index = index_from(environment);
  if (!index) return {};
  const auto count = count_from(environment, index->second);
  if (!count)
    throw UsageError(fmt::format("{} comes without a shard count: pass --shard /N", index->second));
  const std::string count_name =
      index->second.rfind("SLURM", 0) == 0 ? "SLURM_ARRAY_TASK_COUNT" : "GTEST_TOTAL_SHARDS";
  return checked(index->first, *count, fmt::format("{}, {}={}", index->second, count_name, *count));
}

}  // namespace kprop

#include "harness/nightly/nightly.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/engine/triage.h"
#include "harness/execution/implementations.h"
#include "harness/fuzz/fuzz_input.h"
#include "harness/fuzz/fuzz_target.h"
#include "harness/fuzz/seeds.h"
#include "harness/model/kernel.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Target {
  std::string name, kernel, impl;
  std::unique_ptr<FuzzerProcess> process;
  bool done = false;
  Clock::time_point started;
  double allotted = 0;  // its share of the budget
  double seconds = 0;
};

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool is_default(const std::string& kernel, const std::string& impl) {
  const Kernel& k = find_kernel(kernel);
  return impl == k.default_implementation() || impl == k.implementations().front().name;
}

// "causal_conv1d/tiled@clamped/dw [...] {...}" -> kernel and implementation.
std::pair<std::string, std::string> kernel_and_impl(const std::string& identity) {
  const auto a = identity.find('/');
  const auto b = identity.find('/', a + 1);
  if (a == std::string::npos || b == std::string::npos) return {"", ""};
  return {identity.substr(0, a), identity.substr(a + 1, b - a - 1)};
}

class Session {
 public:
  explicit Session(const NightlyConfig& config)
      : config_(config),
        out_(config.out),
        keep_in_(config.keep_in.empty() ? config.corpus : config.keep_in),
        state_(read_run_state((out_ / "state.json").string())),
        seconds_before_(state_.seconds) {
    // Who writes it now, once: a merge tells a shard that runs from one that was killed.
    state_.host = this_host();
    state_.pid = getpid();
    state_.shard_index = config.shard.index;
    state_.shard_count = config.shard.count;
  }

  NightlyResult run();

 private:
  void say(const std::string& line) const {
    if (config_.say) config_.say(line);
  }
  bool interrupted() const { return config_.interrupted && config_.interrupted(); }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void plan();
  std::string target_binary(const std::string& kernel) const;
  void stop_leftover_fuzzers() const;
  void start(Target& t, double seconds, int fork_jobs);
  void process_artifacts();
  void process_artifact(const Target& t, const fs::path& file);
  void search_slice();
  void record(const Failure& f, const std::string& found_by, const std::string& artifact);
  void progress();
  void finish();
  void save_state();

  const NightlyConfig& config_;
  fs::path out_;
  std::string keep_in_;
  RunState state_;
  double seconds_before_;  // of the earlier runs into out_
  NightlyResult result_;
  std::vector<Target> targets_;
  std::vector<NightlySearch> searches_;
  size_t next_search_ = 0;
  std::unique_ptr<Triage> triage_;
  Clock::time_point start_ = Clock::now(), last_progress_ = Clock::now();
};

// The kernel's fuzz target: in `fuzzers`, else in `fallback_fuzzers`; "" when neither has
// it (a speed build that lacks one kernel's target falls back for that kernel alone).
std::string Session::target_binary(const std::string& kernel) const {
  for (const auto& folder : {config_.fuzzers, config_.fallback_fuzzers}) {
    if (folder.empty()) continue;
    const fs::path binary = fs::path(folder) / fuzz_target_name(kernel, "");
    if (fs::exists(binary)) return binary.string();
  }
  return "";
}

void Session::plan() {
  const std::string where = config_.fallback_fuzzers.empty()
                                ? config_.fuzzers
                                : config_.fuzzers + " or " + config_.fallback_fuzzers;
  std::vector<std::string> kernels = config_.kernels;
  if (kernels.empty())
    for (const auto& k : kernel_names())
      if (!target_binary(k).empty()) kernels.push_back(k);
  if (kernels.empty())
    throw UsageError(fmt::format("no fuzz target in {} (fuzz_<kernel>: built by the clang "
                                 "build under build/fuzz)", where));
  std::set<std::string> named;  // the --impl names some kernel of the run has
  for (const auto& kernel : kernels) {
    const Kernel& info = find_kernel(kernel);
    std::vector<std::string> impls;
    if (config_.impls.empty()) {
      for (const auto& i : info.implementations()) impls.push_back(i.name);
    } else {
      for (const auto& name : config_.impls) {
        // An implementation of another kernel named with --impl is that kernel's.
        try {
          impls.push_back(resolve_implementation(kernel, name).name);
          named.insert(name);
        } catch (const UsageError&) {
          if (kernels.size() == 1) throw;
        }
      }
    }
    for (const auto& impl : impls) {
      for (const auto& p : info.properties()) searches_.push_back({kernel, impl, p, {}});
      // A fuzz target is a C++ program that loads the --load libraries: an implementation
      // from outside is fuzzed only when they hold it, which Python modules (imported, or
      // registered in this process by the Python API) rule out.
      if (!is_builtin_implementation(kernel, impl) &&
          (config_.libraries.empty() || !config_.imports.empty())) {
        say(fmt::format("{} of {}: searched, not fuzzed (the fuzz targets run kprop's own "
                        "implementations and the --load libraries', not Python's)", impl, kernel));
        continue;
      }
      // Only an implementation that is fuzzed needs the target: Python adapters alone are
      // searched where no fuzz build is (a GPU machine).
      if (target_binary(kernel).empty())
        throw UsageError(fmt::format("no fuzz target for {} in {}", kernel, where));
      Target t;
      t.name = fuzz_target_name(kernel, impl);
      t.kernel = kernel;
      t.impl = impl;
      targets_.push_back(std::move(t));
    }
  }
  // A shard fuzzes its share of the targets; it searches every search's share of cases
  // (search_slice).
  std::vector<Target> share;
  for (size_t i = 0; i < targets_.size(); ++i)
    if (config_.shard.runs_target(i, targets_.size())) share.push_back(std::move(targets_[i]));
  targets_ = std::move(share);
  for (const auto& t : targets_) state_.targets[t.name] = {t.kernel, t.impl};
  // A name no kernel of the run has is a typo, as it is for check: not a quiet no-op.
  for (const auto& name : config_.impls)
    if (!named.count(name))
      throw UsageError(fmt::format("unknown implementation '{}' of {}", name,
                                   fmt::join(kernels, ", ")));
}

void Session::start(Target& t, double seconds, int fork_jobs) {
  const fs::path work = out_ / "work" / t.name, artifacts = out_ / "artifacts" / t.name;
  fs::create_directories(work);
  fs::create_directories(artifacts);
  fs::create_directories(out_ / "logs");
  fs::create_directories(out_ / "sightings");
  FuzzSpace space{t.kernel, t.impl, "", {}};
  const SeedsWritten seeds = write_seeds(space, {config_.corpus}, work.string());
  FuzzerLaunch launch;
  launch.binary = target_binary(t.kernel);
  launch.arguments = {
      fmt::format("-fork={}", fork_jobs), "-ignore_crashes=1", "-ignore_timeouts=1",
      "-ignore_ooms=1", fmt::format("-max_total_time={}", std::max(1, int(seconds))),
      fmt::format("-timeout={}", std::max(1, int(config_.input_timeout_seconds))),
      fmt::format("-rss_limit_mb={}", config_.rss_limit_mb),
      "-artifact_prefix=" + artifacts.string() + "/", "-print_final_stats=1", work.string()};
  // Shards fuzzing one target each have a seed of their own, and start from the working
  // corpus the earlier nights' shards were merged into (read only: new inputs go to work).
  if (config_.shard.sharded()) {
    launch.arguments.insert(launch.arguments.begin(),
                            fmt::format("-seed={}", config_.shard.fuzzer_seed(config_.seed)));
    const fs::path merged = fs::path(config_.seed_work) / t.name;
    std::error_code ec;
    if (!config_.seed_work.empty() && fs::is_directory(merged, ec)) launch.arguments.push_back(merged.string());
  }
  std::string libraries;
  for (const auto& l : config_.libraries) libraries += (libraries.empty() ? "" : ":") + l;
  std::string refusals;
  for (const auto& r : config_.refusals) refusals += r + "\n";
  launch.environment = {{"KPROP_IMPL", t.impl},
                        {"KPROP_REFUSALS", refusals},
                        {"KPROP_CORPUS", config_.corpus},
                        {"KPROP_LOAD", libraries},
                        {"KPROP_SHRINK_SECONDS", fmt::format("{}", config_.shrink_seconds)},
                        {"KPROP_SIGHTINGS", (out_ / "sightings" / t.name).string()},
                        // kprop's own leaks are not what a nightly run looks for; libtorch
                        // keeps caches that LeakSanitizer would report.
                        {"ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:symbolize=1"}};
  launch.log = (out_ / "logs" / (t.name + ".log")).string();
  t.process = std::make_unique<FuzzerProcess>(launch);
  t.started = Clock::now();
  t.allotted = seconds;
  say(fmt::format("fuzzing {} for {:.0f} s ({} seeds from {}, {} job{})", t.name, seconds,
                  seeds.files.size(), config_.corpus, fork_jobs, fork_jobs == 1 ? "" : "s"));
}

void Session::record(const Failure& f, const std::string& found_by, const std::string& artifact) {
  json provenance{{"found_by", "kprop nightly: " + found_by}, {"found_case", case_to_json(f.found)}};
  if (!artifact.empty()) provenance["artifact"] = artifact;
  if (f.shrunk) provenance["shrink_steps"] = f.shrunk->steps;
  CaseFile file = describe_failure(f, provenance);
  NightlyFinding n;
  n.identity = f.identity;
  n.found_by = found_by;
  n.artifact = artifact;
  n.signature = f.verdict().signature();
  n.minimal = f.minimal();
  n.default_impl = is_default(f.minimal().kernel, f.minimal().impl);
  const Kept kept = try_keep(keep_in_, file);
  n.file = kept.error.empty() ? kept.path : "(not written: " + kept.error + ")";
  // Not lost: the whole case file goes to the output.
  if (!kept.error.empty()) say("could not keep the finding; its case file:\n" + to_json(file).dump(2));
  triage_->learn(f.identity);
  state_.findings.push_back(n);
  save_state();
  say(fmt::format("NEW {} ({}) -> {}", n.identity, found_by, n.file));
}

void Session::process_artifact(const Target& t, const fs::path& file) {
  const std::string bytes = read_all(file);
  const FuzzSpace space{t.kernel, t.impl, "", {}};
  const Case c = decode_fuzz_input(space, reinterpret_cast<const uint8_t*>(bytes.data()),
                                   bytes.size());
  std::string why;
  try {
    const Verdict v = evaluate(c);
    if (v.failed()) {
      TriageOutcome o = triage_->classify(c, v);
      for (const auto& id : o.known_seen) {
        ++result_.sightings[id];
        ++state_.sightings[id];
      }
      for (const auto& f : o.fresh)
        record(f, "libFuzzer " + t.name, file.string());
      return;
    }
    why = fmt::format("{} outside the fuzzer", to_string(v.status));
  } catch (const CaseError& e) {
    why = e.what();
  }
  // A timeout or out-of-memory of the instrumented build, or an error the sanitizers
  // see: kept as a case file beside the log that says what happened.
  CaseFile f;
  f.c = c;
  f.provenance = {{"found_by", "kprop nightly: libFuzzer " + t.name},
                  {"artifact", file.string()},
                  {"log", (out_ / "logs" / (t.name + ".log")).string()}};
  const fs::path kept = out_ / "unreproduced" / (file.filename().string() + ".json");
  write_case_file(kept.string(), f);
  result_.unreproduced.push_back(fmt::format("{}: {} (case: {})", file.string(), why, kept.string()));
  say(fmt::format("{} does not fail outside the fuzzer ({}); case kept in {}", file.filename().string(),
                  why, kept.string()));
}

void Session::process_artifacts() {
  for (const auto& t : targets_) {
    const fs::path dir = out_ / "artifacts" / t.name;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      const std::string key = t.name + "/" + file.filename().string();
      if (state_.processed.count(key) || file.filename().string().find(".tmp") != std::string::npos)
        continue;
      if (interrupted()) return;
      process_artifact(t, file);
      state_.processed.insert(key);
      save_state();
    }
  }
}

// The next slice of the searches, in turn: from where the search got to, to the end of
// that block of cases, skipping the blocks that are other shards' (harness/nightly/shard.h).
void Session::search_slice() {
  if (searches_.empty()) return;
  const size_t index = next_search_++ % searches_.size();
  NightlySearch& s = searches_[index];
  const std::string key = s.kernel + "/" + s.impl + "/" + s.property;
  SearchOptions o;
  o.kernel = s.kernel;
  o.impl = s.impl;
  o.properties = {s.property};
  o.seed = config_.seed;
  o.first_case = config_.shard.next_owned_case(index, state_.positions[key]);
  o.cases = end_of_block(o.first_case);
  o.shrink_seconds = config_.shrink_seconds;
  o.known_identities = triage_->known();  // the corpus's and what this run found
  const SearchResult r = search(o);
  // The search counts a known failure apart; the nightly's tables count it among the cases
  // and the failures too.
  Tally slice = r.tally;
  slice.cases += slice.known;
  slice.failed += slice.known;
  s.tally.add(slice);
  state_.tallies[key].add(slice);
  for (const auto& [id, n] : r.sightings) {
    result_.sightings[id] += n;
    state_.sightings[id] += n;
  }
  for (const auto& f : r.failures)
    record(f, fmt::format("search {} --seed {} case {}", key, config_.seed, f.case_number), "");
  state_.positions[key] = r.failure ? r.failure->case_number : o.cases;
  save_state();
}

void Session::save_state() {
  state_.seconds = seconds_before_ + elapsed();
  write_run_state((out_ / "state.json").string(), state_);
}

void Session::progress() {
  if (Clock::now() - last_progress_ < std::chrono::seconds(10)) return;
  last_progress_ = Clock::now();
  int64_t execs = 0, running = 0;
  for (const auto& t : targets_) {
    execs += parse_fuzzer_log(read_all(out_ / "logs" / (t.name + ".log"))).executions;
    running += t.process && !t.done;
  }
  int64_t cases = 0;
  for (const auto& s : searches_) cases += s.tally.cases;
  say(fmt::format("[{:.0f}/{:.0f} s] fuzzers: {} running, {} executions; searches: {} cases; "
                  "findings: {} new",
                  elapsed(), config_.budget_seconds, running, execs, cases, state_.findings.size()));
}

void Session::finish() {
  for (auto& t : targets_)
    if (t.process) {
      t.process->stop();
      if (!t.done) t.seconds = std::chrono::duration<double>(Clock::now() - t.started).count();
      t.done = true;
    }
  if (!interrupted()) process_artifacts();
  for (const auto& t : targets_) {
    NightlyTarget r;
    r.name = t.name;
    r.kernel = t.kernel;
    r.impl = t.impl;
    r.stats = parse_fuzzer_log(read_all(out_ / "logs" / (t.name + ".log")));
    r.seconds = t.seconds;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out_ / "artifacts" / t.name, ec))
      r.artifacts += e.is_regular_file();
    std::istringstream lines(read_all(out_ / "sightings" / t.name));
    int64_t count = 0;
    std::string identity;
    while (lines >> count && std::getline(lines >> std::ws, identity))
      result_.sightings[identity] += count;
    result_.targets.push_back(r);
  }
  result_.searches = searches_;
  result_.findings = state_.findings;
  for (const auto& f : result_.findings) result_.default_failed |= f.default_impl;
  for (const auto& [identity, count] : result_.sightings) {
    const auto [kernel, impl] = kernel_and_impl(identity);
    if (!kernel.empty() && is_default(kernel, impl)) result_.default_failed = true;
  }
  result_.seconds = elapsed();
  result_.interrupted = interrupted();
  save_state();
}

// A run killed with SIGKILL takes its fuzzers with it (fuzzer_process.h), but the jobs a
// fuzzer forked live on for their last seconds: any process fuzzing into this run's
// artifact folders is stopped before the run starts again.
void Session::stop_leftover_fuzzers() const {
  const std::string mark = "-artifact_prefix=" + (out_ / "artifacts").string() + "/";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_all(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(mark) != std::string::npos && std::stol(pid) != getpid()) {
      kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
      say(fmt::format("stopped process {}, left by an earlier run: {}", pid, cmdline.substr(0, 80)));
    }
  }
}

NightlyResult Session::run() {
  plan();
  fs::create_directories(out_);
  stop_leftover_fuzzers();
  // One triage for the whole run: a defect found by one fuzzer is known to the others.
  std::set<std::string> known;
  for (const auto& [id, file] : corpus_identities(config_.corpus)) known.insert(id);
  // A shard also knows what it kept itself in an earlier run into the same folder.
  if (keep_in_ != config_.corpus)
    for (const auto& [id, file] : corpus_identities(keep_in_)) known.insert(id);
  triage_ = std::make_unique<Triage>(
      TriageOptions{known, true, config_.shrink_seconds, {}, {}, nullptr});
  save_state();  // what merge reads of a shard that has only begun
  process_artifacts();  // left by a run that was killed

  const int slots = std::max(1, config_.jobs - 1);
  const size_t at_once = std::min<size_t>(slots, targets_.size());
  const int fork_jobs = std::max<int>(1, slots / int(std::max<size_t>(1, at_once)));
  // More targets than slots: each gets its share of the budget, in turn.
  const double share = config_.budget_seconds * double(at_once) / double(targets_.size());
  size_t next = 0;
  while (!interrupted() && elapsed() < config_.budget_seconds) {
    size_t running = 0;
    for (auto& t : targets_)
      if (t.process && !t.done) {
        // libFuzzer's fork mode reads -max_total_time only between its jobs, and went on
        // past it for the whole budget, so that the targets after it never ran: a target
        // is stopped a few seconds after its share.
        const double ran = std::chrono::duration<double>(Clock::now() - t.started).count();
        if (t.process->running() && ran > t.allotted + 5) t.process->stop();
        if (t.process->running()) {
          ++running;
        } else {
          t.done = true;
          t.seconds = std::chrono::duration<double>(Clock::now() - t.started).count();
        }
      }
    const double left = config_.budget_seconds - elapsed();
    while (running < at_once && next < targets_.size() && left >= 1) {
      start(targets_[next++], std::min(share, left), fork_jobs);
      ++running;
    }
    process_artifacts();
    if (config_.jobs > 1 || running == 0) {
      search_slice();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    progress();
  }
  finish();
  return result_;
}

}  // namespace

NightlyResult run_nightly(const NightlyConfig& config) { return Session(config).run(); }

}  // namespace kprop

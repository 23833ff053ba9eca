// Fuzzing benchmark: how fast the libFuzzer target runs, and how long it needs to find
// each known defect from an empty corpus, next to kprop's own search (kprop::hunt).
//
//   bench_fuzz [--kernel causal_conv1d] [--seconds 20] [--runs 10] [--cap 300] [--jobs 2]
//              [--defect NAME]... [--impl NAME]... [--part speed|find|all] [--fuzzer PATH]
//              [--mutation bytes|mixed|structured|KIND] [--budget S] [--max-cases 5000]
//              [--one-impl] [--any-only]
//
// The fuzzer: --fuzzer, else fuzz_<kernel> of the speed build (build/fuzz-fast, no
// sanitizers), else of the sanitizer build (build/fuzz). --mutation: its KPROP_MUTATION
// (harness/fuzz/structured_mutator.h).
//
// Part 1, execs/s: per implementation and property (plus "any": byte 0 chooses), one
// fuzzer process from an empty working corpus for --seconds, with kprop's corpus known (so
// known defects are counted, not aborted on); libFuzzer's final stats give the rate, the
// child's CPU time (wait4) the rate per core on a shared machine.
// Part 2, time to find: per known defect and implementation that has it, --runs seeds:
// the fuzzer from an empty corpus with KPROP_HUNT (no identity known) until it aborts on
// that defect (exit 77) or --cap seconds pass; and kprop::hunt with the same seed and at
// most --max-cases cases, as bench_detection does. Fuzzers run as child processes, --jobs at a time (one per core),
// seed by seed across all defects, so that a --budget (no new fuzzer run starts after it)
// leaves every defect with about the same number of runs.
// Prints Markdown; progress goes to stderr.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/execution/own_executable.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"

extern char** environ;

// All relative to this executable's folder (harness/execution/own_executable.h says why).
#ifndef KPROP_FAST_FUZZ_DIR
#define KPROP_FAST_FUZZ_DIR "fuzz-fast"
#endif
#ifndef KPROP_FUZZ_DIR
#define KPROP_FUZZ_DIR "fuzz"
#endif
#ifndef KPROP_SOURCE_CORPUS
#define KPROP_SOURCE_CORPUS "corpus"
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr double kNotFound = std::numeric_limits<double>::infinity();

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Median of all runs, a run that found nothing counting as infinitely slow: the median is
// then finite only when more than half of the runs found the defect.
double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string shown(double median_value, double cap, const char* format = "{:.1f}") {
  if (std::isnan(median_value)) return "-";
  if (std::isinf(median_value)) return std::isnan(cap) ? "–" : fmt::format("> {:.0f}", cap);
  return fmt::format(fmt::runtime(format), median_value);
}

// The number that follows `key` in `line`, if the line holds it.
bool number_after(const std::string& line, const std::string& key, double& value) {
  const size_t at = line.find(key);
  if (at == std::string::npos) return false;
  const char* start = line.c_str() + at + key.size();
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  if (end == start) return false;
  value = v;
  return true;
}

struct FuzzerRun {
  std::map<std::string, std::string> env;  // KPROP_* (every other KPROP_ variable dropped)
  std::vector<std::string> flags;          // libFuzzer's
  double kill_after = 0;                   // seconds; a safety net past -max_total_time
};

struct FuzzerResult {
  int exit_code = -1;  // 77: a finding (libFuzzer's crash exit); 128+n: killed by signal n
  double wall = 0;     // spawn to exit
  double cpu = 0;      // the child's user + system time: what it got of a shared machine
  double inited = NAN; // spawn to libFuzzer's INITED line (libtorch and corpus loaded)
  double executions = NAN, exec_per_second = NAN;  // libFuzzer's final stats
  double found_after = NAN;                        // "kprop: found after N executions"
  double input_limit = NAN;                        // the last "lim:" (len_control)
  double status_executions = NAN, status_exec_per_second = NAN;  // the last status line
  std::string cases_line;  // "kprop: N cases: ... passed, ... rejected ..."
  std::string finding;     // the identity it aborted on
  std::string tail;        // the last lines, for a run that ended unexpectedly
};

// Runs the fuzzer in a fresh folder (an empty working corpus, artifacts kept apart) and
// reads its output as it comes, so that a stuck child is killed and lines are timed.
FuzzerResult run_fuzzer(const std::string& fuzzer, const FuzzerRun& run) {
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("bench_fuzz.{}.{}", getpid(),
                                   std::hash<std::thread::id>()(std::this_thread::get_id()));
  fs::remove_all(dir);
  fs::create_directories(dir / "work");

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string s = *e;
    if (s.rfind("KPROP_", 0) == 0 || s.rfind("ASAN_OPTIONS=", 0) == 0) continue;
    env_strings.push_back(s);
  }
  env_strings.push_back("ASAN_OPTIONS=detect_leaks=0");
  for (const auto& [k, v] : run.env) env_strings.push_back(k + "=" + v);
  std::vector<std::string> args{fuzzer};
  args.insert(args.end(), run.flags.begin(), run.flags.end());
  args.push_back("-print_final_stats=1");
  args.push_back("-artifact_prefix=" + (dir / "").string());
  args.push_back((dir / "work").string());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  FuzzerResult r;
  const auto start = Clock::now();
  pid_t pid = 0;
  int spawned = 0;
  // A build that relinks the fuzzer meanwhile makes it briefly unrunnable (ETXTBSY, ENOENT).
  for (int attempt = 0; attempt < 30; ++attempt) {
    spawned = posix_spawn(&pid, fuzzer.c_str(), &actions, nullptr, argv.data(), envp.data());
    if (spawned != ETXTBSY && spawned != ENOENT) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    fs::remove_all(dir);
    r.tail = fmt::format("cannot start {}: {}\n", fuzzer, std::strerror(spawned));
    return r;
  }

  std::string pending;
  std::vector<std::string> last_lines;
  auto take_line = [&](const std::string& line) {
    double v = 0;
    if (std::isnan(r.inited) && line.find("INITED") != std::string::npos) r.inited = seconds_since(start);
    if (number_after(line, "lim: ", v)) r.input_limit = v;
    // Status lines ("#4096 pulse ... exec/s: 512"): all a killed run leaves.
    if (line.rfind("#", 0) == 0 && number_after(line, "#", v)) r.status_executions = v;
    if (number_after(line, "exec/s: ", v)) r.status_exec_per_second = v;
    if (number_after(line, "stat::number_of_executed_units:", v)) r.executions = v;
    if (number_after(line, "stat::average_exec_per_sec:", v)) r.exec_per_second = v;
    if (number_after(line, "kprop: found after ", v)) r.found_after = v;
    if (line.rfind("kprop: ", 0) == 0 && line.find(" cases: ") != std::string::npos)
      r.cases_line = line.substr(7);
    const std::string found = "ASSERTION FAILED: kprop found ";
    if (line.rfind(found, 0) == 0 && r.finding.empty()) r.finding = line.substr(found.size());
    last_lines.push_back(line);
    if (last_lines.size() > 12) last_lines.erase(last_lines.begin());
  };
  bool killed = false;
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (poll(&p, 1, 200) > 0) {
      char buffer[4096];
      const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
      if (n <= 0) break;  // every writer closed: the child has exited
      pending.append(buffer, n);
      for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
        take_line(pending.substr(0, eol));
        pending.erase(0, eol + 1);
      }
    }
    if (!killed && run.kill_after > 0 && seconds_since(start) > run.kill_after) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  r.wall = seconds_since(start);
  r.cpu = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
          1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  for (const auto& l : last_lines) r.tail += l + "\n";
  fs::remove_all(dir);
  return r;
}

// Runs every job, `jobs` at a time, each on a thread of its own that waits on its child.
void run_all(size_t count, int jobs, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int j = 0; j < std::max(jobs, 1); ++j)
    workers.emplace_back([&] {
      for (size_t i; (i = next++) < count;) {
        try {
          job(i);
        } catch (const std::exception& e) {  // one broken run must not lose the others
          fmt::print(stderr, "bench_fuzz: job {}: {}\n", i, e.what());
        }
      }
    });
  for (auto& w : workers) w.join();
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five;
  in >> one >> five;
  return one + " " + five;
}

struct Options {
  std::string kernel = "causal_conv1d";
  std::string mutation = "bytes";  // KPROP_MUTATION of every fuzzer run
  double seconds = 20;
  int runs = 10;
  double cap = 300;
  int jobs = 2;
  std::string part = "all";
  std::vector<std::string> defects, impls;
  std::string fuzzer;  // empty: the kernel's target, speed build first
  int64_t max_cases = 5000;  // the search's budget per run
  double budget = 0;         // seconds for part 2's fuzzer runs; 0: no limit
  bool one_impl = false;     // part 2: each defect with the first implementation that has it
  bool any_only = false;     // part 1: only the "any" row (byte 0 chooses the property)
};

// Whether `fuzzer` is a target of the speed build (build/fuzz-fast), not the sanitizer one.
bool speed_build(const std::string& fuzzer) {
  return fs::path(fuzzer).parent_path().filename() == fs::path(KPROP_FAST_FUZZ_DIR).filename();
}

bool selected(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "bench_fuzz: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--kernel") o.kernel = value();
    else if (a == "--mutation") o.mutation = value();
    else if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--runs") o.runs = std::stoi(value());
    else if (a == "--cap") o.cap = std::stod(value());
    else if (a == "--jobs") o.jobs = std::stoi(value());
    else if (a == "--part") o.part = value();
    else if (a == "--defect") o.defects.push_back(value());
    else if (a == "--impl") o.impls.push_back(value());
    else if (a == "--fuzzer") o.fuzzer = value();
    else if (a == "--max-cases") o.max_cases = std::stoll(value());
    else if (a == "--budget") o.budget = std::stod(value());
    else if (a == "--one-impl") o.one_impl = true;
    else if (a == "--any-only") o.any_only = true;
    else {
      fmt::print(stderr,
                 "usage: bench_fuzz [--kernel NAME] [--seconds S] [--runs N] [--cap S] [--jobs J] "
                 "[--part speed|find|all] [--defect NAME]... [--impl NAME]... [--fuzzer PATH] "
                 "[--mutation STRATEGY] [--max-cases N] [--budget S] [--one-impl] [--any-only]\n");
      std::exit(2);
    }
  }
  if (o.part != "speed" && o.part != "find" && o.part != "all") {
    fmt::print(stderr, "bench_fuzz: --part {}: speed, find or all\n", o.part);
    std::exit(2);
  }
  if (o.fuzzer.empty()) {
    const std::string target = "fuzz_" + o.kernel;
    o.fuzzer = (kprop::beside_own_executable(KPROP_FAST_FUZZ_DIR) / target).string();
    if (!fs::exists(o.fuzzer)) o.fuzzer = (kprop::beside_own_executable(KPROP_FUZZ_DIR) / target).string();
  }
  return o;
}

void execs_per_second(const Options& o, const kprop::Kernel& kernel) {
  struct Row {
    std::string impl, property;
    FuzzerResult result;
  };
  std::vector<Row> rows;
  for (const auto& impl : kernel.implementations()) {
    if (!selected(o.impls, impl.name)) continue;
    if (!o.any_only)
      for (const auto& property : kernel.properties()) rows.push_back({impl.name, property, {}});
    rows.push_back({impl.name, "", {}});
  }
  // On a shared machine a process gets less than a core: the rate per CPU second is the
  // per-core rate. A run of one input measures the start (libtorch, corpus) to subtract.
  const std::string source_corpus = kprop::beside_own_executable(KPROP_SOURCE_CORPUS).string();
  FuzzerRun start_only;
  start_only.env = {{"KPROP_CORPUS", source_corpus}, {"KPROP_MUTATION", o.mutation}};
  start_only.flags = {"-runs=1"};
  start_only.kill_after = 120;
  const double start_cpu = run_fuzzer(o.fuzzer, start_only).cpu;
  const std::string load_before = load_average();
  run_all(rows.size(), o.jobs, [&](size_t i) {
    FuzzerRun run;
    run.env = {{"KPROP_IMPL", rows[i].impl},
               {"KPROP_CORPUS", source_corpus},
               {"KPROP_MUTATION", o.mutation}};
    if (!rows[i].property.empty()) run.env["KPROP_PROPERTY"] = rows[i].property;
    run.flags = {"-seed=1", fmt::format("-max_total_time={:.0f}", o.seconds)};
    run.kill_after = o.seconds + 40;
    rows[i].result = run_fuzzer(o.fuzzer, run);
    const auto& r = rows[i].result;
    fmt::print(stderr, "speed {} {}: exit {}, {} execs, {} exec/s, {:.1f} s\n", rows[i].impl,
               rows[i].property.empty() ? "any" : rows[i].property, r.exit_code, r.executions,
               r.exec_per_second, r.wall);
    if (r.exit_code != 0) fmt::print(stderr, "{}", r.tail);
  });

  fmt::print("### Executions per second, one fuzzer process (= one core) for {:.0f} s\n\n",
             o.seconds);
  fmt::print("Load average (1, 5 min) before: {}, after: {}; {} processes at once. *exec/s*: "
             "libFuzzer's average (wall clock); *exec per CPU s*: executions / (the child's CPU "
             "time - {:.2f} s, the CPU time of a start and one input): the rate of one core of "
             "its own; *checked*: the share of cases a property compared (passed or failed), "
             "the rest refused by the implementation or skipped by the property.\n\n",
             load_before, load_average(), o.jobs, start_cpu);
  fmt::print("| impl | property | executions | exec/s | exec per CPU s | checked | wall s | "
             "CPU s | final input limit (bytes) | exit | what the cases were |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& row : rows) {
    const auto& r = row.result;
    std::string what = r.cases_line, rate = "aborted", per_cpu = "-", checked = "-";
    double executions = r.executions;
    if (!r.finding.empty()) what += "new defect, aborted: " + r.finding;
    if (r.exit_code == 128 + SIGKILL) {
      // One input ran past the time limit (libFuzzer checks it between inputs only).
      executions = r.status_executions;
      rate = fmt::format("({:.0f} before)", r.status_exec_per_second);
      what = fmt::format("killed after {:.0f} s, one input still running", r.wall);
    }
    double cases = 0, passed = 0, failed = 0;
    if (r.exit_code == 0) {
      rate = fmt::format("{:.0f}", r.exec_per_second);
      per_cpu = fmt::format("{:.0f}", r.executions / std::max(r.cpu - start_cpu, 1e-3));
      if (std::sscanf(r.cases_line.c_str(), "%lf cases: %lf passed, %lf failed", &cases, &passed,
                      &failed) == 3 && cases > 0)
        checked = fmt::format("{:.0f}%", 100 * (passed + failed) / cases);
    }
    fmt::print("| {} | {} | {:.0f} | {} | {} | {} | {:.1f} | {:.1f} | {:.0f} | {} | {} |\n",
               row.impl, row.property.empty() ? "any (byte 0)" : row.property, executions,
               rate, per_cpu, checked, r.wall, r.cpu, r.input_limit, r.exit_code, what);
  }
  fmt::print("\n");
  std::fflush(stdout);  // a part is whole on disk even if a later one is cut short
}

void time_to_find(const Options& o, const kprop::Kernel& kernel) {
  struct Pair {
    kprop::KnownDefect defect;
    std::string impl;
    std::vector<std::optional<FuzzerResult>> fuzzer;  // per seed; empty: not run (budget)
    std::vector<kprop::HuntResult> searches;  // one per seed
  };
  std::vector<Pair> pairs;
  for (const auto& d : kernel.known_defects()) {
    if (!selected(o.defects, d.name)) continue;
    for (const auto& impl : d.impls) {
      if (!selected(o.impls, impl)) continue;
      pairs.push_back({d, impl, {}, {}});
      if (o.one_impl) break;
    }
  }

  // The search first, in this process, with no fuzzer beside it.
  for (auto& p : pairs)
    for (int seed = 1; seed <= o.runs; ++seed) {
      kprop::SearchOptions s;
      s.kernel = kernel.name();
      s.impl = p.impl;
      s.properties = {p.defect.property};
      s.limits = p.defect.limits;
      s.cases = o.max_cases;
      s.seed = seed;
      p.searches.push_back(kprop::hunt(
          s, [&](const kprop::Failure& f) { return kprop::shows(p.defect, f); }));
    }

  std::vector<std::pair<size_t, int>> jobs;  // (pair, seed), seed-major
  for (auto& p : pairs) p.fuzzer.resize(o.runs);
  for (int seed = 1; seed <= o.runs; ++seed)
    for (size_t i = 0; i < pairs.size(); ++i) jobs.emplace_back(i, seed);
  const std::string load_before = load_average();
  const auto start = Clock::now();
  std::mutex print;
  run_all(jobs.size(), o.jobs, [&](size_t j) {
    if (o.budget > 0 && seconds_since(start) > o.budget) return;
    auto& p = pairs[jobs[j].first];
    const int seed = jobs[j].second;
    FuzzerRun run;
    run.env = {{"KPROP_IMPL", p.impl},
               {"KPROP_CORPUS", ""},
               {"KPROP_HUNT", p.defect.name},
               {"KPROP_MUTATION", o.mutation}};
    run.flags = {fmt::format("-seed={}", seed), fmt::format("-max_total_time={:.0f}", o.cap)};
    run.kill_after = o.cap + 120;  // the finding's shrink may run past max_total_time
    FuzzerResult r = run_fuzzer(o.fuzzer, run);
    std::lock_guard<std::mutex> lock(print);
    fmt::print(stderr, "find {} / {} seed {}: exit {} after {:.1f} s ({:.1f} CPU s), {} executions{}\n",
               p.defect.name, p.impl, seed, r.exit_code, r.wall, r.cpu, r.found_after,
               r.finding.empty() ? "" : ": " + r.finding);
    if (r.exit_code != 77 && r.exit_code != 0) fmt::print(stderr, "{}", r.tail);
    p.fuzzer[seed - 1] = std::move(r);
  });

  fmt::print("### Time to find each known defect: libFuzzer vs search ({} seeds each)\n\n",
             o.runs);
  fmt::print("libFuzzer: empty corpus, KPROP_CORPUS= (nothing known), KPROP_HUNT=<defect>, "
             "-seed=1..{}, -max_total_time={:.0f}; {} processes at once; load average (1, 5 "
             "min) before: {}, after: {}. *s to exit* is the wall time from spawn to exit 77 "
             "(libtorch's start and the finding's shrink included), *s after start* the same "
             "from libFuzzer's INITED line, *CPU s* the fuzzer's own CPU time to exit (what the "
             "run would take on a core of its own). Search: kprop::hunt with seed 1..{}, at most {} "
             "cases, in process (libtorch already loaded). Medians over all runs, a run that "
             "found nothing counting as slowest.\n\n",
             o.runs, o.cap, o.jobs, load_before, load_average(), o.runs, o.max_cases);
  const std::string build = speed_build(o.fuzzer) ? "speed" : "sanitizers";
  fmt::print("| defect | impl | property | libFuzzer build, mutation | libFuzzer found | executions | s to exit | "
             "s after start | CPU s | search found | cases | s to find | s to minimal | "
             "libFuzzer median ≤ 60 s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& p : pairs) {
    std::vector<double> executions, wall, cpu, after_start, cases, to_find, to_minimal;
    int fuzzer_found = 0, fuzzer_runs = 0, search_found = 0;
    for (const auto& run : p.fuzzer) {
      if (!run) continue;
      const FuzzerResult& r = *run;
      ++fuzzer_runs;
      const bool found = r.exit_code == 77 && !r.finding.empty();
      fuzzer_found += found;
      executions.push_back(found ? r.found_after : kNotFound);
      wall.push_back(found ? r.wall : kNotFound);
      cpu.push_back(found ? r.cpu : kNotFound);
      after_start.push_back(found && !std::isnan(r.inited) ? r.wall - r.inited : kNotFound);
    }
    for (const auto& h : p.searches) {
      const bool found = h.match.has_value();
      search_found += found;
      cases.push_back(found ? h.cases : kNotFound);
      to_minimal.push_back(found ? h.seconds : kNotFound);
      to_find.push_back(found ? h.seconds - (h.match->shrunk ? h.match->shrunk->seconds : 0)
                              : kNotFound);
    }
    const double median_wall = median(wall);
    fmt::print("| {} | {} | {} | {}, {} | {}/{} | {} | {} | {} | {} | {}/{} | {} | {} | {} | {} |\n",
               p.defect.name, p.impl, p.defect.property, build, o.mutation, fuzzer_found, fuzzer_runs,
               shown(median(executions), NAN, "{:.0f}"), shown(median_wall, o.cap),
               shown(median(after_start), o.cap), shown(median(cpu), o.cap), search_found, o.runs,
               shown(median(cases), NAN, "{:.0f}"), shown(median(to_find), NAN, "{:.3f}"),
               shown(median(to_minimal), NAN, "{:.3f}"), median_wall <= 60                ? "yes"
               : median(cpu) <= 60 ? "no (yes in CPU s)"
                                   : "no");
  }
  fmt::print("\n");
  std::fflush(stdout);  // a part is whole on disk even if a later one is cut short
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!fs::exists(o.fuzzer)) {
    fmt::print(stderr, "bench_fuzz: no fuzzer at {} (build it, or pass --fuzzer)\n", o.fuzzer);
    return 2;
  }
  const auto& kernel = kprop::find_kernel(o.kernel);
  fmt::print("Fuzzer: `{}` (clang, libFuzzer, {}); KPROP_MUTATION={}; search: this "
             "uninstrumented program.\n\n",
             o.fuzzer, speed_build(o.fuzzer) ? "speed build: no sanitizers, coverage in the kernels only"
                            : "sanitizer build: ASan+UBSan",
             o.mutation);
  if (o.part != "find") execs_per_second(o, kernel);
  if (o.part != "speed") time_to_find(o, kernel);
  return 0;
}

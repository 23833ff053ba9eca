// The kprop subcommands: each adds its options to the CLI and runs. Exit codes, for all
// of them: 0 pass, 1 a property failed (or a replayed case did not behave as recorded),
// 2 bad usage or a bad case file.
#pragma once

#include <CLI/CLI.hpp>

#include "generators/param.h"
#include "harness/api/run_options.h"
#include "harness/api/settings.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kprop {

// Options every command shares.
struct CommonOptions {
  bool json = false;                   // machine-readable output on stdout
  std::vector<std::string> libraries;  // operator libraries to load first
  std::vector<std::string> imports;    // then Python modules (the Python entry only)
  std::string device = "cpu";          // where outside implementations run (harness/execution/device.h)
  std::string oracle_device = "auto";  // where the float64 oracle runs (the same header)
};
void add_common_options(CLI::App* cmd, CommonOptions& o);
// Option validators: a finite number in lo..hi (NaN and inf refused), and an integer that
// is not negative (an unsigned option would wrap -1 to 2^64-1).
CLI::Validator finite_in(double lo, double hi);
CLI::Validator not_negative();

// How the implementations from outside (NS::kernel of a --load library) are run and
// judged (harness/execution/isolation.h, harness/engine/property.h): in a worker process with a time limit
// per case, and which of their errors are declared refusals.
struct IsolationOptions {
  std::vector<std::string> refusals;  // --refusal TEXT: an error holding TEXT is a refusal
  double case_timeout = 20;           // --case-timeout SECONDS
  bool in_process = false;            // --no-isolation: run them in kprop's own process
};
void add_isolation_options(CLI::App* cmd, IsolationOptions& o);
// What the command's session is opened with (harness/api/run_options.h): its libraries,
// modules and devices; outside implementations isolated as `isolation` says (none given:
// in-process, as hunt, report, sweep and corpus run them).
RunOptions run_options(const CommonOptions& common, const IsolationOptions* isolation = nullptr);

// The hidden `kprop __worker`: answers cases for an isolating kprop (harness/execution/isolation.h).
struct WorkerOptions {
  std::string device = "cpu";
  std::string oracle_device = "auto";
  std::vector<std::string> libraries;
  std::vector<std::string> imports;
  std::vector<std::string> refusals;
};
void add_worker_command(CLI::App& app, WorkerOptions& options);
int run_worker(const WorkerOptions& options);

struct CheckOptions {
  CommonOptions common;
  IsolationOptions isolation;
  std::string kernel;               // empty: the registry's default
  std::string impl;                 // empty: the kernel's default implementation
  int64_t cases = 1000;
  uint64_t seed = 0;
  std::vector<std::string> properties;
  std::vector<std::string> dtypes;
  std::vector<std::string> set;     // NAME=VALUE: parameters pinned for every case
  std::vector<std::string> limits;  // NAME=N: the schema's generator limits
  std::optional<int64_t> max_segments, max_length;  // shorthands for two limits
  bool no_shrink = false;
  double shrink_seconds = 60;
  std::string corpus = "corpus";  // where new minimal failures are kept
  bool no_corpus = false;
};
void add_check_command(CLI::App& app, CheckOptions& options);
int run_check(const CheckOptions& options);

struct HuntOptions {
  CommonOptions common;
  IsolationOptions isolation;
  std::string kernel;  // empty: the registry's default
  std::vector<std::string> defects;  // names; empty: all known defects of the kernel
  uint64_t seed = 0;
  int64_t cases = 5000;
  std::string corpus = "corpus";
  bool no_corpus = false;  // find and shrink, keep nothing
};
void add_hunt_command(CLI::App& app, HuntOptions& options);
int run_hunt(const HuntOptions& options);

struct ReplayOptions {
  CommonOptions common;
  IsolationOptions isolation;
  std::vector<std::string> paths;  // files or folders
  std::string impl;                // only this implementation, judged like check
  bool builtin_only = false;       // only kprop's own implementations the file names
};
void add_replay_command(CLI::App& app, ReplayOptions& options);
int run_replay(const ReplayOptions& options);

struct ReportOptions {
  CommonOptions common;
  std::string report = "tolerance";
  // tolerance: case files or folders, or a generated batch; precision: the model's name.
  std::vector<std::string> paths;
  std::string kernel;              // empty: the registry's default
  std::string impl;
  int64_t cases = 0;
  uint64_t seed = 0;
  std::vector<std::string> dtypes;
  std::vector<std::string> set;     // NAME=VALUE applied to every case (or the model)
  std::vector<double> rtols;        // empty: the report's own (0 1e-2 1e-1; 1e-2 1e-1)
  std::string markdown_out;         // also write the Markdown here
  std::string json_out;             // also write the JSON here
  // precision only (harness/presentation/precision_report.h)
  std::vector<std::string> shape;   // NAME=VALUE[,NAME=VALUE...]
  std::string scale;                // unscaled (default) or fan_in
  int threads = 0;                  // 0: libtorch's default
};
void add_report_command(CLI::App& app, ReportOptions& options);
int run_report(const ReportOptions& options);
// `kprop report precision MODEL`, and writing a report's files (atomically).
int run_precision_report(const ReportOptions& options);
void write_report_files(const ReportOptions& options, const std::string& markdown,
                        const std::string& json);

struct SweepOptions {
  CommonOptions common;
  std::string kernel;  // empty: the registry's default
  std::string impl;    // empty: the kernel's default implementation
  std::string property = "vs_reference";
  std::string x, y;                 // NAME=VALUES, e.g. W=2,4,8 and tail=16..384*2
  std::vector<std::string> set;     // NAME=VALUE for the base case
  std::string metric = "verdict";
  uint64_t seed = 0;
  std::string markdown_out, svg_out;
};
void add_sweep_command(CLI::App& app, SweepOptions& options);
int run_sweep(const SweepOptions& options);

struct ShrinkOptions {
  CommonOptions common;
  IsolationOptions isolation;
  std::vector<std::string> paths;  // case files (hand-written ones need only their case)
  std::string impl;                // run the case on this implementation instead
  double shrink_seconds = 60;
  std::string corpus = "corpus";
  bool no_corpus = false;
  // Also keep the case itself under this file name, linked to the minimal case of its
  // first symptom: a case as a bug report gave it, beside what kprop shrank it to.
  std::string keep_as;
};
void add_shrink_command(CLI::App& app, ShrinkOptions& options);
int run_shrink(const ShrinkOptions& options);

struct NightlyOptions {
  CommonOptions common;
  IsolationOptions isolation;
  std::vector<std::string> kernels;  // empty: every kernel with a fuzz target
  std::vector<std::string> impls;    // empty: every built-in implementation
  std::string budget = "8h";         // 90s, 30m, 8h
  int jobs = 0;                      // 0: the machine's cores
  std::string corpus = "corpus";
  std::string out;
  std::string fuzzers;               // empty: fuzz/ beside the kprop executable
  uint64_t seed = 0;
  double shrink_seconds = 30;
  std::string shard;                 // "I/N" or "/N"; empty: from the environment, if set
};
void add_nightly_command(CLI::App& app, NightlyOptions& options);
int run_nightly(const NightlyOptions& options);

// `kprop corpus merge` (harness/nightly/merge.h).
struct CorpusMergeOptions {
  CommonOptions common;
  std::vector<std::string> sources;  // shard folders, sharded runs' folders, corpus folders
  std::string into = "corpus";
  std::string out;                   // empty: the sharded run's folder, if one
  std::string fuzzers;               // empty: fuzz-fast/ beside kprop, else fuzz/
};
void add_corpus_command(CLI::App& app, CorpusMergeOptions& options);
int run_corpus_merge(const CorpusMergeOptions& options);

}  // namespace kprop

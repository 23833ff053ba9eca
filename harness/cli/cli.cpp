// kprop's command line as a function: parses argv, runs the command, maps errors to exit
// codes. The `kprop` executable and the Python entry both call it (harness/cli/entry.h).
//
// Exit codes: 0 pass, 1 a property failed, 2 bad usage or a bad case.
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/interrupt.h"

namespace kprop {

int run_cli(const std::vector<std::string>& args) {
  CLI::App app{"kprop: property-based and differential testing of ML compute kernels"};
  app.require_subcommand(1);
  CheckOptions check;
  HuntOptions hunt;
  ReplayOptions replay;
  ReportOptions report;
  SweepOptions sweep;
  ShrinkOptions shrink;
  add_check_command(app, check);
  add_hunt_command(app, hunt);
  add_replay_command(app, replay);
  add_report_command(app, report);
  add_sweep_command(app, sweep);
  add_shrink_command(app, shrink);
  NightlyOptions nightly;
  add_nightly_command(app, nightly);
  CorpusMergeOptions corpus_merge;
  add_corpus_command(app, corpus_merge);
  WorkerOptions worker;  // hidden: the isolated worker (harness/execution/isolation.h)
  add_worker_command(app, worker);
  // Python's alone (python/kprop/repro.py): the script it writes holds a Python adapter's
  // source. Here it says where to run it.
  app.add_subcommand("repro", "write a standalone PyTorch script that reproduces a kept "
                              "finding (python3 -m kprop repro; docs/repro.md)")
      ->allow_extras();
  // One behaviour per option: a repeatable option takes one value per occurrence in every
  // command, so that `check --dtype float32 causal_conv1d` leaves the kernel a positional.
  std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
  for (size_t i = 0; i < commands.size(); ++i)  // and theirs: `corpus merge`
    for (CLI::App* sub : commands[i]->get_subcommands([](CLI::App*) { return true; }))
      commands.push_back(sub);
  for (CLI::App* cmd : commands)
    for (CLI::Option* opt : cmd->get_options([](CLI::Option* o) {
           return o->nonpositional() && o->get_items_expected_max() > 1;
         }))
      opt->allow_extra_args(false);
  try {
    // As main() gets it: the program's name first (CLI11 names the app after it).
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // KPROP_PARSE_ONLY=1: the command line parsed, nothing run (the docs check holds every
  // command line of README.md and docs/ to this parser: tests/docs/check_docs.py).
  if (const char* only = std::getenv("KPROP_PARSE_ONLY"); only && std::string(only) == "1")
    return 0;
  // Each command line starts afresh, also the second one a Python process runs
  // (bench/gpu/steady.py): no earlier interrupt, no earlier calls' time in its profile.
  clear_interrupt();
  CallProfile::reset();
  try {
    if (app.got_subcommand("check")) return run_check(check);
    if (app.got_subcommand("hunt")) return run_hunt(hunt);
    if (app.got_subcommand("replay")) return run_replay(replay);
    if (app.got_subcommand("report")) return run_report(report);
    if (app.got_subcommand("sweep")) return run_sweep(sweep);
    if (app.got_subcommand("shrink")) return run_shrink(shrink);
    if (app.got_subcommand("nightly")) return run_nightly(nightly);
    if (app.got_subcommand("corpus")) return run_corpus_merge(corpus_merge);
    if (app.got_subcommand("__worker")) return run_worker(worker);
    if (app.got_subcommand("repro"))
      throw UsageError("repro runs from Python, where the adapter is: python3 -m kprop repro "
                       "FILE --import MODULE (docs/repro.md)");
  } catch (const UsageError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  } catch (const CaseError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  } catch (const FileError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  }
  return 2;
}

}  // namespace kprop

// kprop: property-based and differential testing of ML compute kernels.
//
// Exit codes: 0 pass, 1 a property failed, 2 bad usage or a bad case.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/errors.h"
#include "kernels/common/dispatch.h"

namespace kprop {

void load_operator_library_or_usage_error(const std::string& path) {
  try {
    load_operator_library(path);
  } catch (const c10::Error& e) {
    throw UsageError(e.what_without_backtrace());
  }
}

}  // namespace kprop

int main(int argc, char** argv) {
  CLI::App app{"kprop: property-based and differential testing of ML compute kernels"};
  app.require_subcommand(1);
  kprop::CheckOptions check;
  kprop::add_check_command(app, check);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("check")) return kprop::run_check(check);
  } catch (const kprop::UsageError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  } catch (const kprop::CaseError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  }
  return 2;
}

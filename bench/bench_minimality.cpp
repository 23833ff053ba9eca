// How minimal are kept cases? For each case file: is it 1-minimal — does no single schema
// step (generators/shrink.h) give a smaller case that still shows the defect it was kept
// for, under its own property? And how many steps does shrinking still take from it?
//
//   bench_minimality PATH...     (case files or folders; kprop-case/1 files read too)
//
// The defect a file was kept for: its identity's symptom (kprop-case/2); for older files,
// the symptom of the known defect its provenance names, else its failure's first symptom.
// Prints Markdown: a row per file and a total.
#include <fmt/format.h>

#include "generators/shrink.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"

namespace {

using namespace kprop;

std::string defect_symptom(const CaseFile& f, const Verdict& v) {
  if (!f.identity.empty()) return symptom_of(f.identity);
  const auto defect = f.provenance.value("defect", std::string());
  for (const auto& d : find_kernel(f.c.kernel).known_defects())
    if (d.name == defect) return d.symptom;
  const auto all = v.symptoms();
  return all.empty() ? std::string() : all.front();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) paths.push_back("corpus");
  fmt::print("| file | property | symptom | 1-minimal | smaller case that still shows it |\n"
             "|---|---|---|---|---|\n");
  int files = 0, minimal = 0;
  for (const auto& path : case_files_under(paths)) {
    const CaseFile f = read_case_file(path);
    const Schema& schema = find_kernel(f.c.kernel).schema();
    const Verdict v = evaluate(f.c);
    const std::string symptom = defect_symptom(f, v);
    if (!v.shows(symptom)) {
      fmt::print("| {} | {} | {} | (does not fail) | |\n", path, f.c.property, symptom);
      continue;
    }
    std::string smaller;
    const auto dtypes = find_property(f.c.property).dtypes();
    for (const Case& candidate : shrink_steps(schema, f.c, dtypes))
      if (evaluate(candidate).shows(symptom)) {
        smaller = summary(schema, candidate);
        break;
      }
    ++files;
    minimal += smaller.empty();
    fmt::print("| {} | {} | {} | {} | {} |\n", path.substr(path.rfind('/') + 1), f.c.property,
               symptom, smaller.empty() ? "yes" : "no", smaller);
  }
  fmt::print("\n{} of {} cases are 1-minimal\n", minimal, files);
  return 0;
}

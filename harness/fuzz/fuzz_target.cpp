#include "harness/fuzz/fuzz_target.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/engine/triage.h"
#include "harness/execution/dispatch.h"
#include "harness/execution/implementations.h"
#include "harness/execution/session.h"
#include "harness/model/kernel.h"

namespace kprop {

namespace fs = std::filesystem;

namespace {

std::string sanitized(const std::string& name) {
  std::string out = name;
  for (auto& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return out;
}

const char* env(const char* name) { return std::getenv(name); }

}  // namespace

std::string fuzz_target_name(const std::string& kernel, const std::string& impl) {
  return impl.empty() ? "fuzz_" + kernel : "fuzz_" + kernel + "-" + sanitized(impl);
}

std::string implementation_from_program_name(const std::string& kernel,
                                             const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  const std::string prefix = fuzz_target_name(kernel, "") + "-";
  if (base.rfind(prefix, 0) != 0) return "";
  const std::string suffix = base.substr(prefix.size());
  for (const auto& impl : builtin_implementations(kernel))
    if (sanitized(impl.name) == suffix) return impl.name;
  throw UsageError(fmt::format("{}: '{}' names no implementation of {}", base, suffix, kernel));
}

FuzzOptions fuzz_options_from_environment(const std::string& kernel, const std::string& program,
                                          const std::string& source_corpus) {
  if (const char* libraries = env("KPROP_LOAD")) {
    std::string all = libraries;
    for (size_t at = 0; at <= all.size();) {
      const size_t end = std::min(all.find(':', at), all.size());
      if (end > at) load_operator_library(all.substr(at, end - at));
      at = end + 1;
    }
  }
  if (const char* texts = env("KPROP_REFUSALS"); texts && *texts) {
    // One refusal text per line: errors of an outside implementation holding one of them
    // are refusals, as `--refusal TEXT` declares them to kprop.
    std::vector<std::string> refusals;
    std::string all = texts;
    for (size_t at = 0; at < all.size();) {
      const size_t end = std::min(all.find('\n', at), all.size());
      if (end > at) refusals.push_back(all.substr(at, end - at));
      at = end + 1;
    }
    // The fuzz target's session, for the life of the process (in-process, on the CPU).
    static Session session([&] {
      SessionSettings settings;
      settings.refusals = refusals;
      return settings;
    }());
  }
  FuzzOptions o;
  o.space.kernel = kernel;
  const Kernel& info = find_kernel(kernel);
  std::string impl = env("KPROP_IMPL") ? env("KPROP_IMPL") : "";
  if (impl.empty()) impl = implementation_from_program_name(kernel, program);
  if (impl.empty()) impl = info.default_implementation();
  o.space.impl = resolve_implementation(kernel, impl).name;
  if (const char* p = env("KPROP_PROPERTY"); p && *p) {
    const auto props = info.properties();
    if (std::find(props.begin(), props.end(), p) == props.end())
      throw UsageError(fmt::format("KPROP_PROPERTY={}: not a property of {}", p, kernel));
    o.space.property = p;
  }
  if (const char* c = env("KPROP_CORPUS")) {
    o.corpus = c;
  } else {
    const fs::path beside = fs::path(program).parent_path() / "kprop_corpus";
    std::error_code ec;
    if (fs::is_directory(beside, ec)) o.corpus = beside.string();
    else if (!source_corpus.empty() && fs::is_directory(source_corpus, ec)) o.corpus = source_corpus;
  }
  if (!o.corpus.empty())
    for (const auto& [identity, file] : corpus_identities(o.corpus)) o.known.insert(identity);
  if (const char* s = env("KPROP_SHRINK_SECONDS")) {
    char* end = nullptr;
    o.shrink_seconds = std::strtod(s, &end);
    if (end == s || *end || !(o.shrink_seconds >= 0))
      throw UsageError(fmt::format("KPROP_SHRINK_SECONDS={}: not a number of seconds", s));
  }
  if (const char* s = env("KPROP_SIGHTINGS")) o.sightings_path = s;
  if (const char* name = env("KPROP_HUNT"); name && *name) {
    for (const auto& d : info.known_defects())
      if (d.name == name) o.hunt = d;
    if (!o.hunt) {
      std::string names;
      for (const auto& d : info.known_defects()) names += (names.empty() ? "" : ", ") + d.name;
      throw UsageError(fmt::format("KPROP_HUNT={}: not a known defect of {}; known: {}", name,
                                   kernel, names));
    }
    o.space.property = o.hunt->property;
    o.space.limits = o.hunt->limits;
  }
  return o;
}

FuzzTarget::FuzzTarget(FuzzOptions options)
    : options_(std::move(options)),
      triage_(std::make_unique<Triage>(TriageOptions{options_.known, true,
                                                     options_.shrink_seconds, {}, {}, nullptr})),
      last_flush_(std::chrono::steady_clock::now()) {}

FuzzTarget::~FuzzTarget() = default;

FuzzOutcome FuzzTarget::run(const uint8_t* data, size_t size) {
  FuzzOutcome out;
  out.c = decode_fuzz_input(options_.space, data, size);
  ++stats_.executions;
  try {
    out.verdict = evaluate(out.c);
  } catch (const CaseError&) {
    // Valid but too large to materialize (the schema's element limit).
    ++stats_.too_large;
    out.interesting = false;
    return out;
  }
  switch (out.verdict.status) {
    case Verdict::Status::pass: ++stats_.passed; break;
    case Verdict::Status::rejected:
      ++stats_.rejected;
      ++stats_.rejections[out.verdict.message];
      out.interesting = false;
      break;
    case Verdict::Status::skipped: ++stats_.skipped; out.interesting = false; break;
    case Verdict::Status::fail: {
      ++stats_.failed;
      TriageOutcome t = triage_->classify(out.c, out.verdict);
      for (const auto& id : t.known_seen) {
        ++stats_.sightings[id];
        ++unflushed_[id];
      }
      if (t.all_known) ++stats_.known;
      for (auto& f : t.fresh) {
        triage_->learn(f.identity);
        if (options_.hunt && !shows(*options_.hunt, f)) ++stats_.passed_over;
        else out.fresh.push_back(std::move(f));
      }
      break;
    }
  }
  if (std::chrono::steady_clock::now() - last_flush_ > std::chrono::seconds(2)) flush_sightings();
  return out;
}

void FuzzTarget::flush_sightings() {
  last_flush_ = std::chrono::steady_clock::now();
  if (options_.sightings_path.empty() || unflushed_.empty()) return;
  // One write per flush to a file opened for appending: lines of concurrent processes
  // (libFuzzer's fork mode) do not interleave.
  std::string lines;
  for (const auto& [identity, count] : unflushed_) lines += fmt::format("{}\t{}\n", count, identity);
  std::ofstream(options_.sightings_path, std::ios::app) << lines << std::flush;
  unflushed_.clear();
}

std::string finding_report(const FuzzOutcome& outcome) {
  std::string text = "== kprop: new defect ==\n";
  text += fmt::format("signature: {}\n", outcome.verdict.signature());
  for (const auto& f : outcome.fresh) text += fmt::format("identity: {}\n", f.identity);
  for (const auto& f : outcome.fresh) {
    text += fmt::format("minimal case of {} (kprop replay FILE):\n", f.identity);
    text += to_json(describe_failure(f, {{"found_by", "libFuzzer"}})).dump(2) + "\n";
  }
  CaseFile decoded;
  decoded.c = outcome.c;
  decoded.signature = outcome.verdict.signature();
  decoded.provenance = {{"found_by", "libFuzzer"}, {"decoded", true}};
  text += "decoded case:\n" + to_json(decoded).dump(2) + "\n";
  return text;
}

}  // namespace kprop

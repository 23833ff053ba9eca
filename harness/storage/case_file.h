// Case files: one minimized case per human-readable JSON file (docs/design.md §6).
//
//   {
//     "schema": "kprop-case/2",
//     "case": { "kernel": "causal_conv1d", "impl": "tiled@clamped", "property": "packed",
//               ... the kernel's parameters, flat, as its schema names them ...
//               "dtype": "float32", "seed": 123, "distribution": "normal" },
//     "expect": { "reference": "pass", "tiled": "pass", "tiled@clamped": "fail", ... },
//     "signature": "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0",
//     "identity": "causal_conv1d/tiled@clamped/dw [taps that read h0] {2 lengths, initial_state}",
//     "inputs_fingerprint": "fnv1a64:...",
//     "provenance": { "found_by": "...", "search_seed": 1, "case_number": 4,
//                     "shrink_steps": 6, "date": "2026-11-30", "defect": "..." },
//     "notes": "..."
//   }
//
// Reading is strict: an unknown field, a wrong type or an impossible parameter is a
// CaseError naming the file and the field ("x.json: case.lengths[1]: zero-length
// segment"), so that a typo never silently changes what is tested.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "generators/case.h"
#include "harness/model/verdict.h"

namespace kprop {

inline constexpr const char* kCaseSchema = "kprop-case/2";
// Version 1 had the same flat keys for causal_conv1d and no identity: it still reads.
inline constexpr const char* kCaseSchemaV1 = "kprop-case/1";

struct CaseFile {
  std::string path;  // where it was read from; empty for a new one
  Case c;
  std::map<std::string, Verdict::Status> expect;  // implementation -> expected status
  std::string signature;                          // of c.impl's failure, if it fails
  std::string identity;                           // which defect (harness/model/identity.h)
  std::string inputs_fingerprint;                 // of the materialized inputs
  nlohmann::json provenance = nlohmann::json::object();
  std::string shrinks_to;  // a case as reported upstream: the minimal case kprop shrank it to
  std::string notes;
};

nlohmann::json case_to_json(const Case& c);
// `where` prefixes every error message, e.g. "corpus/a.json: case".
Case case_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json to_json(const CaseFile& f);
CaseFile case_file_from_json(const nlohmann::json& j, const std::string& path);

CaseFile read_case_file(const std::string& path);
// The same from the file's text (`path` names it in errors): what the parser fuzz target
// feeds with arbitrary bytes.
CaseFile parse_case_file(const std::string& text, const std::string& path);
// Writes through a temporary file in the same folder and a rename: readers see the old
// file or the new one, never a part. Creates missing folders.
void write_case_file(const std::string& path, const CaseFile& f);

Verdict::Status parse_status(const std::string& s, const std::string& where);

}  // namespace kprop

// A verdict as JSON and back: what an isolated worker answers (harness/execution/isolation.h) and
// what --json prints of it. Below the reports, so that the worker's side needs no more than
// the verdict.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/model/verdict.h"

namespace kprop {

// Infinite and NaN numbers are not JSON: written as the strings "inf" / "nan".
nlohmann::json number_json(double v);

nlohmann::json verdict_to_json(const Verdict& v);
// The inverse of verdict_to_json (the signature is derived, not read). Throws
// std::runtime_error on a malformed verdict.
Verdict verdict_from_json(const nlohmann::json& j);

}  // namespace kprop

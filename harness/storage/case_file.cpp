#include "harness/storage/case_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/errors.h"
#include "harness/model/kernel.h"
#include "harness/storage/atomic_file.h"

namespace kprop {

using nlohmann::json;

namespace {

// A value quoted in a message: short, so that a hostile file cannot flood the terminal.
std::string quote(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

std::string shorten(const std::string& s) {
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

// Strict field access: every error names where it happened.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("", "must be an object");
  }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    const std::string name = field.size() > 60 ? field.substr(0, 60) + "..." : field;
    throw CaseError(fmt::format("{}{}{}: {}", where_, name.empty() ? "" : ".", name, problem));
  }

  // Rejects fields that are not in `known` (a typo must not silently change a test).
  void only(const std::set<std::string>& known) const {
    for (const auto& [key, value] : j_.items())
      if (!known.count(key)) fail(key, "unknown field");
  }

  const json& need(const std::string& field) const {
    if (!j_.contains(field)) fail(field, "missing");
    return j_.at(field);
  }

  std::string text(const std::string& field) const {
    const json& v = need(field);
    if (!v.is_string()) fail(field, fmt::format("must be a string, got {}", quote(v)));
    return v.get<std::string>();
  }

  int64_t integer(const std::string& field) const {
    const json& v = need(field);
    if (!v.is_number_integer()) fail(field, fmt::format("must be an integer, got {}", quote(v)));
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
      fail(field, fmt::format("{} is out of range", quote(v)));
    return v.get<int64_t>();
  }

  uint64_t unsigned_integer(const std::string& field) const {
    const json& v = need(field);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(field, fmt::format("must be a non-negative integer, got {}", quote(v)));
    return v.get<uint64_t>();
  }

  bool boolean(const std::string& field) const {
    const json& v = need(field);
    if (!v.is_boolean()) fail(field, fmt::format("must be true or false, got {}", quote(v)));
    return v.get<bool>();
  }

  std::vector<int64_t> integers(const std::string& field) const {
    const json& v = need(field);
    if (!v.is_array()) fail(field, fmt::format("must be a list of integers, got {}", quote(v)));
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer())
        fail(fmt::format("{}[{}]", field, i), fmt::format("must be an integer, got {}", quote(v[i])));
      if (v[i].is_number_unsigned() && v[i].get<uint64_t>() > uint64_t(INT64_MAX))
        fail(fmt::format("{}[{}]", field, i), fmt::format("{} is out of range", quote(v[i])));
      out.push_back(v[i].get<int64_t>());
    }
    return out;
  }

  template <typename T>
  T choice(const std::string& field, std::optional<T> (*parse)(const std::string&)) const {
    const std::string s = text(field);
    const auto v = parse(s);
    if (!v) fail(field, fmt::format("unknown value '{}'", s.size() > 40 ? s.substr(0, 40) + "..." : s));
    return *v;
  }

  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

}  // namespace

json case_to_json(const Case& c) {
  json j{{"kernel", c.kernel}, {"impl", c.impl}, {"property", c.property}};
  const Schema& schema = find_kernel(c.kernel).schema();
  // The schema's order, so that files read like the kernel's declaration.
  for (const auto& spec : schema.params) {
    const auto it = c.params.find(spec.name);
    if (it == c.params.end()) continue;
    std::visit([&](const auto& v) { j[spec.name] = v; }, it->second);
  }
  j["dtype"] = to_string(c.dtype);
  j["seed"] = c.seed;
  j["distribution"] = to_string(c.distribution);
  // Only when not random: a file from before the choice existed stays as it was.
  if (c.cotangents != Cotangents::random) j["cotangents"] = to_string(c.cotangents);
  return j;
}

Case case_from_json(const json& j, const std::string& where) {
  const Fields f(j, where);
  Case c;
  c.kernel = f.text("kernel");
  const Kernel* kernel = nullptr;
  try {
    kernel = &find_kernel(c.kernel);
  } catch (const UsageError& e) {
    f.fail("kernel", e.what());
  }
  const Schema& schema = kernel->schema();
  std::set<std::string> known{"kernel", "impl", "property", "dtype", "seed", "distribution",
                              "cotangents"};
  for (const auto& spec : schema.params) known.insert(spec.name);
  f.only(known);
  c.impl = f.text("impl");
  c.property = f.text("property");
  c.dtype = f.choice<DType>("dtype", parse_dtype);
  c.seed = f.unsigned_integer("seed");
  c.distribution = f.choice<Distribution>("distribution", parse_distribution);
  if (j.contains("cotangents")) c.cotangents = f.choice<Cotangents>("cotangents", parse_cotangents);
  for (const auto& spec : schema.params) {
    if (!j.contains(spec.name)) {
      // A file written before the parameter existed.
      if (!spec.before_it_existed) f.fail(spec.name, "missing");
      c.params[spec.name] = *spec.before_it_existed;
      continue;
    }
    switch (spec.type) {
      case ParamType::integer: c.params[spec.name] = f.integer(spec.name); break;
      case ParamType::flag: c.params[spec.name] = f.boolean(spec.name); break;
      case ParamType::choice: c.params[spec.name] = f.text(spec.name); break;
      case ParamType::integers: c.params[spec.name] = f.integers(spec.name); break;
    }
  }
  // validate() names fields as "lengths[1]: ..."; prefix them with where they are.
  const auto problems = validate(schema, c);
  if (!problems.empty()) throw CaseError(fmt::format("{}.{}", where, problems.front()));
  // A valid case may still be too large to materialize (D = 16384 and 2^26 tokens).
  refuse_too_large(schema, c, where);
  return c;
}

Verdict::Status parse_status(const std::string& s, const std::string& where) {
  for (auto st : {Verdict::Status::pass, Verdict::Status::fail, Verdict::Status::rejected,
                  Verdict::Status::skipped})
    if (s == to_string(st)) return st;
  throw CaseError(fmt::format("{}: unknown verdict '{}' (pass, fail, rejected or skipped)",
                              where, s.size() > 40 ? s.substr(0, 40) + "..." : s));
}

json to_json(const CaseFile& f) {
  json expect = json::object();
  for (const auto& [impl, status] : f.expect) expect[impl] = to_string(status);
  json j{{"schema", kCaseSchema},
         {"case", case_to_json(f.c)},
         {"signature", f.signature},
         {"identity", f.identity},
         {"inputs_fingerprint", f.inputs_fingerprint},
         {"provenance", f.provenance}};
  // A file without expectations (a case not yet replayed) is written without them: the
  // reader refuses an empty map, which says nothing.
  if (!expect.empty()) j["expect"] = expect;
  if (!f.shrinks_to.empty()) j["shrinks_to"] = f.shrinks_to;
  if (!f.notes.empty()) j["notes"] = f.notes;
  return j;
}

CaseFile case_file_from_json(const json& j, const std::string& path) {
  const Fields f(j, path);
  f.only({"schema", "case", "expect", "signature", "identity", "inputs_fingerprint",
          "provenance", "shrinks_to", "notes"});
  const std::string schema = f.text("schema");
  if (schema != kCaseSchema && schema != kCaseSchemaV1)
    f.fail("schema", fmt::format("'{}' is neither {} nor {}", schema, kCaseSchema, kCaseSchemaV1));
  CaseFile out;
  out.path = path;
  out.c = case_from_json(f.need("case"), path + ": case");
  // A hand-written case needs only its case: `kprop shrink` fills in the rest.
  if (j.contains("expect")) {
    const json& expect = j.at("expect");
    if (!expect.is_object() || expect.empty())
      f.fail("expect", "must map implementations to verdicts, e.g. {\"reference\": \"pass\"}");
    for (const auto& [impl, status] : expect.items()) {
      if (!status.is_string()) f.fail("expect." + impl, "must be a string");
      out.expect[impl] = parse_status(status.get<std::string>(), path + ": expect." + impl);
    }
  }
  if (j.contains("signature")) out.signature = f.text("signature");
  if (j.contains("identity")) out.identity = f.text("identity");
  out.inputs_fingerprint = j.contains("inputs_fingerprint") ? f.text("inputs_fingerprint") : "";
  if (j.contains("provenance")) {
    if (!j.at("provenance").is_object()) f.fail("provenance", "must be an object");
    out.provenance = j.at("provenance");
  }
  if (j.contains("shrinks_to")) out.shrinks_to = f.text("shrinks_to");
  if (j.contains("notes")) out.notes = f.text("notes");
  return out;
}

namespace {

// Deepest nesting of arrays and objects a case file may have (a case file needs 3).
constexpr int kMaxDepth = 64;

// The nesting depth of `text`, brackets inside strings not counted; stops counting past
// kMaxDepth. Done before parsing, so that a file nested 10^5 deep never reaches the
// recursive parser (or the recursive destructor of a json value).
int nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxDepth) return deepest;
    } else if (ch == ']' || ch == '}') --depth;
  }
  return deepest;
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw CaseError(fmt::format("{}: cannot be read: {}", path, ec.message()));
  if (std::filesystem::is_directory(status))
    throw CaseError(fmt::format("{}: is a folder, not a case file", path));
  if (!std::filesystem::is_regular_file(status))  // a FIFO would block, a device never end
    throw CaseError(fmt::format("{}: not a regular file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseError(fmt::format("{}: cannot be read", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CaseError(fmt::format("{}: cannot be read", path));
  return text;
}

// Parses with a callback that refuses a key seen twice in one object (nlohmann keeps the
// last one silently; a case file must say one thing).
json parse_strict(const std::string& text, const std::string& path) {
  const int depth = nesting_depth(text);
  if (depth > kMaxDepth)
    throw CaseError(fmt::format("{}: nested deeper than {} levels of arrays and objects",
                                path, kMaxDepth));
  std::vector<std::set<std::string>> keys;  // per open object or array
  std::string duplicate;
  const json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: keys.emplace_back(); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && duplicate.empty() &&
            !keys.back().insert(parsed.get<std::string>()).second) {
          duplicate = parsed.get<std::string>();
        }
        break;
      case json::parse_event_t::value: break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, cb);
  } catch (const json::parse_error& e) {
    throw CaseError(fmt::format("{}: not valid JSON: {}", path, shorten(e.what())));
  } catch (const json::exception& e) {  // e.g. a number overflow: 1e999
    throw CaseError(fmt::format("{}: not valid JSON: {}", path, shorten(e.what())));
  }
  if (!duplicate.empty())
    throw CaseError(fmt::format("{}: key {} appears twice in one object", path,
                                quote(json(duplicate))));
  return j;
}

}  // namespace

CaseFile read_case_file(const std::string& path) {
  std::string text;
  try {
    text = read_text(path);
  } catch (const std::bad_alloc&) {
    throw CaseError(fmt::format("{}: too large to read (out of memory)", path));
  }
  return parse_case_file(text, path);
}

CaseFile parse_case_file(const std::string& text, const std::string& path) {
  // Whatever goes wrong reading a file is a CaseError naming it: a crash or an uncaught
  // exception would end a folder replay without saying which file was at fault.
  try {
    const json j = parse_strict(text, path);
    return case_file_from_json(j, path);
  } catch (const CaseError&) {
    throw;
  } catch (const UsageError& e) {
    throw CaseError(fmt::format("{}: {}", path, shorten(e.what())));
  } catch (const std::bad_alloc&) {
    throw CaseError(fmt::format("{}: too large to read (out of memory)", path));
  } catch (const std::exception& e) {
    throw CaseError(fmt::format("{}: cannot be read: {}", path, shorten(e.what())));
  }
}

void write_case_file(const std::string& path, const CaseFile& f) {
  try {
    write_file_atomically(path, to_json(f).dump(2) + "\n");
  } catch (const FileError& e) {
    throw CaseError(e.what());
  }
}

}  // namespace kprop

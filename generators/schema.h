// A kernel's schema: the parameters its cases have, declared once (docs/design.md §6).
//
// Per parameter: its type, its bounds or choices, the simplest value (what shrinking
// moves toward), the weighted edge values the generator leans on, the earlier parameters
// it depends on, a one-line meaning, and the value a case file written before the
// parameter existed has. Validation, text summaries, case files, `--set NAME=VALUE` and
// shrinking all read this declaration; nothing else lists a kernel's fields.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/param.h"

namespace kprop {

class Schema;

// What a run may draw: the CLI and the tests fill it.
struct CaseSpace {
  std::string impl;
  std::string property = "vs_reference";
  // Drawn uniformly; shrinking moves toward the first one listed. Empty: float32.
  std::vector<DType> dtypes{DType::float32};
  // The schema's named limits (e.g. causal_conv1d's max_length); absent ones take their
  // default.
  std::map<std::string, int64_t> limits;
  // Parameters pinned to a value (`--set NAME=VALUE`): drawn as given, never shrunk;
  // "cotangents" pins the case's choice of them (Case::cotangents) the same way.
  std::map<std::string, ParamValue> fixed;
  // 0..100: scales the uniform parts of draws (ranges), as RapidCheck's size does, so a
  // search starts with small cases. Edge values are drawn at every size.
  int size = 100;

  int64_t limit(const Schema& schema, const std::string& name) const;
  std::vector<DType> dtype_choices() const;
};

// Inclusive bounds of an integer (or of one element of an integer list).
struct Bounds {
  int64_t lo, hi;
  const char* why = nullptr;  // what a dependent bound means, for error messages
  bool contains(int64_t v) const { return v >= lo && v <= hi; }
  int64_t clamp(int64_t v) const { return v < lo ? lo : v > hi ? hi : v; }
};

// One weighted option of an integer draw: a set of values, or a range when `values` is
// empty. Values outside the parameter's bounds are clamped into them.
struct IntOption {
  uint32_t weight = 0;
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> values;
  std::string hi_limit;  // a range up to this limit of the space (hi is then ignored)

  static IntOption just(uint32_t weight, int64_t v) { return {weight, v, v, {}, {}}; }
  static IntOption range(uint32_t weight, int64_t lo, int64_t hi) {
    return {weight, lo, hi, {}, {}};
  }
  static IntOption any_of(uint32_t weight, std::vector<int64_t> values) {
    return {weight, 0, 0, std::move(values), {}};
  }
  // lo .. the space's value of limit `limit` (`--limit NAME=N`, else its default).
  static IntOption up_to(uint32_t weight, int64_t lo, std::string limit) {
    return {weight, lo, lo, {}, std::move(limit)};
  }
};

// Each point, one short of it and one past it, in order: 63, 64, 65, 127, ... for
// {64, 128}. Bugs live at block edges; draws lean on them (IntOption::any_of).
std::vector<int64_t> around(std::initializer_list<int64_t> points);

// What a draw may look at: the case so far (earlier parameters set; for a list, the
// elements drawn so far), the space, and the index of the list element being drawn.
struct DrawContext {
  const Case& so_far;
  const CaseSpace& space;
  size_t index = 0;
  const Schema* schema = nullptr;  // the schema being drawn, for its limits
  // The space's value of the schema's limit `name` (CaseSpace::limit).
  int64_t limit(const std::string& name) const;
};

// How many elements an integer list has.
struct ListRule {
  int64_t min_count = 0;
  int64_t max_count = 64;  // hard: validation and decoding
  // The count drawn at most (a limit of the space, a dependency); defaults to max_count.
  std::function<int64_t(const DrawContext&)> drawn_max_count;
  // "One more?" weights per element past min_count: stop (the simplest) or go on.
  uint32_t stop_weight = 40, more_weight = 60;
  // A list that has one element per element of another list (or none, if may_be_empty).
  std::string same_count_as;
  bool may_be_empty = false;
  // How many entries it has in case c, within min_count..max_count, where an earlier
  // parameter decides (none in a dense layout, at least one in a packed one).
  std::function<Bounds(const Case& c)> count;
  uint32_t empty_weight = 30, present_weight = 70;
};

// A knob of the generator, e.g. the typical longest segment; `--limit NAME=N`.
struct Limit {
  std::string name;
  // Initialized, so that `{"max_rows", 8}` declares a limit without a warning.
  int64_t default_value = 0, min = 0, max = 0;
  std::string meaning = {};
};

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  std::string meaning;
  ParamValue simplest;                      // the shrink target
  // The value a case has when nobody chose one: the base case of sweeps and reports.
  // Defaults to `simplest`.
  std::optional<ParamValue> default_value;
  // What a case file written before the parameter existed means by its absence; without
  // it, a missing parameter is an error.
  std::optional<ParamValue> before_it_existed;
  std::vector<std::string> depends_on;      // earlier parameters its bounds and draws read

  // integer, and each element of an integer list:
  Bounds static_bounds{0, 0};
  std::function<Bounds(const Case& c, size_t index)> bounds;  // defaults to static_bounds
  std::function<std::vector<IntOption>(const DrawContext&)> draw;  // default: uniform
  int64_t element_simplest = 1;              // integer lists: each element shrinks toward it
  // Candidates toward simpler values, in the order shrinking tries them; default: the
  // simplest, then halfway points, then one less (as RapidCheck's towards()).
  std::function<std::vector<int64_t>(int64_t value, const Case& c, size_t index)> shrinks;
  // integer: the simplest value given the earlier parameters, where that depends on them
  // (a value the implementations refuse is a poor start): what a fuzzer's bytes decode
  // to when they run out, simplest_case()'s value, and shrinking's target. Defaults to
  // `simplest`.
  std::function<int64_t(const Case& so_far)> simplest_given;

  // flag: percent of draws that are true. choice: the choices and their weights.
  uint32_t percent_true = 50;
  std::vector<std::string> choices;
  std::vector<uint32_t> weights;

  ListRule list;  // integer lists

  // The limit of the space its draws go up to, declared with it (extent()); a kernel spec
  // adds it to its schema's limits.
  std::optional<Limit> limit;

  Bounds bounds_in(const Case& c, size_t index) const {
    return bounds ? bounds(c, index) : static_bounds;
  }
  ParamValue simplest_in(const Case& so_far) const {
    return simplest_given ? ParamValue{simplest_given(so_far)} : simplest;
  }

  // Named fields for declarations: param_spec(...).by_default(4).within(1, 4096)...
  ParamSpec& by_default(ParamValue v) { default_value = std::move(v); return *this; }
  ParamSpec& within(int64_t lo, int64_t hi) { static_bounds = {lo, hi}; return *this; }
  ParamSpec& drawn(std::function<std::vector<IntOption>(const DrawContext&)> f) {
    draw = std::move(f);
    return *this;
  }
  ParamSpec& drawn(std::vector<IntOption> options) {
    draw = [options](const DrawContext&) { return options; };
    return *this;
  }
  ParamSpec& shrinking(
      std::function<std::vector<int64_t>(int64_t value, const Case& c, size_t index)> f) {
    shrinks = std::move(f);
    return *this;
  }
  ParamSpec& true_in_percent(uint32_t p) { percent_true = p; return *this; }
  // An extent that a kernel walks in blocks of `width` (a vector width, a tile): half its
  // draws on the block edges (1, 2 and 4 blocks, each +-1), 40% uniform up to its limit,
  // 10% one; it shrinks along whole blocks (along_blocks), so a remainder stays one.
  ParamSpec& in_blocks_of(int64_t width);
};

// A parameter with its name, type, meaning and simplest value; the rest is filled in after.
ParamSpec param_spec(std::string name, ParamType type, std::string meaning, ParamValue simplest);
// A flag, false at its simplest.
ParamSpec flag_param(std::string name, std::string meaning);
// A choice among `choices`, drawn with `weights`, the first at its simplest.
ParamSpec choice_param(std::string name, std::string meaning, std::vector<std::string> choices,
                       std::vector<uint32_t> weights);
// The size of a tensor dimension, 1..max, shrinking toward 1: drawn 1 in 30% of draws, 2 in
// 15%, else uniformly from 1 to `limit` (declared with it: min 1, max `max`; its meaning
// defaults to "most <name> a case draws").
ParamSpec extent(std::string name, std::string meaning, int64_t max, Limit limit);

// Entries of an integer list that a derived name sets: every entry, the last one, or any
// other choice of them. A sweep along the derived name shows the base case's list with
// these entries replaced by the name ("lengths=1,tail"): which entries vary, which stay.
struct ListEntries {
  std::string list;  // the integer list, one of the derived name's `changes`
  std::function<std::vector<size_t>(const Case& c)> indices;  // which entries, in case c

  static ListEntries all(std::string list);
  static ListEntries last(std::string list);  // none of an empty list
};

// A name `--set` and sweeps accept that is not a parameter of its own, e.g. causal_conv1d's
// `length` (every sequence has this length).
struct DerivedParam {
  std::string name, meaning;
  std::vector<std::string> changes;  // the parameters it sets
  std::function<void(Case&, const std::string& text)> set;
  std::function<std::string(const Case&)> get;
  // When what it sets is some entries of a list: which. A sweep along a derived name
  // without it shows none of the parameters the name changes.
  std::optional<ListEntries> sets_entries = std::nullopt;
};

class Schema {
 public:
  std::string kernel;
  std::vector<ParamSpec> params;  // in draw order: a parameter after those it depends on
  std::vector<std::string> shrink_order;  // default: draw order
  std::vector<Limit> limits;
  std::vector<DerivedParam> derived;
  // Problems across parameters that bounds cannot say, in words naming the field.
  std::function<std::vector<std::string>(const Case&)> check;
  // Problems of size: a case whose tensors would be too large to materialize (e.g. more
  // elements than KPROP_MAX_ELEMENTS), in words naming the field. Not part of validate()
  // (the generator's bounds allow such cases); see refuse_too_large().
  std::function<std::vector<std::string>(const Case&)> size_check;

  const ParamSpec* find(const std::string& name) const;
  const ParamSpec& at(const std::string& name) const;  // std::logic_error when unknown
  const Limit* find_limit(const std::string& name) const;
  std::vector<std::string> param_names() const;     // declared parameters, draw order
  std::vector<std::string> shrink_names() const;
};

// Each problem names the field at fault, e.g. "lengths[2]: 0 is outside 1..65536".
std::vector<std::string> validate(const Schema& schema, const Case& c);

// How many entries integer list `spec` may have in `c`: ListRule::count within
// min_count..max_count.
Bounds entry_count(const ParamSpec& spec, const Case& c);

// Brings every parameter back inside its bounds after one of them changed (a shorter
// sequence takes its split with it); missing parameters take their legacy default or
// simplest value. Idempotent. Parameters named in `keep` stay as they are (a value the
// user set is validated, not quietly clamped).
void fit(const Schema& schema, Case& c, const std::vector<std::string>& keep = {});

// The case with every parameter at its simplest value (common fields from `base`).
Case simplest_case(const Schema& schema, const Case& base);
// The case with every parameter at its default value (common fields from `base`).
Case default_case(const Schema& schema, const Case& base);

// "lengths=1,7 W=4 ..." then dtype, seed and distribution: one line for tables.
std::string summary(const Schema& schema, const Case& c);

// Most elements one tensor of a case may hold: 2^24, or the environment's
// KPROP_MAX_ELEMENTS. What a schema's size_check compares with.
int64_t max_elements();

// Throws CaseError "<where>.<problem>" when the case's tensors would be too large to
// materialize (the schema's size_check): what reading a file, replay and every evaluation
// call before anything is allocated.
void refuse_too_large(const Schema& schema, const Case& c, const std::string& where);

// `--set NAME=VALUE`: a parameter, a derived name or a common field (impl, property,
// dtype, seed, distribution), parsed by its type; the parameters that depend on it are
// fitted to it, the value itself is left for validate() to judge. Throws CaseError
// naming the parameter and listing the known names.
void set_param(const Schema& schema, Case& c, const std::string& name, const std::string& text);
std::string get_param(const Schema& schema, const Case& c, const std::string& name);
std::vector<std::string> settable_names(const Schema& schema);

// A parameter value from its text form (`1,7`, `true`, `silu`), checked against its type
// and choices, not its bounds.
ParamValue parse_param(const ParamSpec& spec, const std::string& text);

// What a case has beyond the simplest: the flags and choices away from their simplest
// value and the lists longer than their simplest ("initial_state", "layout=dense",
// "2 lengths"). In a 1-minimal case each is needed for the failure: together they name
// what triggers it. Integer sizes are not part of it (W = 3 or 4 is one defect).
std::vector<std::string> needs(const Schema& schema, const Case& c);

}  // namespace kprop

#include "generators/mutate.h"

#include <algorithm>
#include <functional>

namespace kprop {

namespace {

constexpr int kTries = 8;

bool pinned(const CaseSpace& space, const std::string& name) { return space.fixed.count(name) > 0; }

uint64_t below(RandomChoices& random, size_t n) { return random.below(n, 0); }

template <typename T>
const T& one_of(RandomChoices& random, const std::vector<T>& xs) {
  return xs[below(random, xs.size())];
}

// An edge of element `index` other than `current`, or `current` when it has none.
int64_t another_edge(const Schema& schema, const ParamSpec& spec, const Case& c, size_t index,
                     const CaseSpace& space, int64_t current, RandomChoices& random) {
  auto edges = edge_values(schema, spec, c, index, space);
  edges.erase(std::remove(edges.begin(), edges.end(), current), edges.end());
  return edges.empty() ? current : one_of(random, edges);
}

// The parameters (by name) each kind of mutation can change in `c`.
struct Targets {
  std::vector<std::string> integers, lists_growing, lists_shrinking, lists_nonempty, flags,
      choices;
};

Targets targets_of(const Schema& schema, const Case& c, const CaseSpace& space) {
  Targets t;
  for (const auto& spec : schema.params) {
    if (pinned(space, spec.name) || !c.has(spec.name)) continue;
    switch (spec.type) {
      case ParamType::integer:
        t.integers.push_back(spec.name);
        break;
      case ParamType::integers: {
        const auto n = static_cast<int64_t>(c.integers(spec.name).size());
        if (n > 0) t.integers.push_back(spec.name);
        // A list that follows another's count changes with it, never on its own.
        if (!spec.list.same_count_as.empty()) break;
        const Bounds count = entry_count(spec, c);
        if (n < count.hi) t.lists_growing.push_back(spec.name);
        if (n > count.lo) t.lists_shrinking.push_back(spec.name);
        if (n > 0 && n < count.hi) t.lists_nonempty.push_back(spec.name);
        break;
      }
      case ParamType::flag:
        t.flags.push_back(spec.name);
        break;
      case ParamType::choice:
        if (spec.choices.size() > 1) t.choices.push_back(spec.name);
        break;
    }
  }
  if (space.dtype_choices().size() > 1) t.choices.push_back("dtype");
  t.choices.push_back("distribution");
  if (!pinned(space, "cotangents")) t.choices.push_back("cotangents");
  return t;
}

const std::vector<std::string>& targets_for(const Targets& t, Mutation m) {
  switch (m) {
    case Mutation::edge_value: return t.integers;
    case Mutation::list_insert: return t.lists_growing;
    case Mutation::list_delete: return t.lists_shrinking;
    case Mutation::list_duplicate: return t.lists_nonempty;
    case Mutation::flag_toggle: return t.flags;
    case Mutation::choice_change: return t.choices;
  }
  return t.integers;
}

// A common field or a choice parameter to another of its values.
void change_choice(const Schema& schema, Case& m, const std::string& name,
                   const CaseSpace& space, RandomChoices& random) {
  if (name == "dtype") {
    auto options = space.dtype_choices();
    options.erase(std::remove(options.begin(), options.end(), m.dtype), options.end());
    if (!options.empty()) m.dtype = one_of(random, options);
  } else if (name == "distribution") {
    auto options = all_distributions();
    options.erase(std::remove(options.begin(), options.end(), m.distribution), options.end());
    m.distribution = one_of(random, options);
  } else if (name == "cotangents") {
    auto options = all_cotangents();
    options.erase(std::remove(options.begin(), options.end(), m.cotangents), options.end());
    m.cotangents = one_of(random, options);
  } else {
    auto options = schema.at(name).choices;
    options.erase(std::remove(options.begin(), options.end(), m.choice(name)), options.end());
    m.set(name, one_of(random, options));
  }
}

// `m` with mutation `kind` applied to parameter `name`.
void apply(const Schema& schema, Case& m, Mutation kind, const std::string& name,
           const CaseSpace& space, RandomChoices& random) {
  if (kind == Mutation::flag_toggle) {
    m.set(name, !m.flag(name));
    return;
  }
  if (kind == Mutation::choice_change) {
    change_choice(schema, m, name, space, random);
    return;
  }
  const ParamSpec& spec = schema.at(name);
  if (spec.type == ParamType::integer) {
    m.set(name, another_edge(schema, spec, m, 0, space, m.integer(name), random));
    return;
  }
  std::vector<int64_t> xs = m.integers(name);
  const size_t at = below(random, kind == Mutation::list_insert ? xs.size() + 1 : xs.size());
  switch (kind) {
    case Mutation::edge_value:
      xs[at] = another_edge(schema, spec, m, at, space, xs[at], random);
      break;
    case Mutation::list_insert: {
      const auto edges = edge_values(schema, spec, m, at, space);
      xs.insert(xs.begin() + static_cast<std::ptrdiff_t>(at),
                edges.empty() ? spec.element_simplest : one_of(random, edges));
      break;
    }
    case Mutation::list_delete:
      xs.erase(xs.begin() + static_cast<std::ptrdiff_t>(at));
      break;
    case Mutation::list_duplicate:
      xs.insert(xs.begin() + static_cast<std::ptrdiff_t>(at), xs[at]);
      break;
    default:
      break;
  }
  m.set(name, xs);
}

// The name's value in `c` is the one the mutation set, and the case is valid: fitted
// around it, then validated.
bool settle(const Schema& schema, Case& m, const std::string& name) {
  const bool common = name == "dtype" || name == "distribution" || name == "cotangents";
  fit(schema, m, common ? std::vector<std::string>{} : std::vector<std::string>{name});
  return validate(schema, m).empty();
}

}  // namespace

std::string to_string(Mutation m) {
  switch (m) {
    case Mutation::edge_value: return "edge_value";
    case Mutation::list_insert: return "list_insert";
    case Mutation::list_delete: return "list_delete";
    case Mutation::list_duplicate: return "list_duplicate";
    case Mutation::flag_toggle: return "flag_toggle";
    case Mutation::choice_change: return "choice_change";
  }
  return "?";
}

std::vector<Mutation> all_mutations() {
  return {Mutation::edge_value, Mutation::list_insert,   Mutation::list_delete,
          Mutation::list_duplicate, Mutation::flag_toggle, Mutation::choice_change};
}

std::vector<int64_t> edge_values(const Schema& schema, const ParamSpec& spec, const Case& c,
                                 size_t index, const CaseSpace& space) {
  const Bounds b = spec.bounds_in(c, index);
  std::vector<int64_t> v{b.lo};
  v.push_back(spec.type == ParamType::integers ? spec.element_simplest
                                               : std::get<int64_t>(spec.simplest_in(c)));
  if (spec.draw) {
    const DrawContext context{c, space, index, &schema};
    for (const auto& o : spec.draw(context)) {
      v.insert(v.end(), o.values.begin(), o.values.end());
      if (!o.values.empty()) continue;
      v.push_back(o.lo);
      v.push_back(o.hi_limit.empty() ? o.hi : context.limit(o.hi_limit));
    }
  } else {
    v.push_back(b.hi);  // a uniform draw over the bounds: its top is an edge
  }
  for (auto& x : v) x = b.clamp(x);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::optional<Mutated> mutate(const Schema& schema, const Case& c, const CaseSpace& space,
                              RandomChoices& random, std::optional<Mutation> only) {
  const Targets targets = targets_of(schema, c, space);
  std::vector<Mutation> kinds;
  for (Mutation m : only ? std::vector<Mutation>{*only} : all_mutations())
    if (!targets_for(targets, m).empty()) kinds.push_back(m);
  if (kinds.empty()) return std::nullopt;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    const Mutation kind = one_of(random, kinds);
    const std::string& name = one_of(random, targets_for(targets, kind));
    Case m = c;
    apply(schema, m, kind, name, space, random);
    if (m != c && settle(schema, m, name)) return Mutated{std::move(m), kind, name};
  }
  return std::nullopt;
}

std::optional<Case> cross_over(const Schema& schema, const Case& a, const Case& b,
                               const CaseSpace& space, RandomChoices& random) {
  for (int attempt = 0; attempt < kTries; ++attempt) {
    Case child = a;
    for (const auto& spec : schema.params)
      if (!pinned(space, spec.name) && b.has(spec.name) && below(random, 2) == 1)
        child.set(spec.name, b.params.at(spec.name));
    if (below(random, 2) == 1) child.distribution = b.distribution;
    if (below(random, 2) == 1) child.dtype = b.dtype;
    if (!pinned(space, "cotangents") && below(random, 2) == 1) child.cotangents = b.cotangents;
    fit(schema, child);
    if (validate(schema, child).empty()) return child;
  }
  return std::nullopt;
}

}  // namespace kprop

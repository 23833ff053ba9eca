#include "harness/engine/properties/chunked_run.h"
#include "harness/engine/property.h"

namespace kprop {

std::optional<ChunkedRun> run_chunked(const Kernel& kernel, const Calls& calls,
                                      const Problem& whole) {
  const SequenceFamily* family = kernel.sequences();
  if (!family) return std::nullopt;
  auto split = family->split(whole);
  if (!split) return std::nullopt;
  ChunkedRun run{*split, {}, {}, {}};
  ChunkedProblem& ch = run.problem;

  const auto whole_out = calls.forward(whole);
  run.cotangents = family->later_part_only(ch, random_cotangents(kernel, whole, whole_out));
  run.whole = merged(whole_out, calls.backward(whole, run.cotangents));

  const auto first_out = calls.forward(ch.first);
  family->hand_on(ch, first_out);
  const auto second_out = calls.forward(ch.second);
  // The second part's gradient of its initial state is the first part's dht.
  const auto second_grads = calls.backward(ch.second, family->second_cotangents(ch, run.cotangents));
  const auto first_grads =
      calls.backward(ch.first, family->first_cotangents(ch, run.cotangents, second_grads));
  run.joined = merged(family->join_outputs(ch, first_out, second_out),
                      family->join_grads(ch, first_grads, second_grads));
  return run;
}

}  // namespace kprop

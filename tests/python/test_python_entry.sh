#!/usr/bin/env bash
# The Python entry (python3 -m kprop, python/): kprop's own command line in the interpreter
# that imports torch, with kernels a module registers with torch.library. A correct Python
# causal_conv1d passes; one with a planted defect (buggy_ops.py) is found, shrunk, kept and
# replayed; --import and --load errors are exit 2 naming the problem. Exact lines; timings
# by pattern.
#   test_python_entry.sh PYTHON PYTHON_DIR SOURCE_DIR KPROP TEST_KERNELS_PLUGIN
set -u
kprop=$4
plugin=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
. "$(dirname "$0")/python_entry.sh" "$1" "$2" "$3"

# --- the correct Python kernel passes every property (in an isolated worker).
run correct 0 "${py[@]}" check causal_conv1d --import causal_conv1d_ops --impl mine::causal_conv1d \
  --cases 300 --no-corpus
line correct out "kprop check causal_conv1d --impl mine::causal_conv1d --seed 0: 300 cases over gradient, chunked, packed, vs_reference, cores, layout, determinism, guard, neutral, composition"
line_like correct out "300 cases: [0-9]+ passed, 0 failed, 0 known failures, 0 rejected, [0-9]+ skipped in $timing \([0-9]+ cases/s\)"
line correct out "PASS: no new counterexample in 300 cases"
# What isolation cost: one worker for the whole run, its start, the rest per case.
line_like correct out "isolation: [0-9]+ cases in worker processes, 1 started \($timing starting them\): [0-9]+\.[0-9]{2} ms per case apart from the starts"

# --- the planted defect (dht not passed on to dh0 for a sequence shorter than W) is found,
# shrunk to its 1-minimal case and kept; exit 1.
corpus=$tmp/corpus
identity='causal_conv1d/buggy::causal_conv1d/dh0 [sequence shorter than W] {initial_state, final_state_grad}'
run buggy 1 "${py[@]}" check causal_conv1d --import buggy_ops --impl buggy::causal_conv1d --corpus "$corpus"
line_like buggy out "FAIL after [0-9]+ cases \($timing\): causal_conv1d/buggy::causal_conv1d/[a-z_]+/.*dh0.*"
line buggy out "defect: $identity"
line buggy out "  lengths            1"
line buggy out "  W                  2"
line buggy out "  initial_state      true"
line buggy out "  final_state_grad   true"
the_one_file "$corpus/causal_conv1d"
line buggy out "kept in the corpus: $kept"
line buggy out "replay: python3 -m kprop replay $kept --import buggy_ops"
grep -qF "\"identity\": \"$identity\"" "$kept" || fail "$kept has not the defect's identity"
grep -qF '"buggy::causal_conv1d": "fail"' "$kept" || fail "$kept does not expect the failure"
grep -qE '"found_by": "python3 -m kprop check causal_conv1d --impl buggy::causal_conv1d .* --import buggy_ops"' "$kept" ||
  fail "$kept does not say how it was found"

# Replayed through the Python entry: it still fails as recorded; exit 0.
run replay 0 "${py[@]}" replay "$kept" --import buggy_ops
line replay out "$kept as recorded"
# The same run again: the defect is known now, the search goes on past it; exit 0.
run known 0 "${py[@]}" check causal_conv1d --import buggy_ops --impl buggy::causal_conv1d \
  --corpus "$corpus" --cases 100
line_like known out "  known [0-9]+ x: $(re "$identity")"
line known out "PASS: no new counterexample in 100 cases"

# --- errors: exit 2, naming what is wrong.
run no_module 2 "${py[@]}" check causal_conv1d --import nosuchmodule --impl mine::causal_conv1d
only no_module err "kprop: --import nosuchmodule: ModuleNotFoundError: No module named 'nosuchmodule'"
printf 'raise RuntimeError("cannot register my kernel")\n' >"$tmp/broken_ops.py"
PYTHONPATH=$PYTHONPATH:$tmp run broken 2 "${py[@]}" check causal_conv1d --import broken_ops
only broken err "kprop: --import broken_ops: RuntimeError: cannot register my kernel"
run not_imported 2 "${py[@]}" check causal_conv1d --impl mine::causal_conv1d --no-corpus
line_like not_imported err "kprop: unknown implementation 'mine::causal_conv1d' of causal_conv1d; .*"
# The kprop executable cannot import Python modules: it says where to go.
run executable 2 "$kprop" check causal_conv1d --import causal_conv1d_ops --impl mine::causal_conv1d
only executable err "kprop: --import causal_conv1d_ops: only kprop's Python entry imports modules: python3 -m kprop ... (README: Python and Triton kernels)"
run usage 2 "${py[@]}" check causal_conv1d --cases many
line_like usage err ".*--cases.*many.*"

# --- a C++ plugin (--load) under the Python entry resolves kprop's symbols as under kprop.
run plugin 0 "${py[@]}" check scaled_tanh --load "$plugin" --cases 20 --no-corpus
line plugin out "PASS: no new counterexample in 20 cases"

# --- several command lines in one process (bench/gpu/steady.py runs each twice, the
# second measured): every command reports its own time, not the process's so far.
spec="twice 40 causal_conv1d --import causal_conv1d_ops --impl mine::causal_conv1d \
--property vs_reference --no-isolation --no-corpus"
printf '%s\n%s\n' "$spec" "$spec" >"$tmp/steady.spec"
run steady 0 "$1" "$3/bench/gpu/steady.py" "$tmp/steady.spec"
line_like steady out "steady: twice: 40 cases in $timing = [0-9]+ cases/s; warm-up run [0-9.]+ s \(exit 0\); measured [0-9.]+-[0-9.]+"
calls=$(grep -oE '\([0-9]+ calls\)' "$tmp/steady.out" | sort | uniq -c)
[ "$(printf '%s\n' "$calls" | wc -l)" = 1 ] && [[ "$calls" == *" 2 ("* ]] ||
  fail "the two measured runs count different calls (a profile carried over): $calls"

# --- steady.py --together DIR:2: a process that is warm first waits at the barrier until
# the other is warm too, so that their measured runs overlap.
printf '%s\n' "$spec" >"$tmp/together.spec"
"$1" "$3/bench/gpu/steady.py" --together "$tmp/barrier:2" "$tmp/together.spec" >"$tmp/early.out" 2>&1 &
early=$!
for _ in $(seq 600); do compgen -G "$tmp/barrier/1-twice/*" >/dev/null && break; sleep 0.1; done
compgen -G "$tmp/barrier/1-twice/*" >/dev/null || fail "the first process never reached the barrier"
sleep 1
grep -q "^steady: twice:" "$tmp/early.out" && fail "the first process measured without waiting for the second"
late_start=$(date +%s.%N)
"$1" "$3/bench/gpu/steady.py" --together "$tmp/barrier:2" "$tmp/together.spec" >"$tmp/late.out" 2>&1 ||
  fail "the second process failed: $(cat "$tmp/late.out")"
wait $early || fail "the first process failed: $(cat "$tmp/early.out")"
measured_from() { grep -oE 'measured [0-9.]+' "$1" | grep -oE '[0-9.]+$'; }
awk -v early="$(measured_from "$tmp/early.out")" -v late="$(measured_from "$tmp/late.out")" \
  -v launched="$late_start" 'BEGIN { exit !(early != "" && late != "" && early >= launched &&
  early - late < 1 && late - early < 1) }' ||
  fail "measured runs do not overlap: first from $(measured_from "$tmp/early.out"), second \
from $(measured_from "$tmp/late.out"), second launched at $late_start"

finish

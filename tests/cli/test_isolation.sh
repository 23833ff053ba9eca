#!/usr/bin/env bash
# Implementations from outside that crash, hang, throw or exit (tests/plugins/misbehaving.cpp,
# as implementations of the test kernel scaled_tanh): each is a failure with its reason,
# saved and shrunk, and kprop's own run never dies with them. Declared refusals stay
# rejected; a run refused in the main fails; SIGINT/SIGTERM print the summary so far; the
# corpus folder is checked before the search; a finding that cannot be written is printed
# whole; temporary files of a killed writer are removed. Exact lines; timings by pattern.
#   test_isolation.sh KPROP TEST_KERNELS_PLUGIN MISBEHAVING_PLUGIN
set -u
kprop=$1
kernels=$2
misbehaving=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

# stop PID SIGNAL: sends SIGNAL, waits for PID (killing it after 20 s: a run that ignored
# the signal fails the test instead of hanging it) and sets $code to its exit code.
stop() {
  kill "-$2" "$1"
  (sleep 20 && kill -9 "$1" 2>/dev/null) &
  local watchdog=$!
  wait "$1"
  code=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
}

plugins=(--load "$kernels" --load "$misbehaving")
timing='[0-9]+\.[0-9]{2} s'

# --- crash: a failure named by its signal, shrunk (crashes when cols >= 16: rows 1,
# cols 16), kept, replayed in isolation; exit 1, not 139.
corpus=$tmp/corpus
run crash 1 "$kprop" check scaled_tanh --impl crash_wide::scaled_tanh --corpus "$corpus" "${plugins[@]}"
line_like crash out "FAIL after [0-9]+ cases \($timing\): scaled_tanh/crash_wide::scaled_tanh/[a-z_]+/crash \(SIGSEGV\)"
line crash out "defect: scaled_tanh/crash_wide::scaled_tanh/crash (SIGSEGV)"
line crash out "crashed with SIGSEGV"
line crash out "  rows               1"
line crash out "  cols               16"
the_one_file "$corpus/scaled_tanh"
line crash out "kept in the corpus: $kept"
grep -qF '"identity": "scaled_tanh/crash_wide::scaled_tanh/crash (SIGSEGV)"' "$kept" ||
  fail "$kept has not the crash's identity"
grep -qF '"crash_wide::scaled_tanh": "fail"' "$kept" || fail "$kept does not expect the crash"

run crash_replay 0 "$kprop" replay "$kept" "${plugins[@]}"
line crash_replay out "$kept as recorded"
line crash_replay out "  crash_wide::scaled_tanh fail      expected fail      ok"
line crash_replay out "  crash_wide::scaled_tanh: scaled_tanh/crash_wide::scaled_tanh/vs_reference/crash (SIGSEGV)"
line crash_replay out "  crashed with SIGSEGV"

# The run goes on past crashes: with the crash in the corpus, every later one is a known
# defect, and all 30 cases are run; exit 0.
run crash_known 0 "$kprop" check scaled_tanh --impl crash_wide::scaled_tanh --cases 30 --corpus "$corpus" "${plugins[@]}"
line_like crash_known out "  known [0-9]+ x: scaled_tanh/crash_wide::scaled_tanh/crash \(SIGSEGV\)"
line crash_known out "PASS: no new counterexample in 30 cases"

# The 5th forward call of the worker segfaults: still a finding, not the end of kprop.
run crash5 1 "$kprop" check scaled_tanh --impl crash_5th::scaled_tanh --no-corpus --shrink-seconds 5 "${plugins[@]}"
line_like crash5 out "FAIL after [0-9]+ cases \($timing\): scaled_tanh/crash_5th::scaled_tanh/[a-z_]+/crash \(SIGSEGV\)"

# --- exit: the worker's exit code is the reason.
run exit 1 "$kprop" check scaled_tanh --impl exit_wide::scaled_tanh --no-corpus "${plugins[@]}"
line exit out "defect: scaled_tanh/exit_wide::scaled_tanh/exit (code 3)"
line exit out "exited with code 3"

# --- hang: timed out within the limit, as a failure. First one case that hangs (16
# columns), unshrunk, under a 0.2 s limit: the verdict comes in about a second, and a run
# that does not notice the hang itself is killed after 15 s (not the 120 s every run gets).
run_limit=15 run hang_one 1 "$kprop" check scaled_tanh --impl hang_wide::scaled_tanh --no-corpus \
  --property vs_reference --set cols=16 --cases 1 --case-timeout 0.2 --shrink-seconds 0 "${plugins[@]}"
line_like hang_one out "FAIL after 1 cases \($timing\): scaled_tanh/hang_wide::scaled_tanh/vs_reference/hang \(timeout\)"
line_like hang_one out "defect: scaled_tanh/hang_wide::scaled_tanh/hang \(timeout\)( \{.*\})?"
line hang_one out "timed out after 0.2 s"
# Then shrunk like the crash (about 10 s; killed after 45 s).
start=$(date +%s)
run_limit=45 run hang 1 "$kprop" check scaled_tanh --impl hang_wide::scaled_tanh --no-corpus --case-timeout 1 \
  --shrink-seconds 20 "${plugins[@]}"
elapsed=$(($(date +%s) - start))
line_like hang out "FAIL after [0-9]+ cases \($timing\): scaled_tanh/hang_wide::scaled_tanh/[a-z_]+/hang \(timeout\)"
line hang out "defect: scaled_tanh/hang_wide::scaled_tanh/hang (timeout)"
line hang out "timed out after 1 s"
line hang out "  cols               16"
[ "$elapsed" -le 40 ] || fail "the hang took $elapsed s with a 1 s limit per case"

# --- throw: a c10::Error the implementation does not declare is a failure, never a PASS;
# its symptom is "exception", its message (which names the call and the size) stays out.
run throw 1 "$kprop" check scaled_tanh --impl throw_wide::scaled_tanh --no-corpus "${plugins[@]}"
line_like throw out "FAIL after [0-9]+ cases \($timing\): scaled_tanh/throw_wide::scaled_tanh/[a-z_]+/exception"
line throw out "defect: scaled_tanh/throw_wide::scaled_tanh/exception"
line_like throw out "raised: misbehaving scaled_tanh: refuses this case \(forward call [0-9]+, 1x16\)"
no_line_like throw out "^PASS"
# The same in kprop's own process (--no-isolation): still a failure.
run throw_here 1 "$kprop" check scaled_tanh --impl throw_wide::scaled_tanh --no-corpus --no-isolation "${plugins[@]}"
line throw_here out "defect: scaled_tanh/throw_wide::scaled_tanh/exception"
# The 5th call throws: a failure too (it was a PASS with "rejected" counts before).
run throw5 1 "$kprop" check scaled_tanh --impl throw_5th::scaled_tanh --no-corpus "${plugins[@]}"
line_like throw5 out "FAIL after [0-9]+ cases \($timing\): scaled_tanh/throw_5th::scaled_tanh/[a-z_]+/exception"

# --- a declared refusal stays rejected (only cols >= 33 throw here, a minority); exit 0.
KPROP_MISBEHAVE_MIN_COLS=33 run refusal 0 "$kprop" check scaled_tanh --impl throw_wide::scaled_tanh \
  --cases 200 --no-corpus --refusal "refuses this case" "${plugins[@]}"
line_like refusal out "200 cases: [0-9]+ passed, 0 failed, 0 known failures, [1-9][0-9]* rejected, [0-9]+ skipped in $timing \([0-9]+ cases/s\)"
line_like refusal out "  rejected 1 x: misbehaving scaled_tanh: refuses this case \(forward call [0-9]+, [0-9]+x[0-9]+\)"
line refusal out "PASS: no new counterexample in 200 cases"

# --- a run refused in the main fails loudly, naming the refusal and its count; exit 1.
KPROP_MISBEHAVE_MIN_COLS=2 run refused 1 "$kprop" check scaled_tanh --impl throw_wide::scaled_tanh \
  --cases 100 --no-corpus --refusal "refuses this case" "${plugins[@]}"
line_like refused out "FAIL: [0-9]+ of the [0-9]+ cases run were refused; the commonest refusal \([0-9]+ x\): refuses this case"
no_line_like refused out "^PASS"
# The same for a built-in kernel's own refusal.
run refused_builtin 1 "$kprop" check causal_conv1d --set D=33 --cases 20 --no-corpus
line refused_builtin out "FAIL: 19 of the 19 cases run were refused; the commonest refusal (19 x): D must be divisible by BD"
line refused_builtin out "  rejected 16 x: D must be divisible by BD (D = 33, BD = 32)"

# --- a plugin that behaves passes in isolation.
run ok 0 "$kprop" check scaled_tanh --impl plugin_ok::scaled_tanh --cases 50 --no-corpus "${plugins[@]}"
line ok out "PASS: no new counterexample in 50 cases"

# --- SIGINT mid-run: the summary so far, on stdout even though it is a file; exit 130.
# (Background jobs of a script ignore SIGINT unless they install a handler: kprop does.)
"$kprop" check causal_conv1d --cases 100000000 --no-corpus >"$tmp/sigint.out" 2>"$tmp/sigint.err" &
pid=$!
sleep 3
stop "$pid" INT
[ "$code" -eq 130 ] || fail "SIGINT: exit $code (want 130)"
line sigint out "interrupted by SIGINT: the search stopped; the summary so far:"
line_like sigint out "[1-9][0-9]* cases: [0-9]+ passed, 0 failed, 0 known failures, [0-9]+ rejected, [0-9]+ skipped in $timing \([0-9]+ cases/s\)"
line_like sigint out "no new counterexample in the [1-9][0-9]* cases run before the interrupt"
# SIGTERM while an isolated case hangs: the wait ends at once; exit 143.
"$kprop" check scaled_tanh --impl hang_wide::scaled_tanh --case-timeout 600 --no-corpus \
  "${plugins[@]}" >"$tmp/sigterm.out" 2>"$tmp/sigterm.err" &
pid=$!
sleep 4
start=$(date +%s)
stop "$pid" TERM
[ "$code" -eq 143 ] || fail "SIGTERM: exit $code (want 143)"
[ $(($(date +%s) - start)) -le 5 ] || fail "SIGTERM took more than 5 s to end the run"
line sigterm out "interrupted by SIGTERM: the search stopped; the summary so far:"
# SIGINT while a failure is being shrunk (the hang above shrinks for about 10 s): the
# failure is reported and kept with the smallest case so far; exit 1.
"$kprop" check scaled_tanh --impl hang_wide::scaled_tanh --case-timeout 1 --shrink-seconds 60 \
  --corpus "$tmp/shrinking" "${plugins[@]}" >"$tmp/sigshrink.out" 2>"$tmp/sigshrink.err" &
pid=$!
sleep 5
stop "$pid" INT
[ "$code" -eq 1 ] || fail "SIGINT while shrinking: exit $code (want 1)"
line_like sigshrink out "shrunk in [0-9]+ steps, [0-9]+ evaluations, $timing \(interrupted by SIGINT: may not be minimal\)"
line_like sigshrink out "defect: scaled_tanh/hang_wide::scaled_tanh/hang \\(timeout\\)( \\{.*\\})?"
line_like sigshrink out "kept in the corpus: $tmp/shrinking/scaled_tanh/.*[.]json"

# --- an unwritable corpus folder: exit 2 before the search, naming the folder.
touch "$tmp/a-file"
run unwritable 2 "$kprop" check scaled_tanh --impl crash_wide::scaled_tanh --corpus "$tmp/a-file/corpus" "${plugins[@]}"
only unwritable err "kprop: corpus folder $tmp/a-file/corpus: cannot be written: $tmp/a-file is not a folder"
only unwritable out ""

# --- a finding that cannot be written (its kernel's folder is a file) is printed whole.
mkdir -p "$tmp/blocked"
touch "$tmp/blocked/scaled_tanh"
run unwritten 1 "$kprop" check scaled_tanh --impl crash_wide::scaled_tanh --corpus "$tmp/blocked" "${plugins[@]}"
line_like unwritten out "! could not keep this finding: .*"
line unwritten out "the case file, whole:"
line unwritten out '  "identity": "scaled_tanh/crash_wide::scaled_tanh/crash (SIGSEGV)",'
line unwritten out '  "schema": "kprop-case/2",'

# --- temporary files of a killed writer are removed at the next run's start; one of a
# writer that still runs (this shell) is kept.
stale_corpus=$tmp/stale
mkdir -p "$stale_corpus/scaled_tanh"
echo '{"half": ' >"$stale_corpus/scaled_tanh/x.json.tmp.4194303"
echo '{"half": ' >"$stale_corpus/scaled_tanh/y.json.tmp.$$"
run stale 0 "$kprop" check scaled_tanh --impl plugin_ok::scaled_tanh --cases 5 --corpus "$stale_corpus" "${plugins[@]}"
line stale err "kprop: removed $stale_corpus/scaled_tanh/x.json.tmp.4194303 (left by a writer that was killed)"
[ ! -e "$stale_corpus/scaled_tanh/x.json.tmp.4194303" ] || fail "the stale temporary file is still there"
[ -e "$stale_corpus/scaled_tanh/y.json.tmp.$$" ] || fail "the temporary file of a running writer was removed"

finish

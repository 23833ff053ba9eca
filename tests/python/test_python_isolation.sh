#!/usr/bin/env bash
# Isolation of Python kernels (tests/python/misbehaving_ops.py): under the Python entry the
# worker is the Python entry again, so a kernel that raises, calls os._exit, segfaults or
# hangs is a failure with its reason, shrunk and kept, and kprop's run goes on. Exact lines;
# timings by pattern.
#   test_python_isolation.sh PYTHON PYTHON_DIR SOURCE_DIR
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
. "$(dirname "$0")/python_entry.sh" "$1" "$2" "$3"
mod=(--import misbehaving_ops)

# --- a Python exception is a failure (symptom "exception"), never a pass; shrunk to W = 3.
run raise 1 "${py[@]}" check causal_conv1d --impl py_raise_wide::causal_conv1d --no-corpus "${mod[@]}"
line_like raise out "FAIL after [0-9]+ cases \($timing\): causal_conv1d/py_raise_wide::causal_conv1d/[a-z_]+/exception"
line raise out "defect: causal_conv1d/py_raise_wide::causal_conv1d/exception"
line raise out "raised: ValueError: py_raise_wide: W = 3 is too wide for me (raised at misbehaving_ops.py:32 in forward)"
line raise out "  W                  3"
# The same in kprop's own process (--no-isolation): still a failure.
run raise_here 1 "${py[@]}" check causal_conv1d --impl py_raise_wide::causal_conv1d --no-corpus --no-isolation "${mod[@]}"
line raise_here out "defect: causal_conv1d/py_raise_wide::causal_conv1d/exception"
# The 5th call raises: a failure too.
run raise5 1 "${py[@]}" check causal_conv1d --impl py_raise_5th::causal_conv1d --no-corpus --shrink-seconds 5 "${mod[@]}"
line_like raise5 out "FAIL after [0-9]+ cases \($timing\): causal_conv1d/py_raise_5th::causal_conv1d/[a-z_]+/exception"

# --- a CUDA error poisons the worker's context (emulated: every later call raises it too).
# The worker retires after answering it, so each case runs in a fresh one: the shrink still
# ends at W = 3 (with one worker throughout, every smaller case would fail as well).
run cuda 1 "${py[@]}" check causal_conv1d --impl py_cuda_wide::causal_conv1d --no-corpus "${mod[@]}"
line cuda out "defect: causal_conv1d/py_cuda_wide::causal_conv1d/exception"
line cuda out "raised: RuntimeError: CUDA error: an illegal memory access was encountered (raised at misbehaving_ops.py:42 in forward)"
line cuda out "  W                  3"

# --- os._exit(3): the worker's exit code is the reason.
run exit 1 "${py[@]}" check causal_conv1d --impl py_exit_wide::causal_conv1d --no-corpus "${mod[@]}"
line exit out "defect: causal_conv1d/py_exit_wide::causal_conv1d/exit (code 3)"
line exit out "exited with code 3"
line exit out "  W                  3"

# --- a hang (time.sleep): the worker is killed at the per-case limit and the case is a
# failure, "hang (timeout)". W pinned to 3 (every call hangs), one case, no shrinking
# (each hanging step would cost a fresh Python worker): the verdict in a few seconds, and
# a run that does not notice the hang itself is killed after 30 s, not 120.
start=$(date +%s)
run_limit=30 run hang 1 "${py[@]}" check causal_conv1d --impl py_hang_wide::causal_conv1d --no-corpus \
  --property vs_reference --set W=3 --cases 1 --case-timeout 0.5 --shrink-seconds 0 "${mod[@]}"
elapsed=$(($(date +%s) - start))
line_like hang out "FAIL after 1 cases \($timing\): causal_conv1d/py_hang_wide::causal_conv1d/vs_reference/hang \(timeout\)"
line_like hang out "defect: causal_conv1d/py_hang_wide::causal_conv1d/hang \(timeout\)( \{.*\})?"
line hang out "timed out after 0.5 s"
[ "$elapsed" -le 20 ] || fail "the Python hang took $elapsed s with a 0.5 s limit per case"

# --- a segfault: a failure named by its signal, shrunk, kept, replayed in a Python worker.
corpus=$tmp/corpus
run segv 1 "${py[@]}" check causal_conv1d --impl py_segv_wide::causal_conv1d --corpus "$corpus" "${mod[@]}"
line segv out "defect: causal_conv1d/py_segv_wide::causal_conv1d/crash (SIGSEGV)"
line segv out "crashed with SIGSEGV"
line segv out "  W                  3"
the_one_file "$corpus/causal_conv1d"
run segv_replay 0 "${py[@]}" replay "$kept" "${mod[@]}"
line segv_replay out "$kept as recorded"
line segv_replay out "  crashed with SIGSEGV"
# The run goes on past crashes (the shrink above already went on past each crashing step):
# with the crash kept, a later one is a known defect and all 3 cases run; exit 0. Few
# cases: each known crash is diagnosed again, and each crashing step costs a fresh Python
# worker (1 s idle, 3-5 s on a loaded machine).
run segv_known 0 "${py[@]}" check causal_conv1d --impl py_segv_wide::causal_conv1d --cases 3 \
  --property vs_reference --corpus "$corpus" "${mod[@]}"
line_like segv_known out "  known [0-9]+ x: causal_conv1d/py_segv_wide::causal_conv1d/crash \(SIGSEGV\)"
line segv_known out "PASS: no new counterexample in 3 cases"

finish

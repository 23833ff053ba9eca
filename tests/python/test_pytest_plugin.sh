#!/usr/bin/env bash
# kprop's pytest plugin (python/kprop/pytest_plugin.py, docs/pytest.md) and the pip package
# that registers it (pyproject.toml, setup.py). Exact lines; timings by pattern.
#   test_pytest_plugin.sh MODE PYTHON PYTHON_DIR SOURCE_DIR [BUILD_DIR BUILD_TYPE]
# MODE:
#   plugin  pytest -p kprop.pytest_plugin over tests/python/pytest_example/: a Check on
#           planted_swiglu's fixed commit passes, one on its odd-width defect fails with the
#           identity and a replay command that works; case files named on the command line
#           or by --kprop-corpus are one replay test each; nothing else is collected.
#   pip     `pip install --no-build-isolation` into a venv (--system-site-packages: Debian's
#           torch) of the build under test (KPROP_BUILD_DIR=BUILD_DIR, nothing compiled):
#           `python -m kprop` and the plugin's entry point work without PYTHONPATH.
#   fresh   `pip install -e` of a copy of the source (git's files), configured and built by
#           setup.py in the copy's build-pip: one folder down, as BUILD_DIR is in the
#           source, so ccache finds BUILD_DIR's objects (~1 min on 2 cores, ~8 without).
set -u
mode=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
. "$(dirname "$0")/python_entry.sh" "$1" "$2" "$3"
python=$1
source_dir=$3
build_dir=${4:-}
build_type=${5:-RelWithDebInfo}
ex=$source_dir/tests/python/pytest_example
export PYTHONDONTWRITEBYTECODE=1  # nothing written beside the sources
clean=(env -u PYTHONPATH)
mkdir -p "$tmp/run"
cd "$tmp/run" || exit 1  # an empty folder: pytest collects only what it is told
pytest=("$python" -m pytest -p no:cacheprovider)
plugin=(-p kprop.pytest_plugin)

# failure RUN NAME TITLE: what the plugin printed for the failed test TITLE in RUN's output
# (from its header to the captured output, which holds kprop's own report), as the output
# of a run NAME, for `line`.
failure() {
  sed -En "/^_* $(re "$3") _*\$/,/^-* Captured .* -*\$/p" "$tmp/$1.out" >"$tmp/$2.out"
  [ -s "$tmp/$2.out" ] || fail "$1.out has no failure '$3'"
}

if [ "$mode" = plugin ]; then
  # --- Checks: the fixed commit passes with --kprop-cases cases; the planted defect fails
  # with its identity, the case kept under --basetemp and the commands that replay it. The
  # adapter (swiglu_commits) is importable only from its test module's folder, which the
  # printed commands add to PYTHONPATH.
  run checks 1 "${pytest[@]}" "${plugin[@]}" "$ex/test_swiglu_checks.py" --kprop-cases 30 \
    --basetemp "$tmp/bt" -rA
  line_like checks out "=+ 1 failed, 1 passed, 2 skipped in .* =+"
  line_like checks out "PASSED .*/test_swiglu_checks.py::test_fixed"
  line_like checks out "FAILED .*/test_swiglu_checks.py::test_odd_width"
  line_like checks out "SKIPPED \[2\] .*/test_swiglu_checks.py:[0-9]+: no CUDA device"
  line checks out "kprop check swiglu --impl fixed::swiglu --seed 0: 30 cases over vs_reference, gradient, determinism"
  failure checks odd_width test_odd_width
  line odd_width out "defect: swiglu/odd_width::swiglu/c"
  line_like odd_width out "  minimal case: cols=1 distribution=normal dtype=float32 property=vs_reference rows=1 seed=[0-9]+"
  the_one_file "$tmp/bt/kprop-test_odd_width0/swiglu"
  env_path="PYTHONPATH=$ex:$PYTHONPATH"
  line odd_width out "$env_path $python -m kprop check swiglu --impl odd_width::swiglu --cases 30 --property vs_reference --import swiglu_commits"
  line odd_width out "  kept: $kept"
  replay="$env_path $python -m kprop replay $kept --import swiglu_commits"
  line odd_width out "  replay: $replay"
  line odd_width out "  as a script without kprop: $env_path $python -m kprop repro $kept --import swiglu_commits"
  # The printed command replays the kept case, from anywhere.
  run replay_printed 0 bash -c "cd / && $replay"
  line replay_printed out "$kept as recorded"

  # --- --kprop-isolate: the implementation runs in a worker, which imports the adapter
  # through the PYTHONPATH the plugin hands it.
  run isolated 1 "${pytest[@]}" "${plugin[@]}" "$ex/test_swiglu_checks.py" -k test_odd_width \
    --kprop-isolate --kprop-cases 30 --basetemp "$tmp/bt_isolated"
  line_like isolated out "=+ 1 failed, 3 deselected in .* =+"
  failure isolated isolated_odd_width test_odd_width
  line isolated_odd_width out "defect: swiglu/odd_width::swiglu/c"
  line_like isolated out "isolation: [0-9]+ cases in worker processes, 1 started .*"

  # --- A folder of case files named on the command line: one replay test each.
  run corpus 0 "${pytest[@]}" "${plugin[@]}" "$ex/corpus" -v
  line_like corpus out ".*/pytest_example/corpus/dht-pass-through-dropped--tiled-fixed\.json::replay PASSED .*"
  line_like corpus out ".*/pytest_example/corpus/dh0-row-leak--tiled-clamped\.json::replay PASSED .*"
  line_like corpus out "=+ 2 passed in .* =+"

  # --- --kprop-corpus: a case whose recorded verdict no longer holds fails with its
  # identity, what changed and the replay command; the case the check above kept replays
  # with the module its found_by names; a JSON file that is no case file is no test.
  mkdir -p "$tmp/changed"
  sed 's/"tiled@fixed": "fail"/"tiled@fixed": "pass"/' \
    "$ex/corpus/dht-pass-through-dropped--tiled-fixed.json" >"$tmp/changed/claims-fixed.json"
  printf '{"schema": "something-else/1"}\n' >"$tmp/changed/other.json"
  PYTHONPATH=$PYTHONPATH:$ex run changed 1 "${pytest[@]}" "${plugin[@]}" \
    --kprop-corpus "$tmp/changed" --kprop-corpus "$(dirname "$kept")" -v
  line_like changed out "collecting \.\.\. collected 2 items"
  line_like changed out ".*/$(basename "$kept")::replay PASSED .*"
  failure changed claims_fixed "kprop replay claims-fixed.json"
  line claims_fixed out "$tmp/changed/claims-fixed.json: CHANGED (exit 1)"
  line claims_fixed out "defect: causal_conv1d/tiled@fixed/dh0 [sequence shorter than W] {initial_state, final_state_grad}"
  line claims_fixed out "  tiled@fixed: fail, expected pass"
  line claims_fixed out "replay: $python -m kprop replay $tmp/changed/claims-fixed.json"
  line_like changed out "=+ 1 failed, 1 passed in .* =+"

  # --- A run that names no case file collects none: the test module only.
  cd "$ex" || exit 1
  run not_named 0 "${pytest[@]}" "${plugin[@]}" --collect-only -q
  cd "$tmp/run" || exit 1
  line_like not_named out "4 tests? collected in .*"
  no_line_like not_named out "\.json"

  # --- A check kprop cannot run (an unknown implementation) fails with kprop's message
  # (kprop.UsageError's, not a pointer to stderr).
  mkdir -p "$tmp/bad"
  printf 'from kprop.pytest import Check\ntest_unknown = Check("swiglu", impl="nosuch::swiglu")\n' \
    >"$tmp/bad/test_bad.py"
  run bad 1 "${pytest[@]}" "${plugin[@]}" "$tmp/bad/test_bad.py"
  failure bad bad_usage test_unknown
  line_like bad_usage out "bad usage \(exit 2\): unknown implementation 'nosuch::swiglu' of swiglu; known: .*"
  finish
  exit
fi

# --- The pip package: a venv that sees Debian's torch, an install, then no PYTHONPATH.
run venv 0 "$python" -m venv --system-site-packages "$tmp/venv"
venv_python=$tmp/venv/bin/python
if [ "$mode" = pip ]; then
  # What the package is made of, out of the source (an in-tree build writes beside it).
  mkdir -p "$tmp/src"
  cp -r "$source_dir/pyproject.toml" "$source_dir/setup.py" "$source_dir/README.md" \
    "$source_dir/python" "$tmp/src/"
  run_limit=600 run install 0 "${clean[@]}" KPROP_BUILD_DIR="$build_dir" KPROP_SKIP_BUILD=1 \
    "$tmp/venv/bin/pip" install --no-build-isolation --no-index "$tmp/src"
  site=$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  package=$site/kprop
elif [ "$mode" = fresh ]; then
  # The source as git has it (tracked files and new ones it does not ignore).
  mkdir -p "$tmp/src"
  (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$tmp/src") || fail "could not copy the source"
  run_limit=1800 run install 0 "${clean[@]}" KPROP_BUILD_TYPE="$build_type" \
    "$tmp/venv/bin/pip" install -v --no-build-isolation --no-index -e "$tmp/src"
  line_like install err ".*kprop setup.py: \\$ .*cmake -S $tmp/src -B $tmp/src/build-pip .*-DPython3_EXECUTABLE=$tmp/venv/bin/python3?( .*|$)"
  line_like install err ".*kprop setup.py: imports under $tmp/venv/bin/python3?: [0-9]+ kernels"
  package=$tmp/src/python/kprop  # editable: the package is the source's
else
  fail "unknown mode $mode"
  finish
fi

# Imported from the install, the extension beside libkprop.so, which it finds by $ORIGIN.
run where 0 "${clean[@]}" "$venv_python" -c 'import kprop, kprop._kprop; print(kprop.__file__); print(kprop._kprop.__file__)'
line where out "$package/__init__.py"
line_like where out "$(re "$package")/_kprop\..*\.so"
[ -f "$package/libkprop.so" ] || fail "no libkprop.so beside the extension in $package"
readelf -d "$package"/_kprop.*.so | grep -q 'RUNPATH.*\$ORIGIN' || fail "the extension's runpath has no \$ORIGIN"

# python -m kprop from any folder, no PYTHONPATH.
run check 0 "${clean[@]}" "$venv_python" -m kprop check causal_conv1d --cases 20 --no-corpus
line check out "PASS: no new counterexample in 20 cases"

# The plugin by its pytest11 entry point (no -p), and with -p too (loaded once). The test
# module's folder and planted_swiglu's are the only paths given.
checks=("$ex/test_swiglu_checks.py" --kprop-cases 20 --basetemp "$tmp/bt")
for how in entry_point with_p; do
  extra=()
  [ $how = with_p ] && extra=("${plugin[@]}")
  run $how 1 env PYTHONPATH="$source_dir/tests/python" "$venv_python" -m pytest -p no:cacheprovider \
    "${extra[@]}" "${checks[@]}"
  line_like $how out "=+ 1 failed, 1 passed, 2 skipped in .* =+"
  failure $how ${how}_odd_width test_odd_width
  line ${how}_odd_width out "defect: swiglu/odd_width::swiglu/c"
  line_like ${how}_odd_width out "  replay: PYTHONPATH=$ex:$source_dir/tests/python $tmp/venv/bin/python -m kprop replay $tmp/bt/.*\.json --import swiglu_commits"
done
finish

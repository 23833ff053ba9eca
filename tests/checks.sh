# The checks every shell test uses, so that each script says only what it tests. Source
# it after setting $tmp (a scratch folder); `finish` ends the script with its verdict.
# Patterns are matched against whole lines, so "pass" never matches "passed" or a path.
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# re TEXT: TEXT as a regular expression that matches it literally.
re() { printf '%s' "$1" | sed -e 's/[][\.*^$+?(){}|]/\\&/g'; }

# expect CODE PATTERN CMD...: CMD exits with CODE and a line of its output (stdout and
# stderr together, in $tmp/out) matches ^PATTERN$ (extended regular expression).
expect() {
  local code=$1 pattern=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qE -- "^($pattern)\$" "$tmp/out"; then
    fail "'$*' exited $got (want $code), output:"
    grep -v '^	NEW_FUNC\|^#[0-9]' "$tmp/out" | tail -30 | sed 's/^/    /'
    echo "    (wanted a line /^($pattern)\$/)"
  else
    echo "ok: $*"
  fi
}

# also PATTERN / never PATTERN: a line of the last expect's output matches ^PATTERN$ /
# none does.
also() {
  if grep -qE -- "^($1)\$" "$tmp/out"; then
    echo "ok:   and /$1/"
  else
    fail "the output of the last command has no line /^($1)\$/:"
    grep -v '^	NEW_FUNC\|^#[0-9]' "$tmp/out" | tail -30 | sed 's/^/    /'
  fi
}
never() {
  if grep -qE -- "^($1)\$" "$tmp/out"; then
    fail "a line matches /^($1)\$/: $(grep -E -- "^($1)\$" "$tmp/out" | head -1)"
  else
    echo "ok:   and never /$1/"
  fi
}

# run NAME CODE CMD...: runs CMD with stdout in $tmp/NAME.out (a file, not a terminal) and
# stderr in $tmp/NAME.err, and checks its exit code. A run past 120 s (a hang nobody
# caught) is killed and fails with exit 124; `run_limit=S run ...` kills it after S s
# instead (a run that must notice a hang itself, fast).
run() {
  local name=$1 code=$2
  shift 2
  timeout "${run_limit:-120}" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local got=$?
  if [ "$got" -ne "$code" ]; then
    fail "'$*' exited $got (want $code); stdout, then stderr:"
    sed 's/^/    /' "$tmp/$name.out" | head -40
    sed 's/^/    /' "$tmp/$name.err" | head -10
  else
    echo "ok: exit $code: $*"
  fi
}

# line NAME STREAM TEXT: run NAME's STREAM (out or err) holds TEXT as a whole line;
# line_like: a whole line matches REGEX (lines with timings); no_line_like: no line
# matches; only: the stream is exactly TEXT (one line), or empty for "".
line() { grep -qxF -- "$3" "$tmp/$1.$2" || fail "$1.$2 has no line '$3'"; }
line_like() { grep -qxE -- "$3" "$tmp/$1.$2" || fail "$1.$2 has no line matching /$3/"; }
no_line_like() { ! grep -qE -- "$3" "$tmp/$1.$2" || fail "$1.$2 has a line matching /$3/"; }
only() {
  [ "$(cat "$tmp/$1.$2")" = "$3" ] || fail "$1.$2 is '$(cat "$tmp/$1.$2")', want '$3'"
}

# the_one_file DIR: sets $kept to the one file DIR holds (a corpus folder after a finding);
# fails, naming what is there, when it holds none or several.
the_one_file() {
  local files=("$1"/*.json)
  if [ "${#files[@]}" -ne 1 ] || [ ! -f "${files[0]}" ]; then
    fail "want one case file in $1, got: ${files[*]}"
  fi
  kept=${files[0]}
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}

#!/usr/bin/env bash
# One behaviour per option: an option that several commands take is refused, or taken, the
# same way by each of them. Which commands take an option is read from their --help, so
# that a command or option added later is held to the same rules without editing this.
#   test_shared_options.sh KPROP SOURCE_DIR
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
kprop=$1
case_file=$2/corpus/causal_conv1d/dh0-over-count--as-reported--tiled-original.json
touch "$tmp/a-file"

# A cheap command line of each command, to which one option at a time is added.
declare -A base=(
  [check]="check causal_conv1d --cases 1 --no-corpus"
  [hunt]="hunt causal_conv1d --cases 1 --no-corpus"
  [replay]="replay $case_file"
  [report]="report tolerance --cases 1"
  [sweep]="sweep causal_conv1d --x W=2 --y D=32"
  [shrink]="shrink $case_file --no-corpus"
  [nightly]="nightly --budget 1s --jobs 1 --out $tmp/nightly"
  [corpus:merge]="corpus merge $tmp/no-findings --into $tmp/merged"
)
mkdir -p "$tmp/no-findings"
# The commands, a command of commands as "corpus:merge"; repro is Python's (docs/repro.md),
# the executable only points there.
subcommands() { awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'; }
commands=
for c in $("$kprop" --help | subcommands | grep -vx repro); do
  nested=$("$kprop" "$c" --help | subcommands)
  if [ -n "$nested" ]; then for n in $nested; do commands+=" $c:$n"; done; else commands+=" $c"; fi
done
[ -n "$commands" ] || fail "kprop --help lists no commands"
for c in $commands; do
  [ -n "${base[$c]:-}" ] || fail "no command line for '$c' here: add one to base"
done

# Each command's --help, read once (a start of kprop loads libtorch: ~0.6 s).
declare -A help
for c in $commands; do help[$c]=$("$kprop" ${c/:/ } --help); done
takes() { grep -qE -- "^ +$2( |,|$)" <<<"${help[$1]}"; }

# refused OPTION VALUE PATTERN: every command that takes OPTION exits 2 with a line
# matching PATTERN for VALUE; at least two commands take it (else it is not shared).
refused() {
  local option=$1 value=$2 pattern=$3 n=0 c
  for c in $commands; do
    takes "$c" "$option" || continue
    local line=${base[$c]}
    [ "$option" = --corpus ] && line=${line//--no-corpus/}  # which would leave it unused
    # shellcheck disable=SC2086
    expect 2 "$pattern" "$kprop" $line "$option" "$value"
    n=$((n + 1))
  done
  [ "$n" -ge 2 ] || fail "$option is taken by $n command(s): not shared any more, drop it here"
}

refused --seed -1 "--seed: '-1' is negative"
refused --cases 0 "--cases: Value 0 not in range 1 to 1000000000"
refused --shrink-seconds -1 "--shrink-seconds: '-1' is not a number in 0..1000000"
refused --case-timeout 0 "--case-timeout: '0' is not a number in .*"
refused --device nope "kprop: --device 'nope': expected cpu, cuda or cuda:N"
refused --impl nosuch "kprop: (.*\.json: )?unknown implementation 'nosuch' of .*"
refused --kernel nosuch "kprop: unknown kernel 'nosuch'; known kernels: .*"
refused --property nosuch "kprop: unknown property 'nosuch'; known properties: .*"
refused --dtype nope "kprop: unknown dtype 'nope'"
refused --set nonsense "kprop: --set 'nonsense': expected NAME=VALUE"
refused --corpus "$tmp/a-file/x" "kprop: corpus folder .*/a-file/x: cannot be written: .*/a-file is not a folder"
refused --load "$tmp/none.so" "kprop: cannot load operator library .*/none\.so: .*"
refused --import some_module "kprop: --import some_module: only kprop's Python entry imports modules: .*"

# --json: stdout holds one JSON document and nothing else, in every command.
for c in $commands; do
  # shellcheck disable=SC2086
  timeout 120 "$kprop" ${base[$c]} --json >"$tmp/$c.json" 2>/dev/null
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/$c.json" 2>/dev/null &&
    echo "ok: $c --json prints JSON alone" || fail "$c --json: stdout is not one JSON document: $(head -c 200 "$tmp/$c.json")"
done

# A repeatable option takes one value per occurrence in every command: what follows it
# is the command's positional, not a second value.
expect 0 "PASS: no new counterexample in 1 cases" "$kprop" check --dtype float32 causal_conv1d --cases 1 --no-corpus
expect 0 "PASS: no new counterexample in 1 cases" "$kprop" check --property gradient causal_conv1d --cases 1 --no-corpus
expect 0 "PASS: no new counterexample in 1 cases" "$kprop" check --set W=2 causal_conv1d --cases 1 --no-corpus
expect 0 ".*" "$kprop" report --dtype float32 tolerance --cases 1
expect 0 ".*" "$kprop" sweep --set D=32 causal_conv1d --x W=2 --y activation=none,silu
finish

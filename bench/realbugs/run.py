#!/usr/bin/env python3
"""kprop's benchmark of real bugs: each bug of bugs.json at the upstream commit that had it
and at the commit that fixed it, through the adapter users call (examples/upstream/).

A bug is *caught* when kprop's search, from an empty corpus, fails at the buggy commit with
an identity that the bug's `expect` (a regular expression) matches, and passes at the fixed commit; *missed*
when the buggy commit passes; a *false alarm* when the fixed commit fails with that identity
too. When the fixed commit's search stops on another defect, the verdict says so instead
of "caught"; an entry's `known` case files (other defects those commits have) seed both
sides' corpora, so that they are counted as known and the search goes on. Anything else either side shows is listed as another finding, never hidden.

    # once, where the upstream repositories are cloned (any clone with the commits):
    bench/realbugs/run.py prepare --git fla=~/src/flash-linear-attention \\
        --git liger=~/src/Liger-Kernel --into .upstream
    # on a machine with the GPU the kernels need (python3 with torch, Triton, kprop built):
    PYTHONPATH=build/python:examples/upstream bench/realbugs/run.py run --checkouts .upstream \\
        --results build/realbugs [--only liger-477 ...] [--cases 200] [--box 300] [--jobs 8]

`prepare` writes each side's source folders to <into>/<project>-<commit> (git archive). `run`
starts every side as its own `python3 -m kprop check ... --json` process, at most --jobs at a
time, each in a time box (SIGINT at its end: kprop reports what it has). For each bug found
at its buggy commit, `kprop repro` writes the standalone script from the kept case, and the
script runs against each side's sources alone: it must fail at the buggy commit and pass at
the fixed one. summary.md and summary.json go to --results, each side's log beside them.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the repository: `known` paths are relative to it


def load(path):
    with open(path) as f:
        manifest = json.load(f)
    if manifest.get("schema") != "kprop-realbugs/1":
        sys.exit(f"{path}: schema: expected kprop-realbugs/1")
    for i, bug in enumerate(manifest["bugs"]):
        for field in ("name", "project", "buggy", "fixed", "kernel", "impl", "properties", "expect"):
            if field not in bug:
                print(f"{path}: bugs[{i}]: missing field '{field}'", file=sys.stderr)
                sys.exit(2)
        for known in bug.get("known", []):
            if not os.path.isfile(os.path.join(ROOT, known)):
                print(f"{path}: bugs[{i}].known: no case file {known}", file=sys.stderr)
                sys.exit(2)
        if bug["project"] not in manifest["projects"]:
            print(f"{path}: bugs[{i}].project: '{bug['project']}' is not in projects", file=sys.stderr)
            sys.exit(2)
    return manifest


def checkout_name(project, commit):
    return f"{project}-{commit}"


def prepare(manifest, gits, into):
    os.makedirs(into, exist_ok=True)
    for bug in manifest["bugs"]:
        project = manifest["projects"][bug["project"]]
        git = gits.get(bug["project"])
        if git is None:
            print(f"prepare: no --git {bug['project']}=DIR: {bug['name']} skipped", file=sys.stderr)
            continue
        for commit in (bug["buggy"], bug["fixed"]):
            target = os.path.join(into, checkout_name(bug["project"], commit))
            if os.path.isdir(target):
                continue
            partial = target + ".partial"  # renamed when whole: never half a checkout
            subprocess.run(["rm", "-rf", partial], check=True)
            os.makedirs(partial)
            archive = subprocess.Popen(["git", "-C", git, "archive", commit] + project["folders"],
                                       stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", partial], stdin=archive.stdout, check=True)
            if archive.wait() != 0:
                sys.exit(f"prepare: git archive {commit} failed in {git}")
            with open(os.path.join(partial, "COMMIT"), "w") as f:
                f.write(commit + "\n")
            os.rename(partial, target)
            print(f"prepare: {target}")


def command(bug, args, corpus):
    cmd = [sys.executable, "-m", "kprop", "check", bug["kernel"], "--import", args.adapter_of(bug),
           "--impl", bug["impl"], "--device", args.device, "--seed", str(args.seed),
           "--cases", str(args.cases), "--corpus", corpus, "--json",
           "--shrink-seconds", str(args.shrink_seconds), "--case-timeout", str(args.case_timeout)]
    for p in bug["properties"]:
        cmd += ["--property", p]
    return cmd + bug.get("args", [])


def verdict_of(result, expect):
    """(shows the bug, its finding, the other findings) of one side's JSON."""
    findings = []
    if result and result.get("failure"):
        findings.append(result["failure"])
    findings += (result or {}).get("also", [])
    ours = [f for f in findings if re.search(expect, f["identity"])]
    others = [f for f in findings if not re.search(expect, f["identity"])]
    return bool(ours), (ours[0] if ours else None), others


def sides_of(manifest, args):
    bugs = [b for b in manifest["bugs"] if not args.only or b["name"] in args.only]
    sides = []
    for bug in bugs:
        project = manifest["projects"][bug["project"]]
        for side in ("buggy", "fixed"):
            source = os.path.join(args.checkouts, checkout_name(bug["project"], bug[side]))
            name = f"{bug['name']}-{side}"
            sides.append({"bug": bug, "side": side, "name": name, "source": source,
                          "env": {project["source_env"]: source},
                          "log": os.path.join(args.results, name + ".log"),
                          "json": os.path.join(args.results, name + ".json"),
                          "corpus": os.path.join(args.results, "corpus-" + name)})
    return sides


def run(manifest, args):
    os.makedirs(args.results, exist_ok=True)
    sides = sides_of(manifest, args)
    running, queue = [], list(sides)
    while queue or running:
        while queue and len(running) < args.jobs:
            s = queue.pop(0)
            if not os.path.isdir(s["source"]):
                s["error"] = f"no checkout {s['source']} (run prepare)"
                continue
            # Other defects of these commits, known already: counted, not stopped at.
            os.makedirs(s["corpus"], exist_ok=True)
            for known in s["bug"].get("known", []):
                shutil.copy(os.path.join(ROOT, known), s["corpus"])
            env = dict(os.environ, **s["env"])
            s["started"] = time.time()
            s["proc"] = subprocess.Popen(command(s["bug"], args, s["corpus"]), env=env,
                                         stdout=open(s["json"], "w"), stderr=open(s["log"], "w"))
            print(f"run: {s['name']} started", flush=True)
            running.append(s)
        time.sleep(1)
        for s in list(running):
            if s["proc"].poll() is None and not s.get("boxed") and time.time() - s["started"] > args.box:
                s["proc"].send_signal(signal.SIGINT)  # kprop prints what it has
                s["boxed"] = True
            if s["proc"].poll() is not None:
                s["seconds"] = round(time.time() - s["started"], 1)
                s["exit"] = s["proc"].returncode
                running.remove(s)
                print(f"run: {s['name']} exit {s['exit']}", flush=True)
    reproduce(sides, args)
    report(sides, args)


def kept_file(result, expect):
    """The case file kept for the side's finding of the bug, or None."""
    if result and result.get("failure") and re.search(expect, result["failure"]["identity"]):
        return (result.get("corpus") or {}).get("path")
    for f in (result or {}).get("also", []):
        if re.search(expect, f["identity"]):
            return (f.get("corpus") or {}).get("path")
    return None


def reproduce(sides, args):
    """For each bug found at its buggy commit: `kprop repro` writes the standalone script from
    the kept case, and the script runs against each side's sources alone (PYTHONPATH is the
    project's import root: no kprop). <bug>-repro.json says how each run ended. Bugs run
    --jobs at a time: each script is mostly Python, torch and Triton starting."""
    by_bug = {}
    for s in sides:
        by_bug.setdefault(s["bug"]["name"], {})[s["side"]] = s
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda item: reproduce_bug(*item, args), by_bug.items()))


def reproduce_bug(name, pair, args):
    """reproduce() for one bug."""
    buggy, bug = pair["buggy"], pair["buggy"]["bug"]
    kept = kept_file(read_json(buggy["json"]), bug["expect"])
    if not kept or "error" in buggy or "error" in pair["fixed"]:
        return
    script = os.path.join(args.results, name + "-repro.py")
    record = {"kept": kept, "script": script}
    written = subprocess.run([sys.executable, "-m", "kprop", "repro", kept, "--import",
                              args.adapter_of(bug), "--device", args.device, "--out", script],
                             env=dict(os.environ, **buggy["env"]), capture_output=True, text=True)
    record["written"] = written.returncode == 0
    record["write_error"] = written.stderr.strip().splitlines()[-1:] if written.returncode else []
    for side in ("buggy", "fixed") if record["written"] else ():
        s = pair[side]
        root = os.path.join(s["source"], args.import_root_of(bug))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        try:
            ran = subprocess.run([sys.executable, script], env=dict(env, PYTHONPATH=root),
                                 capture_output=True, text=True, timeout=args.case_timeout)
            code, text = ran.returncode, ran.stdout + ran.stderr
        except subprocess.TimeoutExpired:
            code, text = "timeout", ""
        with open(os.path.join(args.results, f"{name}-repro-{side}.log"), "w") as f:
            f.write(text)
        record[side] = {"exit": code, "last": text.strip().splitlines()[-1:]}
    with open(os.path.join(args.results, name + "-repro.json"), "w") as f:
        json.dump(record, f, indent=2)
    print(f"repro: {name}: {record.get('buggy', {}).get('exit')} at the buggy commit, "
          f"{record.get('fixed', {}).get('exit')} at the fixed", flush=True)


def repro_cell(record):
    """The standalone script's verdict: it must fail at the buggy commit and pass at the fixed."""
    if record is None:
        return "-"
    if not record.get("written"):
        return "not written: " + " ".join(record.get("write_error", []))
    b, f = record["buggy"]["exit"], record["fixed"]["exit"]
    if b not in (0, "timeout") and f == 0:
        return "fails at the buggy, passes at the fixed"
    return f"exit {b} at the buggy, {f} at the fixed"


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def report(sides, args):
    rows, out = [], []
    by_bug = {}
    for s in sides:
        by_bug.setdefault(s["bug"]["name"], {})[s["side"]] = s
    for name, pair in by_bug.items():
        bug = pair["buggy"]["bug"]
        entry = {"name": name, "fix": bug.get("fix", ""), "kernel": bug["kernel"],
                 "properties": bug["properties"], "buggy": bug["buggy"], "fixed": bug["fixed"]}
        for side in ("buggy", "fixed"):
            s = pair[side]
            result = read_json(s["json"]) if "error" not in s else None
            shows, finding, others = verdict_of(result, bug["expect"])
            tally = (result or {}).get("tally", {})
            entry[side] = {"shows": shows, "cases": tally.get("cases"), "passed": tally.get("passed"),
                           "rejected": tally.get("rejected"), "seconds": tally.get("seconds"),
                           "exit": s.get("exit"), "error": s.get("error"),
                           "finding": finding and {k: finding.get(k) for k in
                                                   ("identity", "case_number", "seconds_to_find", "minimal")},
                           "others": [f["identity"] for f in others]}
        entry["repro"] = read_json(os.path.join(args.results, name + "-repro.json"))
        b, f = entry["buggy"], entry["fixed"]
        if b["error"] or f["error"] or b["cases"] is None or f["cases"] is None:
            entry["verdict"] = "not run"
        elif b["shows"] and not f["shows"] and f["others"]:
            # The fixed commit's search stopped on a defect of its own: it did not show the
            # bug, but it did not run its whole budget either.
            entry["verdict"] = "found; the fixed commit stopped on another defect"
        elif b["shows"] and not f["shows"]:
            entry["verdict"] = "caught"
        elif not b["shows"]:
            entry["verdict"] = "missed"
        else:
            entry["verdict"] = "false alarm"
        out.append(entry)

        def cell(x):
            if x["error"]:
                return x["error"]
            if x["cases"] is None:
                return f"no result (exit {x['exit']}; see its log)"
            if x["shows"]:
                fd = x["finding"]
                if fd.get("seconds_to_find") is None:  # seen beside the failure that stopped it
                    return f"**found** after the search stopped: `{fd['identity']}`"
                return (f"**found** in case {fd['case_number']} ({fd['seconds_to_find']:.1f} s): "
                        f"`{fd['identity']}`")
            text = f"{x['passed']} of {x['cases']} cases pass"
            if x["rejected"]:
                text += f", {x['rejected']} refused"
            return text
        others = sorted(set(b["others"] + f["others"]))
        rows.append(f"| {name} ({entry['fix']}) | {bug['kernel']}, {', '.join(bug['properties'])} | "
                    f"`{bug['buggy']}`: {cell(b)} | `{bug['fixed']}`: {cell(f)} | **{entry['verdict']}** | "
                    f"{repro_cell(entry['repro'])} |"
                    + (f" other findings: {', '.join('`' + o + '`' for o in others)}" if others else ""))
    caught = sum(e["verdict"] == "caught" for e in out)
    lines = [f"# Real bugs: {caught} of {len(out)} caught", "",
             f"`{' '.join(sys.argv)}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "| bug | kernel, properties | at the buggy commit | at the fixed commit | verdict | standalone script (kprop repro) |",
             "|---|---|---|---|---|---|"] + rows
    with open(os.path.join(args.results, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.results, "summary.json"), "w") as f:
        json.dump({"schema": "kprop-realbugs-results/1", "caught": caught, "bugs": out}, f, indent=2)
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", default=os.path.join(HERE, "bugs.json"))
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write each side's sources from your clones")
    p.add_argument("--git", action="append", default=[], metavar="PROJECT=DIR")
    p.add_argument("--into", default=".upstream")
    j = sub.add_parser("report", help="judge a results folder again, by today's manifest")
    j.add_argument("--checkouts", default=".upstream")
    j.add_argument("--results", default="build/realbugs")
    j.add_argument("--only", nargs="*", default=[])
    r = sub.add_parser("run", help="run every bug's two sides and write the summary")
    r.add_argument("--checkouts", default=".upstream")
    r.add_argument("--results", default="build/realbugs")
    r.add_argument("--only", nargs="*", default=[])
    r.add_argument("--device", default="cuda")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--cases", type=int, default=200)
    r.add_argument("--box", type=float, default=300, help="seconds per side")
    r.add_argument("--jobs", type=int, default=8)
    r.add_argument("--shrink-seconds", type=float, default=60)
    r.add_argument("--case-timeout", type=float, default=120)
    args = parser.parse_args()
    manifest = load(args.manifest)
    if args.command == "prepare":
        gits = {}
        for g in args.git:
            project, _, path = g.partition("=")
            if project not in manifest["projects"] or not path:
                parser.error(f"--git {g}: expected PROJECT=DIR with PROJECT one of "
                             f"{', '.join(manifest['projects'])}")
            gits[project] = os.path.expanduser(path)
        prepare(manifest, gits, args.into)
    elif args.command == "report":
        report(sides_of(manifest, args), args)
    else:
        unknown = [n for n in args.only if n not in {b["name"] for b in manifest["bugs"]}]
        if unknown:
            parser.error(f"--only: no bug named {', '.join(unknown)}")
        args.adapter_of = lambda bug: manifest["projects"][bug["project"]]["adapter"]
        args.import_root_of = lambda bug: manifest["projects"][bug["project"]].get("import_root", ".")
        run(manifest, args)


if __name__ == "__main__":
    main()

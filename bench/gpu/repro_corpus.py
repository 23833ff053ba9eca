#!/usr/bin/env python3
"""Every kept upstream finding as its standalone script, run at the upstream sources given.

For each case file of the corpus (default corpus/upstream) whose implementation belongs to
a project of bench/realbugs/bugs.json (its namespace: `fla::`, `liger::`), `kprop repro`
writes the script, and the script runs with only that project's import root on PYTHONPATH
(no kprop). A finding that still fails there is still there. summary.md and summary.json go
to --out with each script and its output.

    PYTHONPATH=build-gpu/python:examples/upstream bench/gpu/repro_corpus.py \\
        --source fla=.upstream/flash-linear-attention --source liger=.upstream/Liger-Kernel \\
        --out build-gpu/out/repro
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.path.join(ROOT, "corpus", "upstream"))
    parser.add_argument("--manifest", default=os.path.join(ROOT, "bench", "realbugs", "bugs.json"))
    parser.add_argument("--source", action="append", default=[], metavar="PROJECT=DIR",
                        help="a project's checkout (the folder its source_env names)")
    parser.add_argument("--out", default="build-gpu/out/repro")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per script")
    parser.add_argument("--jobs", type=int, default=4, help="scripts at once")
    args = parser.parse_args()
    with open(args.manifest) as f:
        projects = json.load(f)["projects"]
    sources = {}
    for s in args.source:
        project, _, path = s.partition("=")
        if project not in projects or not path:
            parser.error(f"--source {s}: expected PROJECT=DIR, PROJECT one of {', '.join(projects)}")
        sources[project] = path
    os.makedirs(args.out, exist_ok=True)

    cases = []
    for folder, _, files in sorted(os.walk(args.corpus)):
        cases += [os.path.join(folder, n) for n in sorted(files) if n.endswith(".json")]
    # Each script is its own process: several at once (most of their time is starting
    # Python, torch and Triton).
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda path: reproduce(path, args, projects, sources), cases))

    lines = ["# Kept upstream findings, each as its standalone script", "",
             f"`{' '.join(sys.argv)}`", "", "| case file | identity | property | the script |",
             "|---|---|---|---|"]
    lines += [f"| `{r['file']}` | `{r['identity']}` | {r['property']} | {r['result']} |" for r in rows]
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=2)
    print("\n".join(lines))


def reproduce(path, args, projects, sources):
    """Writes and runs the script of case file `path`: its row of the summary."""
    with open(path) as f:
        record = json.load(f)
    impl = record["case"]["impl"]
    project = impl.split("::")[0]
    row = {"file": os.path.relpath(path, ROOT), "identity": record.get("identity", ""),
           "property": record["case"]["property"]}
    if project not in sources:
        row["result"] = f"no --source for {project}"
        return row
    p = projects[project]
    env = dict(os.environ, **{p["source_env"]: sources[project]})
    script = os.path.join(args.out, os.path.basename(path)[:-len(".json")] + ".py")
    written = subprocess.run([sys.executable, "-m", "kprop", "repro", path, "--import",
                              p["adapter"], "--device", args.device, "--out", script],
                             env=env, capture_output=True, text=True)
    if written.returncode:
        row["result"] = "not written: " + written.stderr.strip().splitlines()[-1]
        return row
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.path.join(sources[project], p.get("import_root", "."))
    try:
        ran = subprocess.run([sys.executable, script], env=env, capture_output=True,
                             text=True, timeout=args.timeout)
        code, text = ran.returncode, ran.stdout + ran.stderr
    except subprocess.TimeoutExpired:
        code, text = "timeout", ""
    with open(script[:-3] + ".txt", "w") as f:
        f.write(text)
    last = text.strip().splitlines()[-1] if text.strip() else ""
    row["exit"] = code
    row["result"] = ("fails: " if code else "passes: ") + last
    print(f"{row['file']}: {row['result']}", flush=True)
    return row


if __name__ == "__main__":
    main()

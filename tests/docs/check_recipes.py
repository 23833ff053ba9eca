#!/usr/bin/env python3
"""The sharding recipes (examples/sharding/, docs/sharding.md) hold to kprop's command line.

Each recipe is run as its engine would run it, with kprop only parsing its command lines
(KPROP_PARSE_ONLY=1): the single-host script for two shards; the Slurm batch script as
tasks 0 and 7 of its array; each Kubernetes Job's container command, as pods 0 and 7 of
the indexed Job. A recipe whose options kprop no longer takes fails here.

    check_recipes.py KPROP SOURCE_DIR

Exit 1 with one line per problem, 0 when all hold.
"""
import os
import re
import subprocess
import sys
import tempfile

KPROP, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
RECIPES = os.path.join(ROOT, "examples", "sharding")
problems = []
parsing = f"env KPROP_PARSE_ONLY=1 {KPROP}"


def run(what, command, env):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT,
                            env=dict(os.environ, **env))
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        problems.append(f"{what}: exit {result.returncode}: {said[-1] if said else ''}")
    return result


def container_commands(path):
    """The `command: [...]` lists of a Kubernetes manifest (flow sequences of plain words)."""
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"^\s*command:\s*\[(.*?)\]", text, re.M | re.S):
        yield [w.strip().strip('"') for w in m.group(1).replace("\n", " ").split(",")]


with tempfile.TemporaryDirectory() as tmp:
    run("one_host.sh", [os.path.join(RECIPES, "one_host.sh"), os.path.join(tmp, "host")],
        {"KPROP": parsing, "SHARDS": "2", "BUDGET": "1s"})
    for task in ("0", "7"):
        run(f"kprop-nightly.sbatch as task {task}", ["bash", os.path.join(RECIPES, "kprop-nightly.sbatch")],
            {"KPROP": parsing, "SLURM_ARRAY_TASK_ID": task, "SLURM_ARRAY_TASK_COUNT": "8",
             "OUT": os.path.join(tmp, "slurm")})
    for name in ("kprop-nightly-job.yaml", "kprop-nightly-merge.yaml"):
        commands = list(container_commands(os.path.join(RECIPES, name)))
        if not commands:
            problems.append(f"{name}: no container command")
        for command in commands:
            if command[0] != "build/kprop":
                problems.append(f"{name}: {command[0]}: not build/kprop")
                continue
            for pod in ("0", "7"):
                run(f"{name} as pod {pod}: {' '.join(command)}", [KPROP] + command[1:],
                    {"KPROP_PARSE_ONLY": "1", "JOB_COMPLETION_INDEX": pod})

for line in problems:
    print(line)
print("recipes: " + (f"{len(problems)} problem(s)" if problems else "all parse"))
sys.exit(1 if problems else 0)

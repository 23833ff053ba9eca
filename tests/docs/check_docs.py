#!/usr/bin/env python3
"""The docs check: what README.md and docs/ tell a reader to type and to follow is real.

- Every command line in them that starts with `kprop`, `build/kprop` (or any path ending in
  /kprop) or `python3 -m kprop` is parsed by kprop's own option parser
  (KPROP_PARSE_ONLY=1: parsed, not run); `python3 -m kprop repro` lines by the options its
  --help lists. A synopsis (`kprop check KERNEL [--impl NAME]`) has its option names
  checked instead.
- Every relative link of README.md, CONTRIBUTING.md, docs/, kernels/*/README.md and
  examples/**/README.md resolves: the file, and the heading an anchor names.
- Every option of every command (`kprop COMMAND --help`) appears in README.md or docs/.

    check_docs.py KPROP SOURCE_DIR [PYTHON PYTHON_DIR]

Exit 1 with one line per problem (FILE:LINE: what), 0 when all hold.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

KPROP, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
PYTHON = sys.argv[3] if len(sys.argv) > 3 else None
PYTHON_DIR = sys.argv[4] if len(sys.argv) > 4 else None
problems = []
counted = {"parsed": 0, "synopses": 0, "links": 0}


def problem(path, line, what):
    problems.append(f"{os.path.relpath(path, ROOT)}:{line}: {what}")


def markdown_files(patterns):
    files = []
    for pattern in patterns:
        files += sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True))
    return [f for f in files if os.path.isfile(f)]


COMMAND_DOCS = markdown_files(["README.md", "docs/**/*.md"])
LINKED_DOCS = markdown_files(["README.md", "CONTRIBUTING.md", "docs/**/*.md", "kernels/*/README.md",
                              "examples/**/README.md"])


def lines_of(path):
    """(line number, text, in a fenced code block) for each line of a Markdown file."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.lstrip().startswith("```"):
                fenced = not fenced
                continue
            yield number, text.rstrip("\n"), fenced


# ---- command lines ----------------------------------------------------------------------

def logical_lines(path):
    """(line number, command text, from a code block): code lines joined over trailing
    backslashes, and inline code spans."""
    pending, start = "", 0
    for number, text, fenced in lines_of(path):
        if fenced:
            if not pending:
                start = number
            if text.rstrip().endswith("\\"):
                pending += text.rstrip()[:-1] + " "
                continue
            yield start, pending + text, True
            pending = ""
        else:
            for span in re.findall(r"`([^`]+)`", text):
                yield number, span, False


def segments(text):
    """The simple commands of a shell line: split at |, &&, ||, ; and comments dropped."""
    text = re.sub(r"<[^<>\s]+>", "PLACEHOLDER", text)  # <file>.json: a placeholder
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: prose, not a command
        return []
    out, current = [], []
    for token in tokens:
        if token in ("|", "&&", "||", ";", "&", ">", ">>", "<", "2>", "2>&1"):
            out.append(current)
            current = []
        else:
            current.append(token)
    out.append(current)
    return [s for s in out if s]


def kprop_arguments(tokens):
    """The arguments after the kprop program in a simple command, or None."""
    for i, token in enumerate(tokens):
        if token == "kprop" or token.endswith("/kprop"):
            return tokens[i + 1:]
        if re.fullmatch(r"(.*/)?python3?", token) and tokens[i + 1:i + 3] == ["-m", "kprop"]:
            return tokens[i + 3:]
        if "=" not in token and token not in ("env", "nice", "time", "timeout", "sudo", "$"):
            if not re.fullmatch(r"-[-\w=]*|\d+[smh]?", token):  # timeout's options and time
                return None
    return None


def help_options(arguments):
    out = run([KPROP] + arguments + ["--help"]).stdout
    return set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", out, re.M))


def run(command, **kw):
    return subprocess.run(command, capture_output=True, text=True, timeout=60, **kw)


def subcommands_of(arguments):
    out = run([KPROP] + arguments + ["--help"]).stdout
    if "Subcommands:" not in out:
        return []
    return re.findall(r"^  ([a-z][\w-]*)", out.split("Subcommands:", 1)[-1], re.M)


COMMANDS = subcommands_of([])
# A command of commands (`corpus merge`) is checked as its two words.
NESTED = {c: subcommands_of([c]) for c in COMMANDS if c != "repro"}
OPTIONS = {}
for c in COMMANDS:
    if c != "repro":
        for name, words in ([(f"{c} {n}", [c, n]) for n in NESTED[c]] or [(c, [c])]):
            OPTIONS[name] = help_options(words)


def repro_options():
    if not PYTHON or not PYTHON_DIR:
        return None
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    out = run([PYTHON, "-m", "kprop", "repro", "--help"], env=env).stdout
    return set(re.findall(r"(--[\w-]+)", out)) or None


OPTIONS_REPRO = repro_options()


def check_command(path, number, arguments, fenced):
    if not arguments or arguments[0] not in COMMANDS:
        if arguments and arguments[0].startswith("-") and arguments[0] != "--help":
            problem(path, number, f"kprop {' '.join(arguments)}: no command")
        elif arguments and fenced and arguments[0] not in COMMANDS:
            problem(path, number, f"kprop {arguments[0]}: not a command ({', '.join(COMMANDS)})")
        return
    command = arguments[0]
    if NESTED.get(command):
        if len(arguments) == 1 and not fenced:
            return  # a command's name in prose
        if len(arguments) == 1 or arguments[1] not in NESTED[command]:
            problem(path, number, f"kprop {' '.join(arguments[:2])}: not a command "
                                  f"({', '.join(command + ' ' + n for n in NESTED[command])})")
            return
        command = f"{command} {arguments[1]}"
        if not fenced and len(arguments) == 2:
            return
    elif not fenced and len(arguments) == 1:
        return  # a command's name in prose
    names = [a.strip("[]").split("=")[0] for a in arguments if a.strip("[]").startswith("--")]
    synopsis = any(a.startswith("[") or a.endswith("]") or a in ("...", "|") or "..." in a
                   for a in arguments)
    if command == "repro":
        if OPTIONS_REPRO is not None:
            for name in names:
                if name not in OPTIONS_REPRO:
                    problem(path, number, f"repro {name}: not an option of python3 -m kprop repro")
        return
    if synopsis:
        counted["synopses"] += 1
        for name in names:
            if name not in OPTIONS[command]:
                problem(path, number, f"kprop {command} {name}: not an option of {command}")
        return
    counted["parsed"] += 1
    result = run([KPROP] + arguments, env=dict(os.environ, KPROP_PARSE_ONLY="1"))
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        problem(path, number, f"kprop {' '.join(arguments)}: {said[0] if said else 'exit %d' % result.returncode}")


for path in COMMAND_DOCS:
    for number, text, fenced in logical_lines(path):
        for tokens in segments(text):
            arguments = kprop_arguments(tokens)
            if arguments is not None:
                check_command(path, number, arguments, fenced)

# ---- links ------------------------------------------------------------------------------


def anchors_of(path):
    """GitHub's anchors of a Markdown file's headings."""
    seen, out = {}, set()
    for _, text, fenced in lines_of(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", text)
        if fenced or not m:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link's text
        slug = re.sub(r"[^\w\- ]", "", title.lower().replace("`", "")).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


ANCHORS = {}
for path in LINKED_DOCS:
    for number, text, fenced in lines_of(path):
        if fenced:
            continue
        text = re.sub(r"`[^`]*`", "", text)  # code spans hold no links
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            counted["links"] += 1
            file_part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(resolved):
                problem(path, number, f"link {target}: no such file")
                continue
            if anchor and resolved.endswith(".md"):
                if resolved not in ANCHORS:
                    ANCHORS[resolved] = anchors_of(resolved)
                if anchor not in ANCHORS[resolved]:
                    problem(path, number, f"link {target}: no heading #{anchor} in {os.path.relpath(resolved, ROOT)}")

# ---- every option documented ------------------------------------------------------------

documented = ""
for path in COMMAND_DOCS:
    with open(path, encoding="utf-8") as f:
        documented += f.read()
for command, options in sorted(OPTIONS.items()):
    if command.startswith("__"):
        continue  # hidden: the isolation worker
    for option in sorted(options - {"--help"}):
        if not re.search(re.escape(option) + r"(?![\w-])", documented):
            problems.append(f"kprop {command} {option}: in no page of README.md or docs/")

for line in problems:
    print(line)
print(f"{counted['parsed']} command lines parsed, {counted['synopses']} synopses, "
      f"{counted['links']} relative links, {sum(len(o) for o in OPTIONS.values())} options, "
      f"in {len(set(COMMAND_DOCS) | set(LINKED_DOCS))} Markdown files: "
      + (f"{len(problems)} problem(s)" if problems else "all hold"))
sys.exit(1 if problems else 0)

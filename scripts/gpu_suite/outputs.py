"""Reading what a run left in the results folder: JSON documents, JSON lines, a log's tail.
"""
from __future__ import annotations

import json


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def json_of_output(path):
    """A command's JSON document: the whole file, else from its last line that opens one
    (an adapter may print before kprop does)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i] == "{":
            try:
                return json.loads("\n".join(lines[i:]))
            except ValueError:
                continue
    return None


def json_lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            lines = [line.rstrip() for line in f.read().replace("\r", "\n").splitlines()]
    except OSError:
        return ""
    return "\n".join([line for line in lines if line.strip()][-n:])


def last_line(path):
    return tail(path, 1)

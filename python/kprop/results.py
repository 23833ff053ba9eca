"""What a kprop command returns to Python: the command's --json result as an object.

Every command hands its result over as the JSON its ``--json`` prints (harness/cli/entry.h);
these classes only give that JSON names. ``exit_code`` is always the command line's.
"""


class Finding:
    """One defect: its identity, the 1-minimal case (a dict, as a case file holds it),
    the verdict of that case and where it was kept (None when nothing was kept)."""

    def __init__(self, identity, minimal, verdict=None, path=None):
        self.identity, self.minimal, self.verdict, self.path = identity, minimal, verdict, path

    def __repr__(self):
        return f"Finding({self.identity!r}, path={self.path!r})"


class Result:
    """What every command's result has: ``exit_code`` (0 pass, 1 a failure, 2 bad usage or
    a bad file, as the CLI's), ``passed``, the command's JSON as ``json``, and ``findings``
    (the first one as ``finding``)."""

    def __init__(self, exit_code, json):
        self.exit_code = exit_code
        self.json = json
        self.findings = []

    @property
    def passed(self):
        return self.exit_code == 0

    @property
    def finding(self):
        return self.findings[0] if self.findings else None

    def __repr__(self):
        what = self.finding.identity if self.findings else "no new counterexample"
        return f"{type(self).__name__}(exit_code={self.exit_code}, {what})"


def _kept_path(corpus):
    """The path a command kept a case file at, or None when it kept nothing."""
    return (corpus or {}).get("path") or None


class CheckResult(Result):
    """The result of ``kprop.check``: the counts (``tally``), ``not_taken`` and
    ``rejections`` (reason -> count), ``known`` sightings, and each new defect."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.tally = json.get("tally", {})
        self.not_taken = json.get("not_taken", {})
        self.rejections = json.get("rejections", {})
        self.known = json.get("known_sightings", {})
        failure = json.get("failure")
        if failure:
            self.findings.append(Finding(failure["identity"], failure["minimal"],
                                         failure.get("verdict"), _kept_path(json.get("corpus"))))
            for other in json.get("also", []):
                self.findings.append(Finding(other["identity"], other["minimal"], None,
                                             other.get("corpus") or None))


class Replayed:
    """One replayed case file: ``path``, ``case``, ``as_recorded`` (every verdict as
    expected, the fingerprint and signature unchanged) and ``verdicts`` (impl -> verdict)."""

    def __init__(self, json):
        self.path = json["path"]
        self.case = json["case"]
        self.as_recorded = json["as_recorded"]
        self.fingerprint_matches = json["fingerprint_matches"]
        self.verdicts = {run["impl"]: run["verdict"] for run in json["runs"]}

    def __repr__(self):
        return f"Replayed({self.path!r}, as_recorded={self.as_recorded})"


class ReplayResult(Result):
    """The result of ``kprop.replay``: one ``Replayed`` per file in ``files`` (a file that
    could not be read is missing there; its message went to stderr and ``exit_code`` is 2)."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.files = [Replayed(f) for f in json]


class ShrinkResult(Result):
    """The result of ``kprop.shrink``: a finding per symptom of every failing file, with
    the path it was kept at (None with no corpus)."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.files = json
        for row in json:
            for k in row.get("shrunk", []):
                self.findings.append(Finding(k["identity"], k["minimal"], None,
                                             _kept_path(k.get("corpus"))))


class Hunt:
    """One hunt of ``kprop.hunt``: the known ``defect`` on ``impl``, ``found`` after
    ``cases`` cases, and what it shrank to (``finding``, None when missed)."""

    def __init__(self, json):
        self.defect, self.impl, self.found = json["defect"], json["impl"], json["found"]
        self.cases = json["cases"]
        self.finding = (Finding(json["identity"], json["minimal"], None,
                                _kept_path(json.get("corpus"))) if self.found else None)

    def __repr__(self):
        return f"Hunt({self.defect!r} on {self.impl!r}, found={self.found})"


class HuntResult(Result):
    """The result of ``kprop.hunt``: every hunt in ``hunts``; ``passed`` when every known
    defect was found."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.hunts = [Hunt(h) for h in json]
        self.findings = [h.finding for h in self.hunts if h.finding]


class NightlyResult(Result):
    """The result of ``kprop.nightly``: its summary.json as ``json``, every new defect as a
    finding (``path``: its corpus file), ``known`` sightings and ``interrupted``."""

    def __init__(self, exit_code, json):
        super().__init__(exit_code, json)
        self.known = json.get("known_sightings", {})
        self.interrupted = json.get("interrupted", False)
        for f in json.get("findings", []):
            self.findings.append(Finding(f["identity"], f["minimal"], None, f.get("file") or None))

"""What a kprop command returns to Python: the command's --json result as an object."""


class Finding:
    """One new defect: its identity, the 1-minimal case (a dict, as a case file holds it),
    the verdict of that case and where it was kept (None when nothing was kept)."""

    def __init__(self, identity, minimal, verdict=None, path=None):
        self.identity, self.minimal, self.verdict, self.path = identity, minimal, verdict, path

    def __repr__(self):
        return f"Finding({self.identity!r}, path={self.path!r})"


class CheckResult:
    """The result of ``kprop.check``: ``passed``, ``exit_code`` (as the CLI's), the counts
    (``tally``), ``not_taken`` and ``rejections`` (reason -> count), ``known`` sightings,
    and ``findings`` (the first one in full as ``finding``)."""

    def __init__(self, exit_code, json):
        self.exit_code = exit_code
        self.json = json
        self.tally = json.get("tally", {})
        self.not_taken = json.get("not_taken", {})
        self.rejections = json.get("rejections", {})
        self.known = json.get("known_sightings", {})
        self.findings = []
        failure = json.get("failure")
        if failure:
            corpus = json.get("corpus", {})
            self.findings.append(Finding(failure["identity"], failure["minimal"],
                                         failure.get("verdict"), corpus.get("path") or None))
            for other in json.get("also", []):
                self.findings.append(Finding(other["identity"], other["minimal"], None,
                                             other.get("corpus") or None))

    @property
    def passed(self):
        return self.exit_code == 0

    @property
    def finding(self):
        return self.findings[0] if self.findings else None

    def __repr__(self):
        what = self.finding.identity if self.findings else "no new counterexample"
        return f"CheckResult(exit_code={self.exit_code}, {what})"

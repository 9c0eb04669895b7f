"""Purpose: the statistics of results files as `mgpu_analyze report --format json` gives them (docs/statistics.md: the
outlier screen, each configuration's kept runs, mean throughput and its interval, mean step and phases, and the
answer's speedups with their intervals and its minimum effect), for the bench tables, which compute none of their own
and judge a speedup target on its interval's ends.

The analyzer: the path given to Report, else $MGPU_ANALYZE, else build/mgpu_analyze.
"""
import json
import os
import subprocess
import sys

DEFAULT_ANALYZE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "mgpu_analyze")
PHASES = ("forward", "backward", "allreduce", "exposed_comm", "optimizer")


def group_of(label):
    """A configuration's group name from the report's label ("large_b32_n2_cuda overlap=on (2 trials)")."""
    return label.split(" ")[0]


def table_arguments(argv, usage):
    """(mgpu_analyze or None, RESULTS_DIR) of a table script's command line `[--analyze MGPU_ANALYZE] RESULTS_DIR`;
    prints `usage` and exits 2 on any other."""
    if len(argv) == 4 and argv[1] == "--analyze":
        return argv[2], argv[3]
    if len(argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    return None, argv[1]


class Statistics:
    """One configuration's figures in the report: its rows of the configurations, phases and runs tables."""

    def __init__(self, configuration, phases, runs):
        self.runs_kept = int(configuration["runs_kept"])
        self.runs_total = int(configuration["runs_total"])
        self.samples_per_s = configuration["samples_per_s_mean"]
        self.samples_per_s_ci95 = configuration["samples_per_s_mean_ci95"]  # None below 5 kept runs
        self.step_ms = configuration["step_ms"]
        # None where the runs measured no phase (--timing step or none).
        self.phase_ms = {phase: phases.get(f"{phase}_ms") for phase in PHASES} if phases else {}
        self.kept_runs = [int(row["run"]) for row in runs if row["kept"] == "yes"]  # their indices in the file


class Speedup:
    """One pair of the answer: its speedup with the analyzer's 95% interval (none where the analyzer gives none, with its
    reason) and the verdict's minimum effect (the report's settings.min_effect), and targets judged on the interval's
    ends, never on the speedup alone."""

    def __init__(self, row, min_effect):
        self.row = row  # the scaling table's row: model, global_batch, gpus, ...
        self.ratio = row["speedup"]
        self.low, self.high = row["speedup_low"], row["speedup_high"]  # None without an interval
        self.missing_interval = row.get("speedup_missing_interval")
        self.min_effect = min_effect

    def text(self, digits=2):
        """"1.76 [1.74, 1.78]", or "1.76 (no interval: too few runs)"."""
        if self.low is None:
            return f"{self.ratio:.{digits}f} (no interval: {self.missing_interval})"
        return f"{self.ratio:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def judge(self, beyond, short):
        if self.low is None:
            return f"not judged (no interval: {self.missing_interval})"
        return "met" if beyond else "missed" if short else "undecided (the interval straddles the target)"

    def at_least(self, target):
        """A target of speedup >= `target`: met where the whole interval lies at or above it, missed where it lies wholly
        below it, undecided where it straddles it."""
        return self.judge(self.low is not None and self.low >= target, self.high is not None and self.high < target)

    def faster(self):
        """A target of N GPUs faster than 1, by the answer's rule: met where the interval lies wholly above 1 + the minimum
        effect (the verdict says faster), missed where none of it does, undecided where it reaches beyond it."""
        edge = 1 + self.min_effect
        return self.judge(self.low is not None and self.low > edge, self.high is not None and self.high <= edge)


class Report:
    """The report of `paths` (results files, in the order given): every configuration's Statistics by (file, group)
    and the answer's pairs (the scaling table's rows, as Speedup) by their N-GPU group."""

    def __init__(self, paths, analyze=None):
        command = [analyze or os.environ.get("MGPU_ANALYZE") or DEFAULT_ANALYZE, "report", *paths, "--format", "json"]
        report = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)
        tables = report["tables"]
        self.min_effect = report["settings"]["min_effect"]  # the verdict's band, stats::kMinimumEffect
        rows = lambda key: tables.get(key, {}).get("rows", [])  # noqa: E731
        key = lambda row: (row["file"], group_of(row["configuration"]))  # noqa: E731
        phases = {key(row): row for row in rows("phases")}
        runs = {}
        for row in rows("runs"):
            runs.setdefault(key(row), []).append(row)
        self.configurations = {key(row): Statistics(row, phases.get(key(row)), runs.get(key(row), []))
                               for row in rows("configurations")}
        self.pairs = {group_of(row["configuration"]): Speedup(row, self.min_effect) for row in rows("scaling")}

    def of(self, path, group):
        return self.configurations.get((path, group))

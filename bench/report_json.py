"""Purpose: the statistics of results files as `mgpu_analyze report --format json` gives them (docs/statistics.md: the
outlier screen, each configuration's kept runs, mean throughput and its interval, mean step and phases, and the
answer's speedups with their intervals), for the bench tables, which compute none of their own.

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


class Report:
    """The report of `paths` (results files, in the order given): every configuration's Statistics by (file, group)
    and the answer's pairs (the scaling table's rows) by their N-GPU group."""

    def __init__(self, paths, analyze=None):
        command = [analyze or os.environ.get("MGPU_ANALYZE") or DEFAULT_ANALYZE, "report", *paths, "--format", "json"]
        tables = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)["tables"]
        rows = lambda key: tables.get(key, {}).get("rows", [])  # noqa: E731
        key = lambda row: (row["file"], group_of(row["configuration"]))  # noqa: E731
        phases = {key(row): row for row in rows("phases")}
        runs = {}
        for row in rows("runs"):
            runs.setdefault(key(row), []).append(row)
        self.configurations = {key(row): Statistics(row, phases.get(key(row)), runs.get(key(row), []))
                               for row in rows("configurations")}
        self.pairs = {group_of(row["configuration"]): row for row in rows("scaling")}

    def of(self, path, group):
        return self.configurations.get((path, group))

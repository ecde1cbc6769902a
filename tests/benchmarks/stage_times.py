"""Where a `make test` run's wall time went, per stage, from its output: the lines each step
prints when it ends (`=== NAME: ok in Ns`, `=== STAGE: done in Ns`, `integration: ... in Ns`).
The node lab's part runs beside the other steps (tests/integration/beside.sh) and its log is
printed whole when it ends; its stages are listed in a column of their own.

    make test 2>&1 | tee make-test.log
    python tests/benchmarks/stage_times.py make-test.log

Prints a Markdown table for docs/benchmarks.md: the stages of each part in order with their
seconds, and each part's sum beside the run's own total.
"""

import argparse
import re
import sys

ENDED = (re.compile(r"^=== (?P<name>.+?): (?:ok|done) in (?P<seconds>\d+)s$"),
         re.compile(r"^integration: (?P<name>.+?)(?: ready)? in (?P<seconds>\d+)s$"))
NODE_LOG_STARTS = "=== integration, node lab: its log"
TOTAL = re.compile(r"^=== all tests passed in (?P<seconds>\d+)s$")
STARTED = re.compile(r"^=== (?P<name>[^:]+)$")


def stages(lines):
    """([(part, stage, seconds)], total seconds or None), parts 'main' and 'node lab'.

    A step that ended after other stages ended inside it (run-all.sh's API-server and node-lab
    steps) only contains them: its time is theirs, so it is not listed. Known from the lines
    themselves, so a renamed step needs no second spelling here."""
    found, total, part, started_at = [], None, "main", {}
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("[node lab] "):
            continue  # the live copies of the node log's lines; the log itself follows at the end
        if line.startswith(NODE_LOG_STARTS):
            part = "node lab"
            continue
        match = TOTAL.match(line)
        if match:
            total = int(match.group("seconds"))
            continue
        match = STARTED.match(line)
        if match:
            started_at[match.group("name")] = len(found)
            continue
        for pattern in ENDED:
            match = pattern.match(line)
            if not match:
                continue
            name = match.group("name")
            # the node part's own lines end once its log does: make test's next lines are main's
            if part == "node lab" and line.startswith("=== integration, node lab"):
                part = "main"
            if started_at.pop(name, len(found)) < len(found):
                break  # a container: the stages found since it started are its time
            found.append((part, name, int(match.group("seconds"))))
            break
    return found, total


def table(found, total):
    rows = ["| part | stage | seconds |", "| --- | --- | --- |"]
    sums = {}
    for part, name, seconds in found:
        rows.append("| %s | %s | %d |" % (part, name, seconds))
        sums[part] = sums.get(part, 0) + seconds
    for part, seconds in sums.items():
        rows.append("| %s | **sum** | **%d** |" % (part, seconds))
    if total is not None:
        rows.append("| run | **total (the parts side by side)** | **%d** |" % total)
    return "\n".join(rows)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("log", help="the output of make test")
    args = parser.parse_args(argv)
    with open(args.log) as handle:
        found, total = stages(handle)
    if not found:
        print("stage_times: no stage lines in %s" % args.log, file=sys.stderr)
        return 1
    print(table(found, total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

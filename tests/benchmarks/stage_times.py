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
# The node part's stage lines as they come (beside.sh), wherever they land in a line: after
# pytest's progress dots, for one.
NODE_LIVE = re.compile(r"\[node lab\] (?P<line>.*)$")
# Its whole log, printed again once it ends (or its last lines, when the run failed): read live already.
NODE_LOG = re.compile(r"^(=== integration, node lab: its log|--- last lines of \S*integration-nodes\.log)")
NODE_LOG_ENDS = "=== integration, node lab"
TOTAL = re.compile(r"^=== all tests passed in (?P<seconds>\d+)s$")
STARTED = re.compile(r"^=== (?P<name>[^:]+)$")


def stages(lines):
    """([(part, stage, seconds)], total seconds or None), parts 'main' and 'node lab'.

    A step that ended after other stages of its part ended inside it (run-all.sh's API-server and
    node-lab steps) only contains them: its time is theirs, so it is not listed. Known from the
    lines themselves, so a renamed step needs no second spelling here. The node part's stages
    are read from their live copies, so a failed or cut-short run's table is as right as a
    passing one's."""
    found, total, in_node_log, started_at = [], None, False, {}
    for line in lines:
        line = line.rstrip("\n")
        live = NODE_LIVE.search(line)
        if live:
            part, line = "node lab", live.group("line")
        elif NODE_LOG.match(line):
            in_node_log = True
            continue
        elif in_node_log and not line.startswith(NODE_LOG_ENDS):
            continue
        else:
            part, in_node_log = "main", False
        match = TOTAL.match(line)
        if match:
            total = int(match.group("seconds"))
            continue
        ended_in_part = sum(1 for found_part, _name, _seconds in found if found_part == part)
        match = STARTED.match(line)
        if match:
            started_at[(part, match.group("name"))] = ended_in_part
            continue
        for pattern in ENDED:
            match = pattern.match(line)
            if not match:
                continue
            name = match.group("name")
            if started_at.pop((part, name), ended_in_part) < ended_in_part:
                break  # a container: the stages of its part found since it started are its time
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

"""Where `make test`'s pytest time goes: per test file, from the JUnit files that
tests/integration/stages.sh writes beside each pytest log (.lab/logs/*.xml).

    python tests/benchmarks/test_times.py [.lab/logs/pytest-integration.xml ...] [--top N]

Prints, per file, the tests' count and their summed time (pytest's JUnit "time" of a test
includes its fixtures' set-up and teardown, so a module-scoped lab start is charged to the
file's first test), slowest first, and the total. Machines here are noisy: compare files within
one run, not across runs.
"""

import argparse
import collections
import glob
import os
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def per_file(paths):
    """{test file: [count, seconds]} over the testcases of the JUnit files at ``paths``."""
    files = collections.defaultdict(lambda: [0, 0.0])
    for path in paths:
        for case in ET.parse(path).getroot().iter("testcase"):
            # classname is the dotted module path (tests.integration.test_x or test_x)
            name = case.get("classname", "").split(".")
            module = next((part for part in reversed(name) if part.startswith("test_")), ".".join(name))
            files[module][0] += 1
            files[module][1] += float(case.get("time") or 0)
    return files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", nargs="*", help="JUnit files (default: .lab/logs/*.xml)")
    parser.add_argument("--top", type=int, default=25, help="files to list (default 25)")
    args = parser.parse_args(argv)
    paths = args.junit or sorted(glob.glob(os.path.join(ROOT, ".lab", "logs", "*.xml")))
    if not paths:
        sys.exit("test_times: no JUnit files given and none in .lab/logs (run make test or make integration first)")
    files = per_file(paths)
    total = sum(seconds for _count, seconds in files.values())
    print("%-55s %6s %8s %6s" % ("test file", "tests", "seconds", "share"))
    for module, (count, seconds) in sorted(files.items(), key=lambda item: -item[1][1])[:args.top]:
        print("%-55s %6d %8.1f %5.1f%%" % (module, count, seconds, 100 * seconds / total if total else 0))
    print("%-55s %6d %8.1f" % ("total (%d files)" % len(files), sum(c for c, _s in files.values()), total))


if __name__ == "__main__":
    main()

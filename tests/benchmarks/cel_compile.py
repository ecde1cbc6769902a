"""What the API server's CEL checks (cel_check: types, length, cost) add to compiling a selector,
and how fast the issue-33 refusals come, side by side in one run (no lab):
`python tests/benchmarks/run.py --only cel` or `python tests/benchmarks/cel_compile.py`.

The selectors are the five classes NVIDIA's chart creates and typical user classes; each
round compiles all of them with the checks and with ``cel_check.judge`` switched off,
interleaved, so the ratio is measured under the same load. The refused cases (a result that
is not a bool, isQuantity on a list, four nested loops over the attributes) are timed from the
call to the refusal; before issue 33 the last ran until the preview's timeout.
"""

import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel, cel_check  # noqa: E402

SELECTORS = [
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
    "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0",
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('l4')",
    "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('565.0.0'))",
    "device.allowMultipleAllocations",
]
REFUSED = {
    "not a bool": "quantity('1')",
    "isQuantity of a list": "isQuantity(['16Gi'])",
    "over the cost limit": "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, "
                           "device.attributes.all(d, a == d))))",
}


def _compile_all():
    started = time.perf_counter()
    for expression in SELECTORS:
        cel.Selectors([expression])
    return (time.perf_counter() - started) / len(SELECTORS)


def _refusal_seconds(expression):
    started = time.perf_counter()
    try:
        cel.Selectors([expression])
    except cel.Invalid:
        return time.perf_counter() - started
    raise AssertionError("%r was not refused" % expression)


def run(runs=15):
    checked, unchecked = [], []
    judge = cel_check.judge
    for _run in range(runs):
        checked.append(_compile_all())
        cel_check.judge = lambda tree: None
        try:
            unchecked.append(_compile_all())
        finally:
            cel_check.judge = judge
    result = {"compile_ms_with_checks": round(statistics.median(checked) * 1e3, 3),
              "compile_ms_without_checks": round(statistics.median(unchecked) * 1e3, 3)}
    result["ratio_with_over_without"] = round(result["compile_ms_with_checks"] / result["compile_ms_without_checks"], 2)
    for name, expression in REFUSED.items():
        result["refused_ms_" + name.replace(" ", "_")] = round(
            statistics.median(_refusal_seconds(expression) for _run in range(runs)) * 1e3, 3)
    return result


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))

"""The GPU usage report's own work over 1,000 nodes x 8 GPUs (no cluster: the lists as the API
returns them, built here): gpu_usage.usage() with the class selectors evaluated per device
(Selectors.match) and once per distinct device (match_cached), side by side, then the HTML
and Markdown rendering. Run alone (python tests/benchmarks/usage_report.py) or by run.py."""

import datetime
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.report import gpu_usage, usage_report, usage_text  # noqa: E402

DRIVER = "gpu.nvidia.com"
CLASSES = [("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"),
           ("a10", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'")]


def fleet(nodes=1000, gpus=8):
    """Slices like the driver's (a uuid and PCI address per GPU), half the nodes half held."""
    slices, node_list, pods, claims = [], [], [], []
    for n in range(nodes):
        name = "node-%04d" % n
        devices = [{"name": "gpu-%d" % i, "attributes": {
            "type": {"string": "gpu"}, "productName": {"string": "NVIDIA A10"},
            "uuid": {"string": "GPU-%04d-%d" % (n, i)}, "pciBusID": {"string": "0000:%02x:00.0" % i}},
            "capacity": {"memory": {"value": "23028Mi"}}} for i in range(gpus)]
        slices.append({"metadata": {"name": "00000-%s-%s" % (DRIVER, name)}, "spec": {
            "driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices}})
        node_list.append({"metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
                          "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        for i in range(gpus // 2 if n % 2 == 0 else 0):
            pod = "p-%d-%d" % (n, i)
            pods.append({"metadata": {"namespace": "team-%d" % (n % 20), "name": pod, "uid": "u-" + pod},
                         "spec": {"nodeName": name}, "status": {"phase": "Running"}})
            claims.append({"metadata": {"namespace": "team-%d" % (n % 20), "name": "c-" + pod},
                           "status": {"allocation": {"devices": {"results": [
                               {"driver": DRIVER, "pool": name, "device": "gpu-%d" % i}]}},
                               "reservedFor": [{"resource": "pods", "name": pod, "uid": "u-" + pod}]}})
    classes = [{"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": e}}]}}
               for name, e in CLASSES]
    return slices, claims, pods, node_list, classes


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def run(runs=3):
    data = fleet()
    now = datetime.datetime(2026, 12, 5, tzinfo=datetime.timezone.utc)
    times = {"usage_cached": [], "usage_per_device": [], "html": [], "markdown": []}
    cached = cel.Selectors.match_cached
    for _run in range(runs):
        seconds, usage = _timed(lambda: gpu_usage.usage(*data, driver=DRIVER, now=now))
        times["usage_cached"].append(seconds)
        cel.Selectors.match_cached = cel.Selectors.match  # the same report, every device evaluated
        try:
            seconds, uncached = _timed(lambda: gpu_usage.usage(*data, driver=DRIVER, now=now))
        finally:
            cel.Selectors.match_cached = cached
        assert uncached["free_by_class"] == usage["free_by_class"]
        times["usage_per_device"].append(seconds)
        times["html"].append(_timed(lambda: usage_report.html_page(usage))[0])
        times["markdown"].append(_timed(lambda: usage_text.markdown(usage))[0])
    medians = dict((name, round(statistics.median(values), 3)) for name, values in times.items())
    medians["devices"] = usage["summary"]["devices"]
    medians["html_kib"] = len(usage_report.html_page(usage)) // 1024
    medians["ratio_per_device_over_cached"] = round(medians["usage_per_device"] / medians["usage_cached"], 1)
    return medians


if __name__ == "__main__":
    import json
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 3), indent=2))

"""What a module run pays for kubernetes' typed API objects, eager against on first use, side by
side in one run (no lab): `python tests/benchmarks/run.py --only apis` or
`python tests/benchmarks/typed_apis.py`.

Each sample is a fresh interpreter (as each module run is) that imports the collection's client
and makes a Kube over an ApiClient, then touches what a module of that kind uses: nothing more
than CustomObjectsApi (a ResourceSlice, claim or DeviceClass module; input_check), or
CoreV1Api too (a module that reads nodes). "eager" makes all five typed APIs first, as
client.Kube did before they were made on first use. The runs are interleaved so the ratio is
measured under the same load; CPU seconds (user + sys of the child) are reported beside wall time.
"""

import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COLLECTIONS = os.path.join(ROOT, "build", "collections")
SCRIPT = """
import sys
from kubernetes import client as k8s_client
from ansible_collections.dra.gpu.plugins.module_utils import client
kube = client.Kube(k8s_client.ApiClient())
if sys.argv[1] == "eager":
    for name in ("custom", "core", "apps", "batch", "policy"):
        getattr(kube, name)
for name in sys.argv[2].split(","):
    getattr(kube, name)
"""
CASES = (("custom objects only", "custom"), ("custom objects and nodes", "custom,core"))


def _sample(mode, uses):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", SCRIPT, mode, uses], check=True,
                   env=dict(os.environ, PYTHONPATH=COLLECTIONS))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(runs=10):
    results = {}
    for label, uses in CASES:
        samples = {"eager": [], "on first use": []}
        for _round in range(runs):
            for mode in ("eager", "lazy"):
                samples["eager" if mode == "eager" else "on first use"].append(_sample(mode, uses))
        row = dict((mode, {"wall_s": round(statistics.median(w for w, _c in s), 3),
                           "cpu_s": round(statistics.median(c for _w, c in s), 3)}) for mode, s in samples.items())
        row["cpu_ratio_eager_to_first_use"] = round(row["eager"]["cpu_s"] / row["on first use"]["cpu_s"], 2)
        results[label] = row
    return results


if __name__ == "__main__":
    import json
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 10), indent=2))

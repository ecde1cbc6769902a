"""Benchmarks, side by side in one run: `make benchmarks` (or python tests/benchmarks/run.py).

1. wait: how long after a ResourceSlice appears a playbook notices it, with
   dra.gpu.resource_slice_wait (a watch) and with kubernetes.core.k8s_info in an
   until/retries loop with delay 5 (what playbooks do today). Median of N runs each.
2. inventory: dra.gpu.resource_slice_info over 1,000 simulated nodes x 8 GPUs (output=summary
   and the default full device list, ad hoc), against its floor: `kubectl get resourceslices
   -o json` plus `ansible localhost -m ping`. Wall time and peak memory (largest process) of
   each, the runs interleaved; ratios module / floor.
3. lab: `lab up` (warm build cache) with the default topology and with 1,000 nodes.
5. report: the GPU usage report's own work over 1,000 nodes x 8 GPUs (usage_report.py; no lab),
   the class selectors evaluated per device and once per distinct device, side by side.
4. sharing (topology sharing.yml: 2 x L4, 2 x H100): the gpu_sharing role creating three
   classes, beside `kubectl apply` of the same three DeviceClasses; the MIG layout
   (dra.gpu.mig_layout all-1g.10gb until the 14 MIG devices are published, then back); the
   smoke test with 3 pods on one time-sliced claim, beside 1 pod on its own claim.
6. cel: compiling selectors with the API server's CEL checks (cel_check) and without, side by
   side, and the time to refuse what the server refuses (cel_compile.py; no lab).
7. shares: gpu_fit's memory_shares plan over 1,000 nodes x 8 GPUs in ConsumableShares memory
   mode, with and without its node-order check, side by side (memory_shares.py; no lab); then a
   1,000-node lab at 1.37.2 in that mode (H100 80GB, 81559Mi): dra.gpu.gpu_fit's plan for 1,010
   pods of 40Gi on the first GPU of each node, and the real scheduler placing them, compared.
8. apis: a module run's cost of kubernetes' typed API objects, made eagerly (as client.Kube did)
   and on first use, in fresh interpreters, interleaved (typed_apis.py; no lab).

Each benchmark starts its own lab (own state directory and ports) and stops it. Machines
here are noisy, so compare the ratios printed in the same run rather than absolute times.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cel_compile  # noqa: E402 - tests/benchmarks/cel_compile.py
import memory_shares  # noqa: E402 - tests/benchmarks/memory_shares.py
import typed_apis  # noqa: E402 - tests/benchmarks/typed_apis.py
import usage_report  # noqa: E402 - tests/benchmarks/usage_report.py

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAB = [sys.executable, os.path.join(ROOT, "lab", "lab.py")]
RESULTS = os.path.join(ROOT, "tests", "benchmarks", "results")


def lab_env(name, port_base, mode="always", topology=None):
    """Each benchmark's own lab; its ports (28700-28999) are outside `make test`'s (26500-26999)
    and the demo's, so a benchmark can run beside either."""
    env = dict(os.environ, LAB_STATE_DIR=os.path.join(ROOT, ".lab", "bench-" + name),
               LAB_PORT_BASE=str(port_base), LAB_DRIVER_MODE=mode)
    if topology:
        env["LAB_TOPOLOGY"] = os.path.join(ROOT, "lab", "topologies", topology)
    return env


def lab_up(env):
    t0 = time.monotonic()
    subprocess.run(LAB + ["up"], env=env, check=True, stderr=subprocess.DEVNULL)
    elapsed = time.monotonic() - t0
    exports = subprocess.run(LAB + ["env", "--venv-bin", os.path.dirname(sys.executable)], env=env, check=True,
                             capture_output=True, text=True).stdout
    for line in exports.splitlines():
        key, value = line[len("export "):].split("=", 1)
        env[key] = value.strip("'")
    return elapsed


def lab_down(env):
    subprocess.run(LAB + ["down"], env=env, check=False, stderr=subprocess.DEVNULL)


def playbook(env, tasks, callback="ansible.posix.json"):
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local", "tasks": tasks}]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
        json.dump(play, handle)
    run_env = dict(env, ANSIBLE_STDOUT_CALLBACK=callback, ANSIBLE_LOCALHOST_WARNING="false",
                   ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = ["ansible-playbook", "-e", "ansible_python_interpreter=" + sys.executable, handle.name]
    return cmd, run_env, handle.name


def _iso_to_epoch(text):
    import datetime
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def _create_slice(env, driver):
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": driver.split(".", maxsplit=1)[0]},
            "spec": {"driver": driver, "nodeName": "node-a",
                     "pool": {"name": "bench", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "dev-0"}]}}
    subprocess.run(["kubectl", "create", "-f", "-"], input=json.dumps(body), text=True, env=env, check=True,
                   capture_output=True)
    return time.time()


def wait_once(env, method, head_start):
    driver = "bench-%s.example.com" % uuid.uuid4().hex[:8]
    if method == "resource_slice_wait":
        task = {"name": "wait", "dra.gpu.resource_slice_wait": {"driver": driver, "min_devices": 1, "timeout": 60}}
    else:
        task = {"name": "wait", "kubernetes.core.k8s_info": {
            "api_version": "resource.k8s.io/v1", "kind": "ResourceSlice", "field_selectors": ["spec.driver=" + driver]},
            "register": "found", "until": "found.resources | length > 0", "retries": 12, "delay": 5}
    cmd, run_env, path = playbook(env, [task])
    proc = subprocess.Popen(cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(head_start)  # give ansible-playbook time to reach the waiting task
    created = _create_slice(env, driver)
    out, _err = proc.communicate(timeout=120)
    os.unlink(path)
    subprocess.run(["kubectl", "delete", "resourceslice", driver.split(".", maxsplit=1)[0]], env=env, capture_output=True,
                   check=False)
    task_report = json.loads(out)["plays"][0]["tasks"][0]
    started = _iso_to_epoch(task_report["task"]["duration"]["start"])
    ended = _iso_to_epoch(task_report["task"]["duration"]["end"])
    if started > created:
        return None  # the slice existed before the wait began: not a latency sample
    return ended - created


def bench_wait(runs):
    env = lab_env("wait", 28700)
    lab_up(env)
    try:
        samples = {}
        for method in ("resource_slice_wait", "k8s_info until/retries (delay 5)"):
            values = []
            while len(values) < runs:
                # A random head start spreads the slice's arrival over the poll interval.
                value = wait_once(env, method, head_start=6.0 + random.uniform(0, 5))
                if value is not None:
                    values.append(value)
            samples[method] = values
    finally:
        lab_down(env)
    watch_median = statistics.median(samples["resource_slice_wait"])
    poll_median = statistics.median(samples["k8s_info until/retries (delay 5)"])
    return {"runs": runs, "samples": samples,
            "median_seconds": {k: round(statistics.median(v), 3) for k, v in samples.items()},
            "max_seconds": {k: round(max(v), 3) for k, v in samples.items()},
            "ratio_poll_over_watch": round(poll_median / watch_median, 1)}


def measured(cmd, env, stdin=None):
    """Wall time and peak RSS (MiB, largest process of the command's tree) of one command."""
    helper = ("import resource, subprocess, sys, time, json;"
              "t=time.monotonic();"
              "p=subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True);"
              "w=time.monotonic()-t;"
              "print(json.dumps([p.returncode, w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.stderr[-500:]]))")
    out = subprocess.run([sys.executable, "-c", helper, json.dumps(cmd)], env=env, capture_output=True, text=True,
                         check=True).stdout
    code, wall, maxrss_kib, err = json.loads(out)
    if code != 0:
        raise RuntimeError("%s failed: %s" % (cmd[0], err))
    return round(wall, 2), round(maxrss_kib / 1024.0, 1)


def adhoc(module, args=None):
    """`ansible localhost -m MODULE -a ARGS`, the way the issue measured it, on this venv's Python."""
    cmd = ["ansible", "localhost", "-e", "ansible_python_interpreter=" + sys.executable, "-m", module]
    return cmd + (["-a", json.dumps(args)] if args is not None else [])


def adhoc_result(cmd, env):
    """The module's result of an ad hoc command, through the JSON callback."""
    run_env = dict(env, ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    out = subprocess.run(cmd, env=run_env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["plays"][0]["tasks"][0]["hosts"]["localhost"]


INVENTORY_DRIVER = {"driver": "gpu.nvidia.com"}


def bench_inventory(runs):
    """dra.gpu.resource_slice_info over 8,000 devices against its floor: `kubectl get resourceslices
    -o json` plus Ansible's fixed cost (`ansible localhost -m ping`), all ad hoc on the same
    Python, interleaved run by run so that the machine's load hits each alike."""
    env = lab_env("scale", 28800, topology="scale-1000.yml")
    up_seconds = lab_up(env)
    env = dict(env, ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    commands = {
        "ansible ping (fixed cost of any module)": adhoc("ansible.builtin.ping"),
        "kubectl get resourceslices -o json": ["kubectl", "get", "resourceslices", "-o", "json"],
        "resource_slice_info output=summary": adhoc("dra.gpu.resource_slice_info",
                                                    dict(INVENTORY_DRIVER, output="summary")),
        "resource_slice_info fields=[node, name, allocated]": adhoc(
            "dra.gpu.resource_slice_info", dict(INVENTORY_DRIVER, fields=["node", "name", "allocated"])),
        "resource_slice_info (default: full device list)": adhoc("dra.gpu.resource_slice_info", INVENTORY_DRIVER),
    }
    # The full list registered in a playbook, as site.yml uses it (no printing of the 8,000 entries,
    # which dominates the ad hoc figure above): the row the 2026-12-02 table measured.
    tasks = [{"name": "inventory", "register": "inv", "dra.gpu.resource_slice_info": INVENTORY_DRIVER},
             {"name": "check", "ansible.builtin.assert": {"that": [
                 "inv.devices | length == 8000", "inv.summary.by_node | length == 1000"]}}]
    cmd, play_env, path = playbook(env, tasks, callback="ansible.builtin.default")
    commands["resource_slice_info full, registered in a playbook"] = cmd
    try:
        summary = adhoc_result(commands["resource_slice_info output=summary"], env)
        full = adhoc_result(commands["resource_slice_info (default: full device list)"], env)
        checks = {"summary total 8000": summary["summary"]["total"]["count"] == 8000,
                  "summary by_node 1000": len(summary["summary"]["by_node"]) == 1000,
                  "full devices 8000": len(full["devices"]) == 8000,
                  "summary == summary of full": summary["summary"] == full["summary"]}
        del full
        if not all(checks.values()):
            raise RuntimeError("resource_slice_info gave wrong results: %s" % checks)
        samples = dict((name, []) for name in commands)
        for _run in range(runs):
            for name, cmd in commands.items():
                samples[name].append(measured(cmd, play_env))
    finally:
        os.unlink(path)
        lab_down(env)

    def med(name, index):
        return round(statistics.median(v[index] for v in samples[name]), 2)
    result = {"runs": runs, "lab_up_seconds_1000_nodes": round(up_seconds, 1), "checks": checks}
    for name in commands:
        result[name] = {"wall_s": med(name, 0), "peak_rss_mib": med(name, 1),
                        "samples_wall_s": [v[0] for v in samples[name]]}
    floor = med("kubectl get resourceslices -o json", 0) + med("ansible ping (fixed cost of any module)", 0)
    result["floor_s (kubectl + ping)"] = round(floor, 2)
    result["ratio_summary_over_floor"] = round(med("resource_slice_info output=summary", 0) / floor, 2)
    for key, name in (("fields", "resource_slice_info fields=[node, name, allocated]"),
                      ("full", "resource_slice_info (default: full device list)"),
                      ("full_playbook", "resource_slice_info full, registered in a playbook")):
        result["ratio_%s_over_floor" % key] = round(med(name, 0) / floor, 2)
    return result


def bench_lab(runs):
    results = {}
    for name, topology in (("default", "default.yml"), ("1000 nodes", "scale-1000.yml")):
        values = []
        for _run in range(runs):
            env = lab_env("up-" + topology.split(".", maxsplit=1)[0], 28900, topology=topology)
            values.append(lab_up(env))
            lab_down(env)
        results[name] = round(statistics.median(values), 1)
    results["ratio_1000_over_default"] = round(results["1000 nodes"] / results["default"], 1)
    return results


SHARING_CLASSES = [
    {"name": "bench-timesliced", "strategy": "time_slicing", "interval": "Default"},
    {"name": "bench-mps", "strategy": "mps", "mps": {"active_thread_percentage": 50, "pinned_memory_limit": "8Gi"}},
    {"name": "bench-mig-1g", "strategy": "mig", "profile": "1g.10gb"},
]
SHARING_PLUGIN = {
    "apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "dra-driver-nvidia-gpu-kubelet-plugin", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}},
             "template": {"metadata": {"labels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}},
                          "spec": {"containers": [{"name": "gpus", "image": "registry.k8s.io/pause:3.10", "env": [
                              {"name": "FEATURE_GATES", "value": "MPSSupport=true,TimeSlicingSettings=true,"}]}]}}}}


def timed_playbook(env, tasks):
    cmd, run_env, path = playbook(env, tasks, callback="ansible.builtin.default")
    t0 = time.monotonic()
    subprocess.run(cmd, env=run_env, check=True, stdout=subprocess.DEVNULL)
    os.unlink(path)
    return time.monotonic() - t0


def kubectl(env, args, stdin=None):
    subprocess.run(["kubectl"] + args, env=env, check=True, input=stdin, text=True, stdout=subprocess.DEVNULL)


def bench_sharing(runs):
    env = lab_env("sharing", 28950, mode="plugin", topology="sharing.yml")
    lab_up(env)
    role = [{"name": "classes", "ansible.builtin.include_role": {"name": "dra.gpu.gpu_sharing"},
             "vars": {"gpu_sharing_classes": SHARING_CLASSES, "gpu_sharing_require_match": False}}]
    absent = [{"name": "remove", "ansible.builtin.include_role": {"name": "dra.gpu.gpu_sharing"},
               "vars": {"gpu_sharing_state": "absent"}}]
    mig_on = [{"name": "mig", "dra.gpu.mig_layout": {"nodes": ["gpu-h100"], "layout": "all-1g.10gb", "timeout": 120},
               "register": "mig"}, {"ansible.builtin.assert": {"that": ["mig.mig_devices['gpu-h100'] == 14"]}}]
    mig_off = [{"name": "mig", "dra.gpu.mig_layout": {"state": "absent"}}]
    shared = [{"name": "smoke", "dra.gpu.claim_smoke_check": {"device_class": "bench-timesliced", "pods": 3,
                                                              "timeout": 120}}]
    single = [{"name": "smoke", "dra.gpu.claim_smoke_check": {"device_class": "bench-timesliced", "timeout": 120}}]
    results = {"role": [], "kubectl": [], "mig_on": [], "mig_off": [], "shared_3_pods": [], "one_pod": []}
    try:
        kubectl(env, ["apply", "-f", "-"], json.dumps(SHARING_PLUGIN))
        kubectl(env, ["wait", "--for=jsonpath={.status.numberReady}=2", "ds/dra-driver-nvidia-gpu-kubelet-plugin",
                      "--timeout=60s"])
        sys.path.insert(0, os.path.join(ROOT, "build", "collections"))
        from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
        classes, _gates = sharing_config.device_classes(SHARING_CLASSES)
        manifests = "\n---\n".join(json.dumps({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": c["name"]},
            "spec": dict({"selectors": [{"cel": {"expression": e}} for e in c["selectors"]]},
                         **({"config": c["config"]} if "config" in c else {}))}) for c in classes)
        for _run in range(runs):
            results["role"].append(timed_playbook(env, role))
            timed_playbook(env, absent)
            t0 = time.monotonic()
            kubectl(env, ["apply", "-f", "-"], manifests)
            results["kubectl"].append(time.monotonic() - t0)
            kubectl(env, ["delete", "deviceclass"] + [c["name"] for c in classes])
        timed_playbook(env, role)
        for _run in range(runs):
            results["mig_on"].append(timed_playbook(env, mig_on))
            results["mig_off"].append(timed_playbook(env, mig_off))
            results["shared_3_pods"].append(timed_playbook(env, shared))
            results["one_pod"].append(timed_playbook(env, single))
    finally:
        lab_down(env)
    medians = dict((k, round(statistics.median(v), 2)) for k, v in results.items())
    medians["runs"] = runs
    medians["ratio_role_over_kubectl"] = round(medians["role"] / medians["kubectl"], 1)
    medians["ratio_shared_3_pods_over_one_pod"] = round(medians["shared_3_pods"] / medians["one_pod"], 2)
    return medians


SHARES_CLASS = "bench-first-gpu"
SHARES_PODS = 1010


def _decided(core, ns, expected, timeout=900):
    """Pods of ``ns`` scheduled (node) or Unschedulable, once all ``expected`` are one or the other."""
    from kubernetes import watch
    seen = {}

    def record(item):
        node = (item.get("spec") or {}).get("nodeName")
        refused = any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                      for c in (item.get("status") or {}).get("conditions") or [])
        if node or refused:
            seen[item["metadata"]["name"]] = node
    deadline = time.monotonic() + timeout
    while True:
        listing = json.loads(core.list_namespaced_pod(ns, _preload_content=False).data)
        for item in listing["items"]:
            record(item)
        if len(seen) >= expected:
            return seen
        assert time.monotonic() < deadline, "only %d of %d pods decided" % (len(seen), expected)
        stream = watch.Watch()
        for event in stream.stream(core.list_namespaced_pod, ns, resource_version=listing["metadata"]["resourceVersion"],
                                   timeout_seconds=max(1, int(deadline - time.monotonic()))):
            record(event["raw_object"])
            if len(seen) >= expected:
                stream.stop()
                break


def bench_shares_scheduler():
    """The plan (dra.gpu.gpu_fit, reading the 1,000-node lab) against the scheduler placing the pods.

    40Gi on an 80GB H100 (81559Mi as the driver publishes it, rounded down to 1Mi): two would need
    81920Mi, so one per GPU; the class takes the first GPU of each node, so 1,000 fit and 10 are
    Unschedulable, one per node, whatever nodes the scheduler scores first."""
    from kubernetes import client, config, watch
    env = lab_env("shares", 28850, topology="scale-1000.yml")
    env.update(LAB_K8S_VERSION="1.37.2", LAB_CONSUMABLE_SHARES="memory")
    result = {"lab_up": round(lab_up(env), 1)}
    try:
        api = config.new_client_from_config(env["KUBECONFIG"])
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": SHARES_CLASS},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                            "device.attributes['resource.kubernetes.io'].pciBusID == '0000:10:00.0'"}}]}})
        workload = {"name": "llm", "memory": "40Gi", "replicas": SHARES_PODS, "device_class": SHARES_CLASS}
        t0 = time.monotonic()
        plan = adhoc_result(adhoc("dra.gpu.gpu_fit", {"workloads": [workload]}), env)
        result["plan_module_seconds"] = round(time.monotonic() - t0, 2)
        shares = plan["strategies"]["memory_shares"]
        ns = "bench-shares"
        core.create_namespace({"metadata": {"name": ns}})
        custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "llm"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": SHARES_CLASS, "capacity": {"requests": {"memory": "40Gi"}}}}]}}}})
        # The service account controller adds "default" shortly after; pods need it.
        for _event in watch.Watch().stream(core.list_namespaced_service_account, ns, timeout_seconds=60,
                                           field_selector="metadata.name=default"):
            break
        t0 = time.monotonic()
        for index in range(SHARES_PODS):
            core.create_namespaced_pod(ns, {"metadata": {"name": "llm-%d" % index}, "spec": {
                "terminationGracePeriodSeconds": 0,
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "llm"}],
                "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"claims": [{"name": "gpu"}]}}]}})
        result["create_pods_seconds"] = round(time.monotonic() - t0, 1)
        seen = _decided(core, ns, SHARES_PODS)
        result["scheduler_seconds"] = round(time.monotonic() - t0, 1)
        per_node = {}
        for node in seen.values():
            if node:
                per_node[node] = per_node.get(node, 0) + 1
        claims = custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]
        consumed = set(json.dumps(r.get("consumedCapacity"), sort_keys=True) for c in claims
                       for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []))
        result.update(planned=shares["total"], scheduled=sum(per_node.values()),
                      planned_unschedulable=SHARES_PODS - shares["total"],
                      unschedulable=sum(1 for node in seen.values() if not node),
                      per_node_equal=per_node == dict((n, c) for n, c in shares["by_node"].items() if c),
                      consumed_capacity=sorted(consumed), planned_consumes=shares["placements"][0]["consumes"],
                      depends_on_node_choice=shares["depends_on_node_choice"])
    finally:
        lab_down(env)
    return result


def bench_shares(runs):
    results = memory_shares.run(runs)
    results["scheduler_1000_nodes"] = bench_shares_scheduler()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", choices=("wait", "inventory", "lab", "sharing", "report", "cel", "shares", "apis"),
                        action="append")
    args = parser.parse_args()
    chosen = args.only or ["wait", "inventory", "lab", "sharing", "report", "cel", "shares", "apis"]
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": args.runs, "cores": os.cpu_count()}
    for name in chosen:
        print("benchmark %s ..." % name, file=sys.stderr, flush=True)
        results[name] = {"wait": bench_wait, "inventory": lambda r: bench_inventory(max(3, r // 3)),
                         "lab": lambda r: bench_lab(max(3, r // 3)),
                         "sharing": lambda r: bench_sharing(max(3, r // 3)),
                         "report": lambda r: usage_report.run(max(3, r // 3)),
                         "cel": cel_compile.run,
                         "shares": lambda r: bench_shares(max(3, r // 3)),
                         "apis": typed_apis.run}[name](args.runs)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "latest.json"), "w") as handle:
        json.dump(results, handle, indent=2)
    print(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

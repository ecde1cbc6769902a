"""make real-plugin: NVIDIA's real gpu-kubelet-plugin publishes for lab nodes, and every device,
slice and pool is compared with what the simulator publishes for the same GPUs.

    KUBECONFIG=... python -m labctl.realplugin.run --dra-repo DIR --test-infra-repo DIR \\
        --topology FILE [--topology FILE ...] [--out DIR]

The lab runs in plugin mode with no kubelet-plugin pod, so the simulator neither publishes nor
prepares for any node; its side comes from its own functions (gpus.driver_devices,
gpus.slice_specs, pool.plan) for the same node and plugin settings. Each plugin process runs in
a private mount namespace (unshare -m, root) whose /sys/devices and /sys/bus/pci/devices are the
rendered ones, so pcieRoot and numaNode come as on a GPU server. Exit status 1 on any difference.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import yaml
from kubernetes import client, config, watch

from labctl import gobuild
from labctl.apiserver.sim import gpus, pool, topology
from labctl.realplugin import build, compare, mockroot, prepare

IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:%s"
# (label, git ref, image tag it stands for, ConsumableShares modes to run; None: flag not given)
PLUGINS = (("v0.4.1", "v0.4.1", "v0.4.1", (None,)),
           ("main (0.5.0)", "main", "v0.5.0", (None, "memory", "unlimited", "4", "4")))
PUBLISH_TIMEOUT = 90


def _slices(custom, node):
    return sorted(custom.list_cluster_custom_object(
        "resource.k8s.io", "v1", "resourceslices",
        field_selector="spec.driver=%s,spec.nodeName=%s" % (gpus.DRIVER, node))["items"],
        key=lambda s: s["metadata"]["name"])


def _devices_of(slices):
    return sorted((d for s in slices for d in s["spec"].get("devices") or []), key=lambda d: d["name"])


def wait_for_socket(directory, proc, timeout=PUBLISH_TIMEOUT):
    """Until the plugin put its registration socket into ``directory`` (it publishes around the
    same time), or exited. A directory has nothing to watch through the API, hence polling."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.isdir(directory) and any(name.endswith(".sock") for name in os.listdir(directory)):
            return True
        time.sleep(0.2)
    return False


def wait_for(custom, node, expected, previous_version, unchanged, timeout=PUBLISH_TIMEOUT):
    """The node's slices once their devices equal ``expected`` (the simulator's) and were written
    after ``previous_version`` (or ``unchanged``: the same devices as before the restart, which
    the plugin need not rewrite); on timeout whatever is there (the comparison then names it)."""
    deadline = time.monotonic() + timeout
    while True:
        slices = _slices(custom, node)
        fresh = unchanged or any(int(s["metadata"]["resourceVersion"]) > previous_version for s in slices)
        if slices and fresh and _devices_of(slices) == sorted(expected, key=lambda d: d["name"]):
            return slices
        left = deadline - time.monotonic()
        if left <= 0:
            return slices
        stream = watch.Watch()
        for _event in stream.stream(custom.list_cluster_custom_object, "resource.k8s.io", "v1", "resourceslices",
                                    field_selector="spec.nodeName=%s" % node, timeout_seconds=max(1, int(left))):
            stream.stop()


def _latest_version(custom):
    return int(custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices")["metadata"]["resourceVersion"])


def ensure_node(core, name):
    try:
        return core.read_node(name)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    return core.create_node({"apiVersion": "v1", "kind": "Node",
                             "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})


def start(binary, root, node, kubeconfig, image, mode, hook, log):
    """One plugin process in its own mount namespace with the rendered sysfs."""
    argv = ["env", "MOCK_NVML_CONFIG=%s/config/config.yaml" % root, binary, "--node-name", node,
            "--kubeconfig", kubeconfig, "--image-name", image, "--nvidia-driver-root", root,
            "--container-driver-root", root, "--cdi-root", root + "/work/cdi",
            "--kubelet-plugins-directory-path", root + "/work/plugins",
            "--kubelet-registrar-directory-path", root + "/work/registry", "--nvidia-cdi-hook-path", hook, "-v", "4"]
    if mode is not None:
        argv += ["--feature-gates", "%s=true" % gpus.SHARES_GATE, "--consumable-shares", mode]
    script = ("mount -t tmpfs none /sys/devices && cp -a {r}/sys/devices/. /sys/devices/ && "
              "mount --bind {r}/sys/bus /sys/bus/pci/devices && exec \"$@\"").format(r=root)
    handle = open(log, "a")
    handle.write("\n--- %s\n" % " ".join(argv))
    handle.flush()
    return subprocess.Popen(["unshare", "-m", "bash", "-c", script, "plugin"] + argv, stdout=handle,
                            stderr=subprocess.STDOUT)


def stop(procs):
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def plan(topology_files):
    """[(topology node, process name, model, minors)], [skipped] for every GPU node of the topologies."""
    found, skipped, seen = [], [], set()
    for path in topology_files:
        for node in topology.load(path):
            if node["name"] in seen:
                continue
            seen.add(node["name"])
            procs, why = mockroot.processes(node)
            skipped.extend(why)
            found.extend((node, name, model, minors) for name, model, minors in procs)
    return found, skipped


def prepare_phase(args, kubeconfig, nodes, lib, libcuda, profiles, hook, version):
    """Item 2: main in memory mode on the per-model nodes the simulator does not know; claims
    allocated by the scheduler, prepared through NVIDIA's plugin (prepare.check)."""
    commit, binary = build.plugin(args.dra_repo, "main", args.cache)
    kubeletclient = prepare.build_client(args.dra_repo, commit, args.cache, build.export, gobuild.vendored_build)
    mine = [(node, name, model, minors) for node, name, model, minors in nodes if name != node["name"]]
    roots, minor_of, procs = {}, {}, []
    for node, name, model, minors in mine:
        root = os.path.join(args.out, "roots", name)
        shutil.rmtree(os.path.join(root, "work"), ignore_errors=True)
        with open(os.path.join(profiles, "mock-nvml-config-%s.yaml" % mockroot.MOCK_MODELS[model][0])) as handle:
            mockroot.render_root(root, lib, handle.read(), node["name"], model, minors, gpus.numa_nodes(node["gpus"]))
        prepare.add_prepare_files(root, libcuda, minors)
        roots[name] = root
        minor_of.update({"gpu-%d" % m: m for m in minors})
        procs.append(start(binary, root, name, kubeconfig, IMAGE % "v0.5.0", "memory", hook,
                           os.path.join(args.out, "%s.prepare.log" % name)))
    failures = []
    try:
        custom = client.CustomObjectsApi()
        for (node, name, _model, minors), proc in zip(mine, procs):
            if not wait_for_socket(os.path.join(roots[name], "work", "plugins", gpus.DRIVER), proc):
                failures.append("%s: the plugin did not serve dra.sock within %ds" % (name, PUBLISH_TIMEOUT))
            # The scheduler must see the memory-mode slices, not the previous mode's.
            wanted = sim_devices(node, minors, "memory", True)
            if _devices_of(wait_for(custom, name, wanted, version, False)) != sorted(wanted, key=lambda d: d["name"]):
                failures.append("%s: the memory-mode slices did not appear within %ds" % (name, PUBLISH_TIMEOUT))
        lines, found = prepare.check(client.ApiClient(), kubeletclient, roots, minor_of)
        for line in lines:
            print("prepare: " + line)
        failures.extend("prepare: " + line for line in found)
    finally:
        stop(procs)
    return failures


def write_union(paths, target):
    """One topology with every node of ``paths`` (the first of a name wins), as the lab reads it."""
    seen, nodes = set(), []
    for path in paths:
        with open(path) as handle:
            data = yaml.safe_load(handle) or {}
        for entry in data.get("nodes") or []:
            if entry["name"] not in seen:
                seen.add(entry["name"])
                nodes.append(entry)
    with open(target, "w") as handle:
        handle.write("# Written by make real-plugin from %s\n" % ", ".join(paths))
        yaml.safe_dump({"nodes": nodes}, handle, sort_keys=False)
    return 0


def sim_devices(node, minors, mode, release_05):
    gates = {gpus.SHARES_GATE: True} if mode is not None else {}
    shares = gpus.shares_mode(mode, gates) if mode is not None else None
    mine = [d for d in node["devices"] if int(d["name"].split("-")[1]) in minors]
    return gpus.driver_devices(mine, node["gpus"], shares, numa=release_05)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--dra-repo")
    parser.add_argument("--test-infra-repo")
    parser.add_argument("--union-topology", metavar="PATH",
                        help="only write one topology with the nodes of all --topology files (for the lab) and exit")
    parser.add_argument("--topology", action="append", required=True)
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/dra-gpu-lab/real-plugin"))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.union_topology:
        return write_union(args.topology, args.union_topology)
    if not (args.dra_repo and args.test_infra_repo and args.out):
        parser.error("--dra-repo, --test-infra-repo and --out are needed (or --union-topology)")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.cache, exist_ok=True)
    kubeconfig = os.environ["KUBECONFIG"]
    config.load_kube_config(kubeconfig)
    core, custom = client.CoreV1Api(), client.CustomObjectsApi()

    ti_commit, lib, libcuda, profiles = build.mock_nvml(args.test_infra_repo, "HEAD", args.cache)
    print("mock NVML: NVIDIA/k8s-test-infra %s (%s)" % (ti_commit, lib))
    hook = build.cdi_hook(args.cache)
    if hook is None:
        hook = os.path.join(args.out, "nvidia-cdi-hook-stub")
        with open(hook, "w") as handle:
            handle.write("#!/bin/sh\nexit 0\n")
        os.chmod(hook, 0o755)
        print("nvidia-cdi-hook: not available (go install failed); a stub that exits 0 (publishing never runs it)")
    else:
        print("nvidia-cdi-hook: %s" % hook)
    nodes, skipped = plan(args.topology)
    for line in skipped:
        print("not compared: " + line)

    failures, version = [], _latest_version(custom)
    for name in {n for _node, n, _m, _minors in nodes}:
        ensure_node(core, name)
    before = {name: _slices(custom, name) for _node, name, _m, _minors in nodes}
    for name, slices in before.items():
        if slices:
            failures.append("%s: the simulator published %d slice(s) for a node the real plugin drives" % (name, len(slices)))
    previous = {name: [] for name in before}
    for label, ref, tag, modes in PLUGINS:
        commit, binary = build.plugin(args.dra_repo, ref, args.cache)
        print("gpu-kubelet-plugin %s: kubernetes-sigs/dra-driver-nvidia-gpu %s" % (label, commit))
        release_05 = gpus.has_release_05(gpus.plugin_release(IMAGE % tag))
        for mode in modes:
            procs = []
            for node, name, model, minors in nodes:
                root = os.path.join(args.out, "roots", name)
                # A registration socket left by the previous process would pass for the new one's.
                shutil.rmtree(os.path.join(root, "work", "registry"), ignore_errors=True)
                base = mockroot.MOCK_MODELS[model][0]
                with open(os.path.join(profiles, "mock-nvml-config-%s.yaml" % base)) as handle:
                    profile = handle.read()
                mockroot.render_root(root, lib, profile, node["name"], model, minors,
                                     gpus.numa_nodes(node["gpus"]))
                procs.append(start(binary, root, name, kubeconfig, IMAGE % tag, mode, hook,
                                   os.path.join(args.out, "%s.log" % name)))
            try:
                for node, name, model, minors in nodes:
                    wanted = sim_devices(node, minors, mode, release_05)
                    registry = os.path.join(args.out, "roots", name, "work", "registry")
                    if not wait_for_socket(registry, procs[[n for _x, n, _m, _y in nodes].index(name)]):
                        failures.append("%s: the plugin did not register within %ds (see %s.log)"
                                        % (name, PUBLISH_TIMEOUT, name))
                    unchanged = _devices_of(previous[name]) == sorted(wanted, key=lambda d: d["name"])
                    slices = wait_for(custom, name, wanted, version, unchanged)
                    with open(os.path.join(args.out, "%s-%s-%s.json" % (name, ref, mode or "default")), "w") as handle:
                        json.dump(slices, handle, indent=1, sort_keys=True)
                    # The simulator's controller model from the same starting slices (none at first).
                    generation = pool.plan(previous[name], pool.chunks(wanted))["generation"]
                    lines = compare.pool_differences(name, slices, compare.expected_slices(name, wanted, generation))
                    if previous[name]:
                        lines.extend(compare.restart_differences(name, previous[name], slices, wanted))
                    fields = sum(len(compare.flatten(d)) for d in _devices_of(slices))
                    where = "%s mode %s, %s (%s x%d)" % (label, mode or "default", name, model, len(minors))
                    print("%s: %s" % (where, "; ".join(lines) if lines else
                                      "identical: %d device(s), %d device fields, pool %s"
                                      % (len(wanted), fields, slices[0]["spec"]["pool"] if slices else None)))
                    failures.extend("%s: %s" % (where, line) for line in lines)
                    previous[name] = slices
            finally:
                stop(procs)
            version = _latest_version(custom)
    failures.extend(prepare_phase(args, kubeconfig, nodes, lib, libcuda, profiles, hook, version))
    print("%d difference(s)" % len(failures))
    for line in failures:
        print("DIFFERENCE " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Claims allocated by the real scheduler to NVIDIA's real plugin's devices, prepared by NVIDIA's
code: NodePrepareResources over the plugin's dra.sock as the kubelet calls it (the kubeletclient
command), then the answer and the CDI spec checked (cdicheck). Run by make real-plugin on the
nodes the simulator does not know (a topology node split per model), so that nothing but
NVIDIA's plugin publishes or prepares there: a shared claim used by two pods, and two 8Gi
memory shares of one GPU (ConsumableShares, memory mode)."""

import glob
import hashlib
import json
import os
import subprocess
import tempfile
import time

import yaml
from kubernetes import client, watch

from labctl.apiserver.sim import gpus
from labctl.realplugin import cdicheck

NAMESPACE = "real-plugin"
CLASS = "real-plugin-gpu"
CLIENT_PACKAGE = "cmd/dra-gpu-lab-kubeletclient"
NVIDIA_MAJOR = 195


def build_client(dra_repo, commit, cache, export, build):
    """The kubeletclient command built inside an export of NVIDIA's repository (its vendor/)."""
    source = os.path.join(os.path.dirname(__file__), "kubeletclient", "main.go")
    with open(source, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()[:12]
    target = os.path.join(cache, "kubeletclient-%s-%s" % (commit, digest), "kubeletclient")
    if not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as src:
            export(dra_repo, commit, src)
            os.makedirs(os.path.join(src, CLIENT_PACKAGE))
            with open(source) as handle, open(os.path.join(src, CLIENT_PACKAGE, "main.go"), "w") as out:
                out.write(handle.read())
            build(["-o", target + ".tmp", "./" + CLIENT_PACKAGE], src, target + ".log")
        os.rename(target + ".tmp", target)
    return target


def add_prepare_files(root, libcuda, minors):
    """What prepare needs beyond publishing: the mock libcuda and the device nodes (root only)."""
    lib = os.path.join(root, "usr/lib64", "libcuda.so." + gpus.DRIVER_VERSION)
    with open(libcuda, "rb") as src, open(lib, "wb") as dst:
        dst.write(src.read())
    link = os.path.join(root, "usr/lib64/libcuda.so.1")
    if not os.path.lexists(link):
        os.symlink(os.path.basename(lib), link)
    os.makedirs(os.path.join(root, "dev"), exist_ok=True)
    for name, minor in [("nvidia%d" % m, m) for m in minors] + [("nvidiactl", 255)]:
        path = os.path.join(root, "dev", name)
        if not os.path.exists(path):
            os.mknod(path, 0o666 | 0o020000, os.makedev(NVIDIA_MAJOR, minor))


def _ready(core, name):
    """A hand-made node the scheduler may use (no kubelet: the test pods tolerate every taint)."""
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    core.patch_node_status(name, {"status": {"capacity": resources, "allocatable": resources, "conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "real-plugin lab node",
         "lastHeartbeatTime": now, "lastTransitionTime": now}]}})


def _apply(api, text):
    for doc in yaml.safe_load_all(text):
        group, _sep, version = doc["apiVersion"].rpartition("/")
        plural = doc["kind"].lower() + "s"
        if doc["kind"] == "Pod":
            client.CoreV1Api(api).create_namespaced_pod(NAMESPACE, doc)
        elif doc["kind"] == "Namespace":
            client.CoreV1Api(api).create_namespace(doc)
        elif doc["kind"] == "DeviceClass":
            client.CustomObjectsApi(api).create_cluster_custom_object(group, version, "deviceclasses", doc)
        else:
            client.CustomObjectsApi(api).create_namespaced_custom_object(group, version, NAMESPACE, plural, doc)


def objects(shared_node, share_node):
    """The namespace, a device class, the claims and the pods of the prepare check."""
    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % gpus.DRIVER}}]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}}}]
    for n in (1, 2):
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "share-%d" % n},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": CLASS, "capacity": {"requests": {"memory": "8Gi"}}}}]}}})
    pods = [("shared-1", "shared", shared_node), ("shared-2", "shared", shared_node),
            ("share-1", "share-1", share_node), ("share-2", "share-2", share_node)]
    for pod, claim, node in pods:
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod}, "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node}, "tolerations": [{"operator": "Exists"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
            "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "gpu"}]}}]}})
    return docs


def wait_allocated(custom, names, timeout=90):
    """The claims once all are allocated (a watch; on timeout, those that are)."""
    found = {}
    stream = watch.Watch()
    for event in stream.stream(custom.list_namespaced_custom_object, "resource.k8s.io", "v1", NAMESPACE,
                               "resourceclaims", timeout_seconds=timeout):
        claim = event["object"]
        if (claim.get("status") or {}).get("allocation"):
            found[claim["metadata"]["name"]] = claim
        if set(names) <= set(found):
            stream.stop()
    return found


def call(kubeletclient, root, op, claims):
    sockets = glob.glob(os.path.join(root, "work/plugins", gpus.DRIVER, "dra.sock"))
    if not sockets:
        return None, "no dra.sock under %s/work/plugins/%s" % (root, gpus.DRIVER)
    body = json.dumps([{"namespace": c["metadata"]["namespace"], "uid": c["metadata"]["uid"],
                        "name": c["metadata"]["name"]} for c in claims])
    done = subprocess.run([kubeletclient, "-socket", sockets[0], "-op", op, "-claims", body],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        return None, done.stderr.strip()
    return json.loads(done.stdout), None


def specs_in(root):
    found = []
    for path in sorted(glob.glob(os.path.join(root, "work/cdi", "*"))):
        with open(path) as handle:
            found.append(yaml.safe_load(handle))
    return found


def _result_text(result):
    text = "%s/%s" % (result["pool"], result["device"])
    if result.get("consumedCapacity"):
        text += " consumed %s" % result["consumedCapacity"]
    if result.get("shareID"):
        text += " shareID %s" % result["shareID"]
    return text


def check(api, kubeletclient, roots, minor_of):
    """Allocate, prepare, check, prepare the shared claim again (its second pod), unprepare;
    ``roots`` {process node: root}. Returns (report lines, failures)."""
    custom = client.CustomObjectsApi(api)
    core = client.CoreV1Api(api)
    shared_node, share_node = sorted(roots)  # gpu-shared-a10, gpu-shared-l4
    for name in roots:
        _ready(core, name)
    for doc in objects(shared_node, share_node):
        _apply(api, yaml.safe_dump(doc))
    claims = wait_allocated(custom, ["shared", "share-1", "share-2"])
    lines, failures = [], []
    for name in ("shared", "share-1", "share-2"):
        if name not in claims:
            failures.append("claim %s was not allocated by the scheduler within 90s" % name)
    for name, claim in sorted(claims.items()):
        results = claim["status"]["allocation"]["devices"]["results"]
        node = results[0]["pool"]
        root = roots[node]
        answer, error = call(kubeletclient, root, "prepare", [claim])
        uid = claim["metadata"]["uid"]
        if error:
            failures.append("claim %s on %s: NodePrepareResources: %s" % (name, node, error))
            continue
        mine = (answer.get("claims") or {}).get(uid)
        specs = specs_in(root)
        problems = cdicheck.findings(uid, results, mine, specs, minor_of)
        nodes = sorted({p for d in (mine or {}).get("devices") or [] for i in d.get("cdi_device_ids") or []
                        for p in cdicheck.device_nodes(specs, i)})
        allocated = ", ".join(_result_text(r) for r in results)
        lines.append("claim %s: allocated %s; prepared by NVIDIA's plugin: %s; CDI device nodes %s"
                     % (name, allocated, json.dumps(mine, sort_keys=True), nodes))
        failures.extend(problems)
        if name == "shared":
            again, error = call(kubeletclient, root, "prepare", [claim])
            if error or (again.get("claims") or {}).get(uid) != mine:
                failures.append("claim shared: preparing it again for its second pod answered %s" % (error or again))
    share_devices = {(r["pool"], r["device"]) for n in ("share-1", "share-2") if n in claims
                     for r in claims[n]["status"]["allocation"]["devices"]["results"]}
    if len(share_devices) != 1:
        failures.append("the two 8Gi shares were put on %s, expected one device" % sorted(share_devices))
    for name, claim in sorted(claims.items()):
        root = roots[claim["status"]["allocation"]["devices"]["results"][0]["pool"]]
        answer, error = call(kubeletclient, root, "unprepare", [claim])
        if error or ((answer.get("claims") or {}).get(claim["metadata"]["uid"]) or {}).get("error"):
            failures.append("claim %s: NodeUnprepareResources: %s" % (name, error or answer))
    for node, root in sorted(roots.items()):
        left = [d["name"] for s in specs_in(root) if s.get("kind") == cdicheck.CDI_KIND for d in s.get("devices") or []
                if any(d["name"].startswith(c["metadata"]["uid"]) for c in claims.values())]
        if left:
            failures.append("%s: CDI devices left after unprepare: %s" % (node, left))
    lines.append("unprepared %d claim(s)" % len(claims))
    return lines, failures

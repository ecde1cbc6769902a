"""SIMULATED kubelets and NVIDIA DRA kubelet plugin for the lab's GPU nodes.

What this stands in for, and why it is our own small agent rather than KWOK:
- **kubelet (node side)**: registers Node objects with Ready status, GPU labels as Node
  Feature Discovery and GPU Feature Discovery would set them, and a kubelet version.
  Pods the real kube-scheduler binds to these nodes are moved to Running; pods with
  ``restartPolicy: Never``/``OnFailure`` then complete; deleted pods are removed, as a
  kubelet confirms a graceful deletion. No container runs.
- **NVIDIA DRA driver's kubelet plugin**: publishes one ResourceSlice pool per node for
  ``gpu.nvidia.com`` (see ``gpus.py``), created and updated as the driver's ResourceSlice
  controller does (``pool.py``). In ``plugin`` mode, as on a real cluster, a node publishes
  only while a kubelet-plugin pod runs on it, and its slices are removed when that pod goes.
  A kubelet-plugin pod is one made by a DaemonSet and labelled as NVIDIA's chart labels it,
  ``<chart name or nameOverride>-component=kubelet-plugin`` (``dra-driver-nvidia-gpu-`` from
  v0.4, ``nvidia-dra-driver-gpu-`` before), or as the v26.7 operator labels its own,
  ``app=nvidia-dra-driver-kubelet-plugin``. Its containers say which drivers run: ``gpus``
  (gpu.nvidia.com) and ``compute-domains`` (compute-domain.nvidia.com, whose ``channel-0`` and
  ``daemon-0`` the node then publishes in a pool of their own, ``compute_domain.py``); a
  hand-made plugin pod with neither container stands for the GPU driver alone. In ``always``
  mode every GPU node publishes its GPUs from the start.
- **NVIDIA's device plugin** (the old model): while a pod labelled
  ``app=nvidia-device-plugin-daemonset`` (the GPU Operator's device-plugin DaemonSet) runs on
  a node, the node offers ``nvidia.com/gpu`` in capacity and allocatable, one per full GPU, as
  the plugin registers them with the kubelet; when the pod goes, the resource goes. Two GPU
  managers on one node would hand out the same GPUs twice, so a node whose device plugin runs
  publishes no DRA slices, unless its Node carries ``lab.dra.gpu/allow-both-gpu-managers:
  "true"`` (for a test that shows the over-admission a migration must prevent).

A slice the API server rejects is never only logged: the simulator records it in
``run/simulator.error`` (``report.py``), which fails ``lab up`` and shows in ``lab status``.
In plugin mode, where nothing is published before a plugin pod comes, the simulator has
the API server validate every node's slices with a dry run before it reports ready.

KWOK could keep nodes and pods alive, but the driver half has to watch pods and claims
anyway, and one agent keeps the lab a single extra process that needs no further Go build.
"""

import datetime
import hashlib
import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client, config as kube_config, watch
from kubernetes.client.exceptions import ApiException

from labctl.apiserver.sim import compute_domain, gpus, health, opaque, pool, probe, report

LOG = logging.getLogger("labsim")

SIMULATED_ANNOTATION = "lab.dra.gpu/simulated-node"
# Stands in for the kubelet package installed on a simulated node's host: when a test sets
# it (cluster_upgrade's lab scenario does, where a real run installs packages and restarts
# the kubelet), the simulated kubelet "restarts" and reports that version.
KUBELET_VERSION_ANNOTATION = "lab.dra.gpu/kubelet-version"
# NVIDIA's DRA chart labels its kubelet-plugin pods "<name>-component: kubelet-plugin", where
# <name> is the chart's name or its nameOverride; the v26.7 operator labels the DaemonSet it
# deploys for a GPUCluster "app: nvidia-dra-driver-kubelet-plugin".
PLUGIN_COMPONENT_SUFFIX = "-component"
PLUGIN_COMPONENT = "kubelet-plugin"
OPERATOR_PLUGIN_LABEL = ("app", "nvidia-dra-driver-kubelet-plugin")
# The containers of a kubelet-plugin pod, one per driver it runs.
PLUGIN_CONTAINERS = {"gpus": gpus.DRIVER, compute_domain.CONTAINER: compute_domain.DRIVER}
DEVICE_PLUGIN_POD_LABEL = ("app", "nvidia-device-plugin-daemonset")
DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"
BOTH_MANAGERS_ANNOTATION = "lab.dra.gpu/allow-both-gpu-managers"
STAND_IN_IMAGE_ANNOTATION = "stand-in.dra.gpu/image"
CONTAINER_RUNTIME = "containerd://2.1.4-simulated"
# The GPU Operator's MIG manager: the layout asked for, and how applying it went.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_CAPABLE_LABEL = "nvidia.com/mig.capable"
# A full relist this often corrects anything a dropped watch missed (an API server restart).
RESYNC_SECONDS = 30
# Answers that refuse a slice's content (400 BadRequest, 403 Forbidden, 422 Invalid...), as
# opposed to a missing object, a conflict, a timeout or throttling, which a retry can cure.
_RETRYABLE_STATUSES = (404, 408, 409, 410, 429)


class SliceRejected(RuntimeError):
    """The API server refused a ResourceSlice of one node (already recorded in the report)."""


def is_rejection(exc):
    return 400 <= (exc.status or 0) < 500 and exc.status not in _RETRYABLE_STATUSES


def server_message(exc):
    """The API server's own explanation (its Status message), else the HTTP reason."""
    try:
        return json.loads(exc.body)["message"]
    except (TypeError, ValueError, KeyError):
        return exc.body or exc.reason


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_plugin_pod(pod):
    """A pod of a DRA kubelet-plugin DaemonSet, labelled as NVIDIA's chart or operator labels it."""
    meta = pod["metadata"]
    owners = [ref.get("name") or "" for ref in meta.get("ownerReferences") or [] if ref.get("kind") == "DaemonSet"]
    if not owners:
        return False
    labels = meta.get("labels") or {}
    key, value = OPERATOR_PLUGIN_LABEL
    if labels.get(key) == value:
        return True
    if any(name.endswith(PLUGIN_COMPONENT_SUFFIX) and len(name) > len(PLUGIN_COMPONENT_SUFFIX)
           and "/" not in name and text == PLUGIN_COMPONENT for name, text in labels.items()):
        return True
    # The chart's selectorLabelsOverride replaces that label: known then by the DaemonSet's name,
    # "<name>-kubelet-plugin", and a container of one of NVIDIA's drivers.
    containers = {c.get("name") for c in pod["spec"].get("containers") or []}
    return any(owner.endswith("-" + PLUGIN_COMPONENT) for owner in owners) and bool(containers & set(PLUGIN_CONTAINERS))


def plugin_drivers(pod):
    """The drivers a kubelet-plugin pod runs, from its containers (gpus, compute-domains)."""
    names = {c.get("name") for c in pod["spec"].get("containers") or []}
    return frozenset(driver for container, driver in PLUGIN_CONTAINERS.items() if container in names) \
        or frozenset([gpus.DRIVER])


def is_device_plugin_pod(pod):
    key, value = DEVICE_PLUGIN_POD_LABEL
    return (pod["metadata"].get("labels") or {}).get(key) == value


def full_gpus(node):
    """GPUs the device plugin would offer: the node's full GPUs (MIG devices are not counted)."""
    return sum(1 for d in node["devices"] if d["attributes"]["type"]["string"] == "gpu")


def node_object(node, kubelet_version):
    devices = node["devices"]
    full = [d for d in devices if d["attributes"]["type"]["string"] == "gpu"]
    labels = {"kubernetes.io/hostname": node["name"], "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "simulated"}
    if devices:
        first = devices[0]["attributes"]
        labels.update({
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": first["productName"]["string"].replace(" ", "-"),
            "nvidia.com/gpu.count": str(len({d["attributes"].get("parentUUID", d["attributes"]["uuid"])["string"]
                                             for d in devices})),
            "nvidia.com/mig.capable": str(gpus.mig_capable(node.get("gpus"))).lower(),
        })
        if full:
            labels["nvidia.com/gpu.memory"] = str(_mebibytes(full[0]["capacity"]["memory"]["value"]))
    labels.update(node["labels"])
    version = node.get("kubelet_version") or kubelet_version
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node["name"], "labels": labels, "annotations": {SIMULATED_ANNOTATION: "true"}},
        "spec": {"taints": node["taints"]} if node["taints"] else {},
        "status": node_status(node["name"], version),
    }


def _mebibytes(quantity):
    """GPU Feature Discovery's nvidia.com/gpu.memory: NVML's total in MiB (23028 for an A10)."""
    return gpus.to_bytes(quantity) // (1024 * 1024)


def node_status(name, kubelet_version):
    now = _now()
    conditions = [{"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": now,
                   "lastTransitionTime": now} for t, r, m in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "simulated kubelet has sufficient memory"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "simulated kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "simulated kubelet has sufficient PID available"))]
    conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                       "message": "simulated kubelet is posting ready status (dra.gpu lab)",
                       "lastHeartbeatTime": now, "lastTransitionTime": now})
    resources = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"}
    return {
        "capacity": resources, "allocatable": resources, "conditions": conditions,
        "addresses": [{"type": "InternalIP", "address": internal_ip(name)},
                      {"type": "Hostname", "address": name}],
        "nodeInfo": {"kubeletVersion": kubelet_version, "kubeProxyVersion": "",
                     "containerRuntimeVersion": CONTAINER_RUNTIME, "operatingSystem": "linux",
                     "architecture": "amd64", "osImage": "Simulated by the dra.gpu lab",
                     "kernelVersion": "6.8.0-simulated", "machineID": _hash(name)[:32],
                     "systemUUID": _hash(name + "/system")[:32], "bootID": _hash(name + "/boot")[:32]},
    }


def _gpus_container(pod):
    for container in pod["spec"].get("containers") or []:
        if container.get("name") == "gpus":
            return container
    return {}


def plugin_gates(pod):
    """Feature gates from FEATURE_GATES on a kubelet-plugin pod's gpus container."""
    env = {e.get("name"): e.get("value") for e in _gpus_container(pod).get("env") or []}
    return opaque.parse_gates(env.get("FEATURE_GATES"))


def plugin_settings(pod):
    """How the GPU plugin of a kubelet-plugin pod publishes, as NVIDIA's would with that pod's
    gpus container: {"shares": the ConsumableShares mode or None, "numa": whether it publishes
    numaNode (an image tagged 0.5.0 or later)}, and why it would not start (None: it starts).

    CONSUMABLE_SHARES as the chart renders it (absent: the flag's default, "disabled");
    the checks are main.go's validateFlags. A plugin older than 0.5.0 knows no ConsumableShares
    gate and exits on it, as the feature-gate parser refuses an unknown gate."""
    container = _gpus_container(pod)
    env = {e.get("name"): e.get("value") for e in container.get("env") or []}
    gates = opaque.parse_gates(env.get("FEATURE_GATES"))
    # The stand-in charts (tests/fixtures/charts) run pause and name the image they stand for.
    image = (pod["metadata"].get("annotations") or {}).get(STAND_IN_IMAGE_ANNOTATION) or container.get("image")
    release = gpus.plugin_release(image)
    mode = env.get("CONSUMABLE_SHARES")
    mode = gpus.SHARES_DISABLED if mode is None else mode
    settings = {"shares": None, "numa": gpus.has_release_05(release)}
    if release is not None and not gpus.has_release_05(release):
        if gpus.SHARES_GATE in gates:
            return settings, "unrecognized feature gate: %s" % gpus.SHARES_GATE
        return settings, None  # CONSUMABLE_SHARES is no flag of 0.4.x: ignored
    error = gpus.consumable_shares_error(mode, gates)
    if error is not None:
        return settings, "invalid CLI flags: " + error
    settings["shares"] = gpus.shares_mode(mode, gates)
    return settings, None


def internal_ip(node_name):
    """A stable documentation-range address per simulated node (never contacted)."""
    return "192.0.2.%d" % (_stable_byte(node_name) or 1)


def _hash(text):
    return hashlib.sha256(text.encode()).hexdigest()


def _stable_byte(text):
    return int(_hash(text)[:2], 16)


class Simulator:
    def __init__(self, api_client, nodes, driver_mode, kubelet_version, ready_file=None, report_file=None,
                 consumable_shares=None):
        self.api = api_client
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.nodes = {n["name"]: n for n in nodes}
        self.driver_mode = driver_mode
        # always mode: publish as NVIDIA's 0.5.0 plugin with ConsumableShares on in this mode
        self.always_settings = {"shares": consumable_shares, "numa": bool(consumable_shares)}
        # (namespace, pod name) -> plugin_settings of its kubelet-plugin pod
        self.plugin_settings = {}
        # json of a device as sent -> as the API server stored it, where it dropped fields (the
        # ResourceSlice controller then wants what can be stored, and logs it once)
        self.server_forms = {}
        # node -> {claim uid: {device: effective config}} of the claims prepared there
        self.prepared_claims = {}
        self.kubelet_version = kubelet_version
        self.ready_file = ready_file
        self.report_file = report_file
        # node -> what the API server said when it refused that node's slices
        self.rejected = {}
        self.report_lock = threading.Lock()
        # While the nodes are checked at start, the report is written once, complete.
        self.checking = False
        self.node_uids = {}
        self.plugin_pods = {}
        # (namespace, pod name) -> the drivers its kubelet-plugin pod runs
        self.plugin_drivers = {}
        # nodes whose compute-domain slices this simulator published (always mode: not listed)
        self.compute_domains = set()
        # (namespace, pod name) -> node, for NVIDIA device-plugin pods; node -> nvidia.com/gpu offered
        self.device_plugin_pods = {}
        self.offered = {}
        self.both_allowed = set()
        self.withheld = set()
        # (namespace, pod name) -> the driver feature gates its kubelet-plugin pod runs with
        self.plugin_gates = {}
        # pod uid -> {device name: effective sharing} once its claims were prepared
        self.prepared = {}
        # pod uid -> (node, uids of the claims prepared for it)
        self.prepared_claims_of_pod = {}
        self.prepare_failed = set()
        self.pod_ips = {}
        # node -> the NVML health events injected there (lab.py fault), which the running
        # plugin turns into device taints while its NVMLDeviceHealthCheck gate is on
        self.health_events = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    # ----- ResourceSlices (the simulated DRA driver) -------------------------------------

    def _slices_of(self, node_name, driver=gpus.DRIVER):
        items = self.custom.list_cluster_custom_object(
            "resource.k8s.io", "v1", "resourceslices",
            field_selector="spec.driver=%s,spec.nodeName=%s" % (driver, node_name))["items"]
        return items

    def _devices(self, node_name, driver):
        if driver != gpus.DRIVER:
            return compute_domain.devices()
        node = self.nodes[node_name]
        settings = self._settings(node_name)
        devices = gpus.driver_devices(node["devices"], node["gpus"], settings["shares"], settings["numa"])
        if self._checks_health(node_name):
            devices = health.with_taints(devices, self.health_events.get(node_name) or [])
        return devices

    def _checks_health(self, node_name):
        """Whether the node's GPU plugin runs NVIDIA's health checks: its gate
        NVMLDeviceHealthCheck (always mode: on, as for a driver installed with it)."""
        if self.driver_mode != "plugin":
            return True
        return any(node == node_name and self.plugin_gates.get(key, {}).get(health.GATE)
                   for key, node in self.plugin_pods.items())

    def _settings(self, node_name):
        """How the GPU plugin on the node publishes (plugin_settings; always mode: LAB_CONSUMABLE_SHARES)."""
        if self.driver_mode != "plugin":
            return self.always_settings
        for key, node in self.plugin_pods.items():
            if node == node_name and key in self.plugin_settings:
                return self.plugin_settings[key]
        return {"shares": None, "numa": False}

    def _storable(self, devices):
        """The devices as the API server will store them, once it was seen to drop fields."""
        return [self.server_forms.get(json.dumps(d, sort_keys=True), d) for d in devices]

    def _learn_dropped(self, node_name, sent, stored):
        """After a create or update: where the API server dropped fields (DRAConsumableCapacity
        off, Kubernetes 1.35), want what it stores from now on, as the ResourceSlice controller
        does (sliceStored), with its message, once per slice content."""
        by_name = {d["name"]: d for d in ((stored or {}).get("spec") or {}).get("devices") or []}
        dropped = []
        for device in sent["devices"]:
            actual = by_name.get(device["name"])
            # The API server stamps a taint's timeAdded: that is no dropped field.
            if actual is not None and health.without_time_added(actual) != health.without_time_added(device):
                key = json.dumps(device, sort_keys=True)
                if self.server_forms.get(key) != actual:
                    self.server_forms[key] = actual
                    dropped.append(device["name"])
        if dropped:
            features = [feature for feature, field in (("DRAConsumableCapacity", "allowMultipleAllocations"),
                                                       ("DRADeviceTaints", "taints"))
                        if any(field in d and field not in by_name.get(d["name"], {}) for d in sent["devices"])]
            features = features or ["unknown"]
            LOG.warning('pool "%s": some fields were dropped by the apiserver, probably because these features '
                        "are disabled: %s (devices %s); publishing them as stored", node_name,
                        " ".join(features), ", ".join(sorted(dropped)))

    def publish(self, node_name, driver=gpus.DRIVER, existing=None):
        """Make the node's pool of ``driver`` hold its devices, with the API calls the driver's
        ResourceSlice controller makes (pool.plan): a change to a one-slice pool updates that
        slice in place and keeps the generation."""
        devices = self._storable(self._devices(node_name, driver))
        if not devices:
            return
        existing = self._slices_of(node_name, driver) if existing is None else existing
        devices = health.copy_time_added(devices, existing)
        wanted = pool.chunks(pool.shuffled(devices))
        steps = pool.plan(existing, wanted)
        if not (steps["delete"] or steps["update"] or steps["create"]):
            return
        generation = steps["generation"]
        for name in steps["delete"]:
            self._delete_slice(name)
        for existing, index in steps["update"]:
            spec = gpus.slice_spec(node_name, wanted[index], generation, len(wanted), driver)
            self._update_slice(node_name, existing, spec)
        for index in steps["create"]:
            spec = gpus.slice_spec(node_name, wanted[index], generation, len(wanted), driver)
            self._create_slice(node_name, spec, index)
        self._clear_rejection(node_name)
        LOG.info("published %d devices of %s in pool %s generation %d (%d slice(s) created, %d updated, %d deleted)",
                 len(devices), driver, node_name, generation, len(steps["create"]), len(steps["update"]),
                 len(steps["delete"]))

    def validate(self, node_name):
        """Have the API server check this node's slices as it would on publishing, without
        storing them (dryRun=All runs validation and admission)."""
        node = self.nodes[node_name]
        specs = gpus.slice_specs(node_name, node["devices"], 1)
        for index, spec in enumerate(specs):
            self._create_slice(node_name, spec, index, dry_run=True)
        self._clear_rejection(node_name)

    def _create_slice(self, node_name, spec, index, dry_run=False):
        name = pool.generate_name(index, spec["pool"]["resourceSliceCount"], spec["driver"], node_name)
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"generateName": name,
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node_name,
                                                  "uid": self.node_uids[node_name], "controller": True}]},
                "spec": spec}
        options = {"dry_run": "All"} if dry_run else {}
        stored = self._refusable(node_name, self.custom.create_cluster_custom_object,
                                 "resource.k8s.io", "v1", "resourceslices", body, **options)
        if not dry_run:
            self._learn_dropped(node_name, spec, stored)

    def _update_slice(self, node_name, existing, spec):
        """Update in place, from the listed object (its resourceVersion: a conflict is retried by
        the next reconcile, as the controller retries)."""
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": dict(existing["metadata"]), "spec": spec}
        stored = self._refusable(node_name, self.custom.replace_cluster_custom_object,
                                 "resource.k8s.io", "v1", "resourceslices", existing["metadata"]["name"], body)
        self._learn_dropped(node_name, spec, stored)

    def _refusable(self, node_name, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except ApiException as exc:
            if not is_rejection(exc):
                raise
            self._record_rejection(node_name, exc)
            raise SliceRejected("%s: %s" % (node_name, server_message(exc))) from exc

    def _record_rejection(self, node_name, exc):
        entry = {"status": exc.status, "reason": exc.reason, "message": server_message(exc)}
        with self.report_lock:
            if self.rejected.get(node_name) != entry:
                # Once per distinct answer: the resync retries every RESYNC_SECONDS.
                LOG.error("the API server rejected the %s slices of %s: %s %s: %s",
                          gpus.DRIVER, node_name, exc.status, exc.reason, entry["message"])
            self.rejected[node_name] = entry
            self._write_report()

    def _clear_rejection(self, node_name):
        with self.report_lock:
            if self.rejected.pop(node_name, None) is not None:
                LOG.info("the %s slices of %s are accepted now", gpus.DRIVER, node_name)
                self._write_report()

    def _write_report(self, failed=None):
        if self.report_file and (failed or not self.checking):
            report.write(self.report_file, dict(self.rejected), failed)

    def record_failure(self, exc):
        """The simulator is about to die of ``exc``: say so where `lab up` and `lab status` look."""
        with self.report_lock:
            self._write_report(failed="%s: %s" % (type(exc).__name__, exc))

    def serves_slices(self):
        try:
            self.custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", limit=1)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def check_slices(self):
        """Before reporting ready, every GPU node's slices go to the API server: published in
        ``always`` mode, validated by a dry run in ``plugin`` mode, so a slice it rejects fails
        `lab up` in both modes. Returns the nodes whose slices were rejected."""
        if not self.serves_slices():
            # A lab without DRA (LAB_WITHOUT_DRA): no slice can be published or checked.
            LOG.info("the API server does not serve resource.k8s.io/v1 resourceslices; nothing to check")
            return []
        action = self.publish if self.driver_mode == "always" else self.validate

        def attempt(name):
            try:
                action(name)
            except SliceRejected:
                pass  # recorded; the other nodes are still checked, so the report is complete

        self.checking = True
        try:
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(attempt, [name for name, node in self.nodes.items() if node["devices"]]))
        finally:
            with self.report_lock:
                self.checking = False
                self._write_report()
        return sorted(self.rejected)

    def unpublish(self, node_name, driver=gpus.DRIVER):
        for old in self._slices_of(node_name, driver):
            self._delete_slice(old["metadata"]["name"])
        LOG.info("removed the %s slices of %s (no kubelet plugin runs there)", driver, node_name)

    def _delete_slice(self, name):
        try:
            self.custom.delete_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    # ----- Nodes (the simulated kubelets) ----------------------------------------------------

    def register_node(self, node):
        body = node_object(node, self.kubelet_version)
        try:
            created = self.core.create_node(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            created = self.core.read_node(node["name"])
        self.core.patch_node_status(node["name"], {"status": body["status"]})
        status = getattr(created, "status", None)
        if DEVICE_PLUGIN_RESOURCE in ((getattr(status, "allocatable", None) if status else None) or {}):
            self._offer_device_plugin_gpus(node["name"], 0, force=True)  # left by an earlier simulator
        self._clear_not_ready_taint(node["name"], created.spec.taints or [])
        self.node_uids[node["name"]] = created.metadata.uid

    def _clear_not_ready_taint(self, name, taints):
        """The TaintNodesByCondition admission taints every new node not-ready; the
        node-lifecycle controller would lift it once the kubelet reports Ready. The lab
        runs no such controller, so the simulated kubelet lifts it itself."""
        taints = [t if isinstance(t, dict) else t.to_dict() for t in taints]
        kept = [t for t in taints if t.get("key") != "node.kubernetes.io/not-ready"]
        if len(kept) != len(taints):
            kept = [{k: v for k, v in t.items() if v is not None} for t in kept]
            self.core.patch_node(name, {"spec": {"taints": kept or None}})

    def ensure_kubeadm_config(self):
        """kube-system/kubeadm-config as `kubeadm init` writes it: the lab stands in for a
        kubeadm cluster, and dra.gpu tells kubeadm from k3s, RKE2 and managed clusters by it."""
        text = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v%s\n" % (
            self.kubelet_version.lstrip("v"))
        body = {"metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
                "data": {"ClusterConfiguration": text}}
        try:
            self.core.create_namespaced_config_map("kube-system", body)
        except ApiException as exc:
            if exc.status != 409:
                raise

    def register_nodes(self):
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(self.register_node, self.nodes.values()))
        LOG.info("registered %d simulated nodes", len(self.nodes))

    def installed_kubelet_version(self, node_obj):
        name = node_obj["metadata"]["name"]
        annotations = node_obj["metadata"].get("annotations") or {}
        return (annotations.get(KUBELET_VERSION_ANNOTATION) or self.nodes[name].get("kubelet_version")
                or self.kubelet_version)

    def keep_node_ready(self, node_obj):
        status = node_obj.get("status") or {}
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        name = node_obj["metadata"]["name"]
        version = self.installed_kubelet_version(node_obj)
        reported = (status.get("nodeInfo") or {}).get("kubeletVersion")
        if conditions.get("Ready", {}).get("status") != "True" or reported != version:
            self.core.patch_node_status(name, {"status": node_status(name, version)})
            LOG.info("node %s reported Ready with kubelet %s", name, version)
        self._clear_not_ready_taint(node_obj["metadata"]["name"], (node_obj.get("spec") or {}).get("taints") or [])

    # ----- Pods ---------------------------------------------------------------------------------

    def _pod_ip(self, pod):
        key = pod["metadata"]["uid"]
        if key not in self.pod_ips:
            node_index = sorted(self.nodes).index(pod["spec"]["nodeName"]) % 250
            self.pod_ips[key] = "10.244.%d.%d" % (node_index, 2 + len(self.pod_ips) % 250)
        return self.pod_ips[key]

    def handle_pod(self, event_type, pod):
        spec, meta = pod["spec"], pod["metadata"]
        node_name = spec.get("nodeName")
        if node_name not in self.nodes:
            return
        phase = (pod.get("status") or {}).get("phase")
        deleting = event_type == "DELETED" or bool(meta.get("deletionTimestamp"))
        if event_type == "DELETED":
            self.prepared.pop(meta["uid"], None)
            self.prepare_failed.discard(meta["uid"])
            self._unprepare(pod)
        refused = plugin_settings(pod)[1] if is_plugin_pod(pod) else None
        if deleting:
            # A pod that is gone, or going, is neither prepared nor started again.
            if event_type != "DELETED":
                self._finish_deletion(pod)
        elif refused:
            self._set_crash_loop(pod, refused)
        elif phase in (None, "Pending"):
            if probe.behaviour(pod) == "image-pull-error":
                self._set_image_pull_error(pod)
            elif self._prepare_claims(pod):
                self._set_running(pod)
        elif phase == "Running" and spec.get("restartPolicy") in ("Never", "OnFailure"):
            self._set_succeeded(pod)
        if is_plugin_pod(pod):
            self._track_plugin(pod, active=not deleting and phase == "Running" and not refused)
        if is_device_plugin_pod(pod):
            self._track_device_plugin(pod, active=not deleting and phase == "Running")

    def _gates_on(self, node_name):
        """The feature gates of the kubelet plugin on ``node_name`` (FEATURE_GATES on its gpus
        container, as NVIDIA's charts render featureGates); none without a plugin pod."""
        for key, node in self.plugin_pods.items():
            if node == node_name:
                return self.plugin_gates.get(key, {})
        return {}

    def _prepare_claims(self, pod):
        """NodePrepareResources for the pod's claims: False (pod stays ContainerCreating, with
        the kubelet's FailedPrepareDynamicResources event) when the driver would refuse one."""
        uid = pod["metadata"]["uid"]
        if uid in self.prepare_failed:
            return False
        node = pod["spec"]["nodeName"]
        by_name = {d["name"]: d for d in self.nodes[node]["devices"]}
        shares = self._settings(node)["shares"]
        prepared = self.prepared_claims.setdefault(node, {})
        sharing, claims = {}, {}
        for claim in self._claims(pod):
            try:
                effective = opaque.prepare(claim, by_name, self._gates_on(node), shares=bool(shares))
                opaque.check_overlap(claim, effective, prepared, shares=bool(shares))
            except opaque.PrepareError as exc:
                if not isinstance(exc, opaque.OverlapError):
                    # An overlap ends when the other claim is unprepared (a missed DELETED event is
                    # caught up by the next relist): the kubelet's retries then succeed.
                    self.prepare_failed.add(uid)
                self._prepare_failure(pod, opaque.kubelet_message(claim, exc))
                return False
            sharing.update(effective)
            claims[claim["metadata"]["uid"]] = effective
        prepared.update(claims)
        self.prepared[uid] = sharing
        self.prepared_claims_of_pod[uid] = (node, list(claims))
        return True

    def _unprepare(self, pod):
        """NodeUnprepareResources once the pod is gone: its claims no longer hold their devices
        on the node (a claim shared by other pods is unprepared with its last pod, as the
        kubelet does; here with the first to go, which the lab's tests never tell apart)."""
        node, claims = self.prepared_claims_of_pod.pop(pod["metadata"]["uid"], (None, []))
        for claim_uid in claims:
            self.prepared_claims.get(node, {}).pop(claim_uid, None)

    def _prepare_failure(self, pod, message):
        meta = pod["metadata"]
        LOG.info("pod %s/%s: %s", meta["namespace"], meta["name"], message)
        state = {"waiting": {"reason": "ContainerCreating"}}
        self._patch_status(pod, {"phase": "Pending", "containerStatuses": self._container_statuses(pod, state, False)})
        now = _now()
        event = {"metadata": {"generateName": meta["name"] + ".", "namespace": meta["namespace"]},
                 "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
                                    "uid": meta["uid"], "apiVersion": "v1"},
                 "reason": "FailedPrepareDynamicResources", "message": message, "type": "Warning",
                 "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                 "reportingComponent": "kubelet", "reportingInstance": pod["spec"]["nodeName"]}
        try:
            self.core.create_namespaced_event(meta["namespace"], event)
        except ApiException as exc:
            LOG.warning("could not record the prepare failure event: %s", server_message(exc))

    def _track_plugin(self, pod, active):
        """Level-triggered: after any change to a kubelet-plugin pod, make its node's slices
        match whether a plugin pod runs there, whatever events came before."""
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        node_name = pod["spec"]["nodeName"]
        with self.lock:
            if active:
                self.plugin_pods[key] = node_name
                self.plugin_gates[key] = plugin_gates(pod)
                self.plugin_drivers[key] = plugin_drivers(pod)
                self.plugin_settings[key] = plugin_settings(pod)[0]
            else:
                self.plugin_pods.pop(key, None)
                self._forget_health_events(node_name)
                self.plugin_gates.pop(key, None)
                self.plugin_drivers.pop(key, None)
                self.plugin_settings.pop(key, None)
            self._reconcile_node(node_name)

    def _track_device_plugin(self, pod, active):
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        node_name = pod["spec"]["nodeName"]
        with self.lock:
            if active:
                self.device_plugin_pods[key] = node_name
            else:
                self.device_plugin_pods.pop(key, None)
            self._reconcile_device_plugin(node_name)

    def _reconcile_device_plugin(self, node_name):
        running = node_name in self.device_plugin_pods.values()
        self._offer_device_plugin_gpus(node_name, full_gpus(self.nodes[node_name]) if running else 0)
        self._reconcile_node(node_name)

    def _offer_device_plugin_gpus(self, node_name, count, force=False):
        """Capacity and allocatable nvidia.com/gpu as the kubelet reports a device plugin's
        devices; removed (null in the patch) when no plugin runs. Patched only on a change."""
        if not force and self.offered.get(node_name, 0) == count:
            return
        value = str(count) if count else None
        self.core.patch_node_status(node_name, {"status": {"capacity": {DEVICE_PLUGIN_RESOURCE: value},
                                                           "allocatable": {DEVICE_PLUGIN_RESOURCE: value}}})
        self.offered[node_name] = count
        if count or not force:  # the start-up clean-up is not news
            LOG.info("node %s: device plugin offers nvidia.com/gpu: %d", node_name, count)

    def _runs(self, node_name, driver):
        """Whether a kubelet-plugin pod that runs ``driver`` is running on the node."""
        return any(node == node_name and driver in self.plugin_drivers.get(key, (gpus.DRIVER,))
                   for key, node in self.plugin_pods.items())

    def _publishes(self, node_name):
        """Whether the DRA driver serves the node's devices: its kubelet plugin runs there, and
        the device plugin does not (unless the node allows both, to show over-admission)."""
        if self.driver_mode == "plugin" and not self._runs(node_name, gpus.DRIVER):
            return False
        return node_name not in self.device_plugin_pods.values() or node_name in self.both_allowed

    def _reconcile_node(self, node_name):
        if not self.nodes[node_name]["devices"]:
            return
        for reconcile in (self._reconcile_gpus, self._reconcile_compute_domains):
            try:
                reconcile(node_name)
            except SliceRejected:
                pass  # recorded and reported; the other nodes are reconciled all the same

    def _reconcile_compute_domains(self, node_name):
        """compute-domain.nvidia.com: published while a plugin pod with its container runs,
        whatever the device plugin does (it serves no GPU)."""
        wanted = self._runs(node_name, compute_domain.DRIVER)
        if self.driver_mode != "plugin" and wanted == (node_name in self.compute_domains):
            return
        has_slices = bool(self._slices_of(node_name, compute_domain.DRIVER))
        if wanted and not has_slices:
            self.publish(node_name, compute_domain.DRIVER)
        elif not wanted and has_slices:
            self.unpublish(node_name, compute_domain.DRIVER)
        (self.compute_domains.add if wanted else self.compute_domains.discard)(node_name)

    def _reconcile_gpus(self, node_name):
        wanted = self._publishes(node_name)
        if self.driver_mode != "plugin":
            # Every node publishes from the start; only a device plugin withholds its slices.
            # Known without asking the API server, so a resync of 1,000 nodes costs nothing.
            if wanted == (node_name not in self.withheld):
                return
            (self.withheld.discard if wanted else self.withheld.add)(node_name)
        existing = self._slices_of(node_name)
        if wanted:
            # Also when slices exist: a new plugin pod may publish differently (ConsumableShares).
            self.publish(node_name, existing=existing)
        elif existing:
            self.unpublish(node_name)

    def resync_plugins(self, pods):
        """Rebuild the kubelet-plugin view from a full pod list and make the slices match it."""
        running, gates, drivers, settings = {}, {}, {}, {}
        for pod in pods:
            node = pod["spec"].get("nodeName")
            if node in self.nodes and is_plugin_pod(pod) and not pod["metadata"].get("deletionTimestamp") \
                    and (pod.get("status") or {}).get("phase") == "Running" and plugin_settings(pod)[1] is None:
                key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
                running[key] = node
                gates[key] = plugin_gates(pod)
                drivers[key] = plugin_drivers(pod)
                settings[key] = plugin_settings(pod)[0]
        device_plugin = dict(((p["metadata"]["namespace"], p["metadata"]["name"]), p["spec"]["nodeName"])
                             for p in pods if p["spec"].get("nodeName") in self.nodes and is_device_plugin_pod(p)
                             and not p["metadata"].get("deletionTimestamp")
                             and (p.get("status") or {}).get("phase") == "Running")
        # Pods that went while the watch was down are unprepared here (no DELETED event came).
        alive = {p["metadata"].get("uid") for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
        for uid in [u for u in self.prepared_claims_of_pod if u not in alive]:
            self._unprepare({"metadata": {"uid": uid}})
        with self.lock:
            self.plugin_pods = running
            self.plugin_gates = gates
            self.plugin_drivers = drivers
            self.plugin_settings = settings
            self.device_plugin_pods = device_plugin
            for name in self.nodes:
                self._reconcile_device_plugin(name)

    def _finish_deletion(self, pod):
        meta = pod["metadata"]
        try:
            self.core.delete_namespaced_pod(meta["name"], meta["namespace"], grace_period_seconds=0,
                                            body=client.V1DeleteOptions(
                                                grace_period_seconds=0,
                                                preconditions=client.V1Preconditions(uid=meta["uid"])))
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise

    def _container_statuses(self, pod, state, ready):
        statuses = []
        for container in pod["spec"].get("containers") or []:
            statuses.append({"name": container["name"], "image": container.get("image", ""),
                             "imageID": "sim://" + container.get("image", ""),
                             "containerID": "sim://%s/%s" % (pod["metadata"]["uid"], container["name"]),
                             "ready": ready, "started": "running" in state, "restartCount": 0,
                             "state": state})
        return statuses

    def _patch_status(self, pod, status):
        meta = pod["metadata"]
        try:
            self.core.patch_namespaced_pod_status(meta["name"], meta["namespace"], {"status": status})
        except ApiException as exc:
            if exc.status not in (404, 409, 422):
                raise

    def _set_running(self, pod):
        now = _now()
        init = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True,
                 "restartCount": 0, "containerID": "sim://%s/%s" % (pod["metadata"]["uid"], c["name"]),
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now,
                                          "finishedAt": now}}}
                for c in pod["spec"].get("initContainers") or []]
        ip = self._pod_ip(pod)
        status = {
            "phase": "Running", "hostIP": internal_ip(pod["spec"]["nodeName"]),
            "hostIPs": [{"ip": internal_ip(pod["spec"]["nodeName"])}],
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
            "conditions": [self._condition(t, "True", now) for t in
                           ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": self._container_statuses(pod, {"running": {"startedAt": now}}, True),
        }
        if init:
            status["initContainerStatuses"] = init
        self._patch_status(pod, status)

    @staticmethod
    def _condition(kind, value, now, reason=None):
        cond = {"type": kind, "status": value, "lastProbeTime": None, "lastTransitionTime": now}
        if reason:
            cond["reason"] = reason
        return cond

    def _claims(self, pod):
        claims = []
        for name in probe.claim_names(pod):
            try:
                claims.append(self.custom.get_namespaced_custom_object(
                    "resource.k8s.io", "v1", pod["metadata"]["namespace"], "resourceclaims", name))
            except ApiException:
                continue
        return claims

    def _allocated_devices(self, pod):
        """The devices the real scheduler allocated to this pod's claims on its node."""
        node = pod["spec"]["nodeName"]
        by_name = {d["name"]: d for d in self.nodes[node]["devices"]}
        found = []
        for claim in self._claims(pod):
            results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
            for result in results:
                if result.get("driver") == gpus.DRIVER and result.get("pool") == node and result["device"] in by_name:
                    if by_name[result["device"]] not in found:
                        found.append(by_name[result["device"]])
        return found

    def _set_crash_loop(self, pod, message):
        """A kubelet-plugin container that exits at start (NVIDIA's plugin refused its flags):
        CrashLoopBackOff, the last termination carrying the plugin's error; never Ready."""
        current = ((pod.get("status") or {}).get("containerStatuses") or [])
        if any(((cs.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff" for cs in current):
            return
        now = _now()
        LOG.info("pod %s/%s: the kubelet plugin exits at start: %s", pod["metadata"]["namespace"],
                 pod["metadata"]["name"], message)
        statuses = self._container_statuses(pod, {"waiting": {"reason": "CrashLoopBackOff", "message":
                                                              "back-off 10s restarting failed container"}}, False)
        for status in statuses:
            status["restartCount"] = 1
            status["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": "Error: %s\n" % message,
                                                  "startedAt": now, "finishedAt": now}}
        self._patch_status(pod, {"phase": "Running", "startTime": now,
                                 "hostIP": internal_ip(pod["spec"]["nodeName"]),
                                 "conditions": [self._condition("Ready", "False", now, "ContainersNotReady"),
                                                self._condition("ContainersReady", "False", now, "ContainersNotReady"),
                                                self._condition("PodScheduled", "True", now)],
                                 "containerStatuses": statuses})

    def _set_image_pull_error(self, pod):
        if ((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get("state", {}).get("waiting"):
            return
        state = {"waiting": {"reason": "ErrImagePull",
                             "message": "simulated: failed to pull image %s: not found" % (
                                 pod["spec"]["containers"][0].get("image"))}}
        self._patch_status(pod, {"phase": "Pending",
                                 "containerStatuses": self._container_statuses(pod, state, False)})

    def _set_succeeded(self, pod):
        now = _now()
        started = now
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            started = ((cs.get("state") or {}).get("running") or {}).get("startedAt", now)
        exit_code, message = probe.answer(pod, self._allocated_devices(pod), self.nodes[pod["spec"]["nodeName"]]["devices"],
                                          self.prepared.pop(pod["metadata"]["uid"], {}))
        self._unprepare(pod)  # the kubelet unprepares a terminated pod's claims
        state = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                                "startedAt": started, "finishedAt": now}}
        if message:
            state["terminated"]["message"] = message
        status = {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "conditions": [self._condition("PodReadyToStartContainers", "False", now),
                           self._condition("Initialized", "True", now),
                           self._condition("Ready", "False", now, "PodCompleted"),
                           self._condition("ContainersReady", "False", now, "PodCompleted"),
                           self._condition("PodScheduled", "True", now)],
            "containerStatuses": self._container_statuses(pod, state, False),
        }
        self._patch_status(pod, status)

    # ----- Watch loops --------------------------------------------------------------------

    def _watch_forever(self, list_fn, handler, what, on_relist=None, **kwargs):
        """List, then watch from the list's resourceVersion; relist on 410, a broken stream,
        or every RESYNC_SECONDS, so that anything missed while disconnected is corrected."""
        while not self.stop.is_set():
            try:
                listing = list_fn(_preload_content=False, _request_timeout=30, **kwargs)
                data = json.loads(listing.data)
                for item in data.get("items") or []:
                    self._safely(handler, "ADDED", item, what)
                if on_relist:
                    self._safely(lambda _type, items: on_relist(items), "RELIST", data.get("items") or [], what)
                version = data["metadata"]["resourceVersion"]
                stream = watch.Watch()
                for event in stream.stream(list_fn, resource_version=version, timeout_seconds=RESYNC_SECONDS,
                                           allow_watch_bookmarks=True, _request_timeout=RESYNC_SECONDS + 15,
                                           **kwargs):
                    if self.stop.is_set():
                        stream.stop()
                        break
                    if event["type"] in ("BOOKMARK", "ERROR"):
                        if event["type"] == "ERROR":
                            break
                        continue
                    self._safely(handler, event["type"], event["raw_object"], what)
            except ApiException as exc:
                if exc.status != 410:
                    LOG.warning("%s watch failed (%s); relisting", what, exc.reason)
                    self.stop.wait(1.0)
            except Exception as exc:  # noqa: BLE001 - a dropped connection must not end the agent
                LOG.warning("%s watch interrupted (%s); relisting", what, exc)
                self.stop.wait(1.0)

    @staticmethod
    def _safely(handler, event_type, obj, what):
        try:
            handler(event_type, obj)
        except ApiException as exc:
            name = obj.get("metadata", {}).get("name") if isinstance(obj, dict) else event_type
            LOG.warning("%s %s: API error %s %s", what, name, exc.status, exc.reason)
        except Exception:  # noqa: BLE001
            LOG.exception("%s handler failed", what)

    def _node_event(self, event_type, node_obj):
        name = node_obj["metadata"]["name"]
        if event_type == "DELETED" or name not in self.nodes:
            return
        self.keep_node_ready(node_obj)
        allowed = ((node_obj["metadata"].get("annotations") or {}).get(BOTH_MANAGERS_ANNOTATION) == "true")
        if allowed != (name in self.both_allowed):
            with self.lock:
                (self.both_allowed.add if allowed else self.both_allowed.discard)(name)
                self._reconcile_node(name)
        self.follow_mig_config(node_obj)
        self.follow_health_events(node_obj)

    # ----- NVML health events (lab.py fault) ---------------------------------------------

    def follow_health_events(self, node_obj):
        """SIMULATED NVML events: the faults injected on the node (health.FAULTS_ANNOTATION)
        become device taints, as NVIDIA's plugin publishes them, when they change."""
        name = node_obj["metadata"]["name"]
        events = health.read_events(node_obj["metadata"].get("annotations"))
        with self.lock:
            if events == self.health_events.get(name, []):
                return
            self.health_events[name] = events
            LOG.info("node %s: %d NVML health event(s) injected", name, len(events))
            if self._publishes(name):
                self.publish(name)

    def _forget_health_events(self, node_name):
        """A plugin pod went away: NVIDIA's plugin keeps taints only in memory, so the next one
        starts without them. The injected events are spent with it (annotation removed)."""
        if not self.health_events.pop(node_name, None):
            return
        try:
            self.core.patch_node(node_name, {"metadata": {"annotations": {health.FAULTS_ANNOTATION: None}}})
        except ApiException as exc:
            LOG.warning("node %s: could not remove the spent health events: %s", node_name, server_message(exc))

    # ----- the GPU Operator's MIG manager ------------------------------------------------

    def follow_mig_config(self, node_obj):
        """SIMULATED MIG manager: apply the layout named by nvidia.com/mig.config to the
        node's MIG-capable GPUs, then report nvidia.com/mig.config.state as NVIDIA's does
        (pending, then success or failed); the driver republishes the node's devices."""
        name = node_obj["metadata"]["name"]
        labels = node_obj["metadata"].get("labels") or {}
        layout = labels.get(MIG_CONFIG_LABEL)
        node = self.nodes[name]
        if labels.get(MIG_CAPABLE_LABEL) != "true" or node.get("mig_layout") == layout:
            return
        node.setdefault("topology_gpus", node["gpus"])
        if not layout:
            # The label was removed: the GPU Operator would label the node with its default
            # (all-disabled) again; the lab's equivalent is the topology's own layout.
            self._relayout(name, node["topology_gpus"], None)
            return
        self.core.patch_node(name, {"metadata": {"labels": {MIG_STATE_LABEL: "pending"}}})
        try:
            groups = gpus.apply_mig_layout(node["topology_gpus"], layout)
            gpus.node_devices(name, groups)
        except gpus.TopologyError as exc:
            LOG.warning("node %s: MIG manager cannot apply %s: %s", name, layout, exc)
            node["mig_layout"] = layout
            self.core.patch_node(name, {"metadata": {"labels": {MIG_STATE_LABEL: "failed"}}})
            return
        self._relayout(name, groups, layout)
        LOG.info("node %s: MIG layout %s applied (%d devices)", name, layout, len(node["devices"]))
        self.core.patch_node(name, {"metadata": {"labels": {MIG_STATE_LABEL: "success"}}})

    def _relayout(self, name, groups, layout):
        node = self.nodes[name]
        with self.lock:
            node["gpus"], node["devices"], node["mig_layout"] = groups, gpus.node_devices(name, groups), layout
            if self._publishes(name):
                self.publish(name)

    def run(self):
        """Serve until stopped; returns the exit status (1: a slice was rejected at start)."""
        self.ensure_kubeadm_config()
        self.register_nodes()
        rejected = self.check_slices()
        if rejected:
            LOG.error("not ready: the API server rejected the slices of %d node(s) (%s); see %s",
                      len(rejected), ", ".join(rejected[:report.NAMED]), self.report_file)
            return 1
        # In plugin mode the pod watch's first list (resync_plugins) removes slices whose
        # plugin pod is gone, e.g. after the agent itself restarted.
        threads = [
            threading.Thread(target=self._watch_forever, daemon=True,
                             args=(self.core.list_pod_for_all_namespaces, self.handle_pod, "pod"),
                             kwargs={"on_relist": self.resync_plugins}),
            threading.Thread(target=self._watch_forever, daemon=True,
                             args=(self.core.list_node, self._node_event, "node"),
                             kwargs={"label_selector": "node.kubernetes.io/instance-type=simulated"}),
        ]
        for thread in threads:
            thread.start()
        if self.ready_file:
            with open(self.ready_file, "w") as handle:
                handle.write(_now())
        LOG.info("simulator ready: %d nodes, driver mode %s", len(self.nodes), self.driver_mode)
        while not self.stop.is_set():
            self.stop.wait(1.0)
        return 0


def load_client(kubeconfig):
    api = kube_config.new_client_from_config(config_file=kubeconfig)
    # No call may hang forever (an API server that restarts can leave a connection half
    # open); watches set their own, longer timeouts per request.
    import urllib3
    api.rest_client.pool_manager.connection_pool_kw["timeout"] = urllib3.Timeout(connect=5, read=30)
    return api


def ready_file_for(state_dir):
    return os.path.join(state_dir, "run", "simulator.ready")


__all__ = ["Simulator", "SliceRejected", "load_client", "ready_file_for"]

"""Fixtures for tests against the running lab (KUBECONFIG from `lab.py env`)."""

import functools
import os
import sys
import threading
import time
import uuid

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from waiting import wait_for_object, wait_until_gone

# The lab's helpers (old_lab: labs beside the test lab) live in labs/ here, with the tests of the labs.
_LAB_HELPERS = os.path.abspath(os.path.join(os.path.dirname(__file__), "labs"))
if _LAB_HELPERS not in sys.path:
    sys.path.append(_LAB_HELPERS)
import old_lab  # noqa: E402

# The collection's module_utils, importable as Ansible sees them (build/collections, or the
# installed tarball when run.sh runs the module tests from it).
for _path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(":"):
    if _path and _path not in sys.path:
        sys.path.insert(0, _path)


@pytest.fixture(scope="session", autouse=True)
def installed_collection_only():
    """With DRA_GPU_INSTALLED_COLLECTIONS set (run.sh, after build-and-install.sh), the tests
    must run the installed tarball: dra.gpu resolves there alone, for ansible-playbook (the
    modules) and for imports here (module_utils), never to the checkout behind build/collections."""
    installed = os.environ.get("DRA_GPU_INSTALLED_COLLECTIONS")
    if not installed:
        return
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "collection"))
    import installed_guard
    found = installed_guard.problems(installed, os.environ.get("ANSIBLE_COLLECTIONS_PATH", ""),
                                     galaxy=os.path.join(os.path.dirname(sys.executable), "ansible-galaxy"))
    found += installed_guard.python_problems(installed)
    if found:
        pytest.fail("not the installed collection: " + "; ".join(found))


DRIVER = "gpu.nvidia.com"
PLUGIN_LABEL = {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}
EXPECTED = {"node-a": ("NVIDIA A10", 2), "node-b": ("NVIDIA L4", 4)}
DRIVER_NAMESPACE = "lab-dra-driver"
RESOURCE = ("resource.k8s.io", "v1", "resourceslices")


def slices_lister(custom):
    return functools.partial(custom.list_cluster_custom_object, "resource.k8s.io", "v1", "resourceslices")


def plugin_daemonset(name, node_selector=None, gates=None):
    """A DaemonSet whose pods carry the DRA chart's kubelet-plugin label (the lab's driver watches it);
    ``gates`` as the chart renders featureGates: FEATURE_GATES on the gpus container."""
    container = {"name": "gpus", "image": "registry.k8s.io/pause:3.10"}
    if gates:
        rendered = "".join("%s=%s," % (k, str(v).lower()) for k, v in sorted(gates.items()))
        container["env"] = [{"name": "FEATURE_GATES", "value": rendered}]
    template_spec = {"containers": [container]}
    if node_selector:
        template_spec["nodeSelector"] = node_selector
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": PLUGIN_LABEL},
                     "template": {"metadata": {"labels": PLUGIN_LABEL}, "spec": template_spec}}}


def pytest_configure(config):
    config.addinivalue_line("markers", "restarts_api_server: restarts the lab's API server; runs after every other test")


def pytest_collection_modifyitems(session, config, items):
    """Tests that restart the API server run last, whatever their file names: the restart slows
    the controllers for a while (watches and RBAC caches rebuild) and would disturb the rest."""
    items.sort(key=lambda item: item.get_closest_marker("restarts_api_server") is not None)


@pytest.fixture(scope="session")
def api():
    if not os.environ.get("KUBECONFIG"):
        pytest.fail("KUBECONFIG is not set: run these tests through `make integration`, which starts the lab")
    return config.new_client_from_config(config_file=os.environ["KUBECONFIG"])


@pytest.fixture(scope="session")
def old_cluster():
    """A second lab at old_lab.OLD_VERSION (1.34.4); yields its kubeconfig."""
    kubeconfig = old_lab.start(old_lab.OLD_VERSION)
    yield kubeconfig
    old_lab.stop(old_lab.OLD_VERSION)


@pytest.fixture(scope="session")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="session")
def custom(api):
    return client.CustomObjectsApi(api)


def scratch_namespace(core, prefix="it-", wait_gone=False):
    """A fresh namespace for one test (a generator for fixtures), deleted afterwards; with
    ``wait_gone`` the teardown waits until it is gone, so its pods' devices are free again."""
    name = prefix + uuid.uuid4().hex[:8]
    core.create_namespace({"metadata": {"name": name}})
    # The service account controller adds "default" shortly after; pods need it.
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    yield name
    core.delete_namespace(name)
    if wait_gone:
        wait_until_gone(core.list_namespace, lambda n: n["metadata"]["name"] == name, "namespace " + name, timeout=120)


@pytest.fixture
def namespace(core):
    yield from scratch_namespace(core)


@pytest.fixture(scope="module")
def plugin_everywhere(api, custom):
    """The simulated driver's kubelet plugin on every node, as the DRA chart deploys it.

    Per test module, and gone with its slices when the module ends: tests that need a
    cluster without published GPUs then pass wherever they sit in the run."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    ns = DRIVER_NAMESPACE
    try:
        core.create_namespace({"metadata": {"name": ns}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    try:
        apps.create_namespaced_daemon_set(ns, plugin_daemonset("dra-driver-nvidia-gpu-kubelet-plugin"))
    except ApiException as exc:
        if exc.status != 409:
            raise
    for node in EXPECTED:
        wait_for_object(slices_lister(custom), functools.partial(lambda n, s: s["spec"].get("nodeName") == n, node),
                        "a ResourceSlice for " + node, timeout=60)
    yield
    core.delete_namespace(ns)
    wait_until_gone(core.list_namespace, lambda n: n["metadata"]["name"] == ns, "namespace " + ns, timeout=120)
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices",
                    timeout=60)


@pytest.fixture(scope="session")
def gpu_class(custom):
    name = "lab-it-gpu"
    expression = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}
    try:
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", body)
    except ApiException as exc:
        if exc.status != 409:
            raise
    yield name
    custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)


PAUSE = "registry.k8s.io/pause:3.10"
DEVICE_PLUGIN_LABEL = {"app": "nvidia-device-plugin-daemonset"}
BOTH_GPU_MANAGERS = "lab.dra.gpu/allow-both-gpu-managers"


def on_node(name):
    return {"kubernetes.io/hostname": name}


def gpu_container(gpus):
    return {"name": "main", "image": PAUSE, "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}


def deployment(name, pod_spec, replicas):
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod_spec}}}


def offered(node):
    return (node["status"].get("allocatable") or {}).get("nvidia.com/gpu")


@pytest.fixture
def two_gpu_managers(api, custom, gpu_class):
    """node-a: NVIDIA's device plugin; node-b: the DRA driver's kubelet plugin (as a migration
    half-way leaves a cluster); both gone, with nvidia.com/gpu and the slices, at the end."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    ns = "it-workloads-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": ns}})
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + ns, timeout=30, namespace=ns)
    old = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-device-plugin-daemonset"},
           "spec": {"selector": {"matchLabels": DEVICE_PLUGIN_LABEL},
                    "template": {"metadata": {"labels": DEVICE_PLUGIN_LABEL},
                                 "spec": {"nodeSelector": on_node("node-a"),
                                          "containers": [{"name": "plugin", "image": PAUSE}]}}}}
    apps.create_namespaced_daemon_set(ns, old)
    apps.create_namespaced_daemon_set(ns, plugin_daemonset("kubelet-plugin"))
    wait_for_object(core.list_node, lambda n: offered(n) == "2", "node-a offering nvidia.com/gpu: 2", timeout=60,
                    field_selector="metadata.name=node-a")
    wait_for_object(slices_lister(custom), lambda s: s["spec"].get("nodeName") == "node-b",
                    "a ResourceSlice for node-b", timeout=60)
    yield ns
    core.patch_node("node-a", {"metadata": {"annotations": {BOTH_GPU_MANAGERS: None}}})
    core.delete_namespace(ns)
    wait_until_gone(core.list_namespace, lambda n: n["metadata"]["name"] == ns, "namespace " + ns, timeout=120)
    wait_for_object(core.list_node, lambda n: offered(n) is None, "node-a without nvidia.com/gpu", timeout=60,
                    field_selector="metadata.name=node-a")
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices", timeout=60)


@pytest.fixture
def upgrade_inventory():
    """For playbooks/upgrade.yml: localhost talks to the API; node-b is a worker "host" (this
    machine, through a local connection)."""
    import tempfile

    import yaml
    hosts = {"all": {"hosts": {"localhost": {"ansible_connection": "local"}},
                     "children": {"kube_node": {"hosts": {"node-b": {"ansible_connection": "local"}}}}}}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
        yaml.safe_dump(hosts, handle)
    yield handle.name
    os.unlink(handle.name)


def run_playbook(playbook, inventory=None, extra_args=(), env=None):
    """Run ansible-playbook as users do, with the JSON callback; return (rc, report, stderr).

    ``playbook`` is a path, or a list of plays written to a temporary file."""
    import json
    import subprocess
    import tempfile

    import yaml
    path = playbook
    if not isinstance(playbook, str):
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
            yaml.safe_dump(playbook, handle)
        path = handle.name
    full_env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOCALHOST_WARNING="false",
                    ANSIBLE_INVENTORY_UNPARSED_WARNING="false", **(env or {}))
    command = ["ansible-playbook", "-e", "ansible_python_interpreter=" + sys.executable]
    if inventory:
        command += ["-i", inventory]
    proc = subprocess.run(command + list(extra_args) + [path], capture_output=True, text=True, env=full_env,
                          check=False)
    if path is not playbook:
        os.unlink(path)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON (rc %s): %s %s"
                             % (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    return proc.returncode, report, proc.stderr


def task_results(report, host="localhost"):
    """Every task's result for ``host``, in order, across plays: [(task name, result)]."""
    return [(task["task"]["name"], task["hosts"][host]) for play in report["plays"] for task in play["tasks"]
            if host in task["hosts"]]


def run_module(module, args, check_mode=False, diff=False, env=None):
    """Run one collection module through ansible-playbook (as users do); return its result."""
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "tasks": [{"name": "run", module: args, "register": "out", "ignore_errors": True,
                        "check_mode": check_mode, "diff": diff}]}]
    _rc, report, _stderr = run_playbook(play, env=env)
    return report["plays"][0]["tasks"][0]["hosts"]["localhost"]


def driver_slice(driver, pool, node, generation=1, count=1, devices=("dev-0",)):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": "%s-%s-" % (pool, driver)},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                     "devices": [{"name": d, "attributes": {"model": {"string": "it-model"}},
                                  "capacity": {"memory": {"value": "1Gi"}}} for d in devices]}}


@pytest.fixture
def test_driver(custom):
    """A driver name of this test's own; its slices are removed afterwards."""
    driver = "it-%s.example.com" % uuid.uuid4().hex[:6]
    yield driver
    for item in custom.list_cluster_custom_object(*RESOURCE, field_selector="spec.driver=" + driver)["items"]:
        custom.delete_cluster_custom_object(*RESOURCE, item["metadata"]["name"])


def wait_in_thread(api, driver, timeout=30, **goal):
    """Run the module's wait logic (module_utils, as the module does) in a thread."""
    from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_wait, slices
    from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
    outcome = {}

    def run():
        try:
            kube = client.Kube(api)
            outcome["result"] = slice_wait.wait_for_devices(kube, slices.Filters(driver=driver),
                                                            slice_wait.Goal(**goal), timeout)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            outcome["error"] = exc
        outcome["done"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def hold_a_gpu(core, custom, namespace, gpu_class):
    """A claim allocated to a running pod, so the counts have an allocated device."""
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "held"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": gpu_class}}]}}})
    core.create_namespaced_pod(namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "holder"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "held"}],
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "gpu"}]}}]}})
    wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                    "pod holder to run", timeout=60, namespace=namespace)


def lab_client_certificate(pki):
    """A client certificate for kubernetes-admin (system:masters), signed by the lab's CA."""
    import base64
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    with open(os.path.join(pki, "ca.key"), "rb") as handle:
        ca_key = serialization.load_pem_private_key(handle.read(), None)
    with open(os.path.join(pki, "ca.crt"), "rb") as handle:
        ca = x509.load_pem_x509_certificate(handle.read())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes-admin"),
                                     x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters")]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=2))
            .sign(ca_key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return (base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode(),
            base64.b64encode(key_pem).decode())

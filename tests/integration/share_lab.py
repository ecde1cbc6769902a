"""A second lab whose simulated NVIDIA driver publishes memory shares (issue 27 items 4 and 6).

Kubernetes at old_lab.NEW_VERSION (1.37.2, built by run-apiserver-lab.sh; 1.36.3 where only that
is built, as on a developer's machine before the first full run: DRAConsumableCapacity is beta
and on in both), driver mode always, with LAB_CONSUMABLE_SHARES (memory by default): every GPU
published with allowMultipleAllocations and a request policy on memory, as NVIDIA's plugin
(main at 95932046, taken as 0.5.0) publishes it with ConsumableShares on. The real API server
and scheduler allocate the shares. Ports: 600 above the test lab's (650 for a second version in
the same test module); each lab is stopped when its test module ends.
"""

import contextlib
import os
import uuid

from kubernetes import client, config

import old_lab
from waiting import wait_for_object

SHARES_VERSION_FALLBACK = "1.36.3"
# A class of our own (no extendedResourceName: pods that keep nvidia.com/gpu are not served by DRA).
CLASS = "lab-it-share-gpu"
CLASS_BODY = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                            "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}


def version():
    """old_lab.NEW_VERSION where its build is in the cache, else 1.36.3."""
    cache = os.environ.get("LAB_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "dra-gpu-lab"))
    built = os.path.isdir(os.path.join(cache, "kubernetes-v%s" % old_lab.NEW_VERSION, "bin"))
    return old_lab.NEW_VERSION if built else SHARES_VERSION_FALLBACK


@contextlib.contextmanager
def started(name, offset=600, k8s_version=None, shares="memory"):
    """Start the lab, yield its kubeconfig, stop it afterwards."""
    k8s_version = k8s_version or version()
    settings = {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + offset, "driver_mode": "always",
                "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-%s-%s" % (name, k8s_version))}
    before = os.environ.get("LAB_CONSUMABLE_SHARES")
    os.environ["LAB_CONSUMABLE_SHARES"] = shares
    try:
        kubeconfig = old_lab.start(k8s_version, **settings)
    finally:
        if before is None:
            os.environ.pop("LAB_CONSUMABLE_SHARES")
        else:
            os.environ["LAB_CONSUMABLE_SHARES"] = before
    try:
        yield kubeconfig
    finally:
        old_lab.stop(k8s_version, **settings)


def namespace(core, prefix):
    """A new namespace with its default service account (pods need it)."""
    name = prefix + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    return name


def clients(kubeconfig):
    api = config.new_client_from_config(kubeconfig)
    return api, client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)


def share_class(custom):
    """Create CLASS (if missing); return its name."""
    try:
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", CLASS_BODY)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
    return CLASS

"""The lab's settings, read once from the environment (LAB_*)."""

import os
import socket
import subprocess
from dataclasses import dataclass

from labctl import paths
from labctl.apiserver import build
from labctl.apiserver.sim import gpus

DRIVER_MODES = ("plugin", "always")
# The current Kubernetes release (December 2026): memory shares (DRAConsumableCapacity),
# partitionable devices and device taints are on by default, so `make lab-up` and `make demo`
# show what DRA is for. The test suite pins its main lab to 1.35.4, the oldest supported minor
# (Makefile, TEST_LAB), and starts a 1.37.2 lab beside it for the features 1.35 lacks.
DEFAULT_K8S_VERSION = "1.37.2"


class ConfigError(ValueError):
    pass


def _advertise_address():
    """A non-loopback address of this host.

    kube-apiserver publishes it as the `kubernetes` Service endpoint and refuses to start
    when it cannot find one; nothing in the lab connects to it.
    """
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            return line.split()[3].split("/")[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _port_base():
    value = os.environ.get("LAB_PORT_BASE", "26400")
    if not value.isdigit() or not 1024 <= int(value) <= 65000:
        raise ConfigError("LAB_PORT_BASE must be a number between 1024 and 65000 (got %r)" % value)
    return int(value)


@dataclass(frozen=True)
class LabConfig:
    k8s_version: str
    driver_mode: str
    topology_file: str
    state_dir: str
    etcd_port: int
    etcd_peer_port: int
    apiserver_port: int
    controller_manager_port: int
    scheduler_port: int
    # A cluster that does not serve DRA's API at all, for the tests of the refusals. Only
    # Kubernetes 1.34 can do it: from 1.35 the DynamicResourceAllocation gate is locked on.
    without_dra: bool = False
    # LAB_CONSUMABLE_SHARES (always mode): the simulated plugin publishes as NVIDIA's 0.5.0 does
    # with --feature-gates ConsumableShares=true --consumable-shares <this>; None: as 0.4.x.
    consumable_shares: str = None
    # LAB_FEATURE_GATES: Kubernetes feature gates set against the version's defaults on
    # kube-apiserver, kube-scheduler and kube-controller-manager ("DRAPartitionableDevices=false"),
    # so a test can show that what the collection probes follows a gate, not the version.
    feature_gates: str = None

    run_dir = paths.under_state("run")
    pki_dir = paths.under_state("pki")
    kubeconfig = paths.under_state("kubeconfig")

    @property
    def rbac_gate_port(self):
        # labctl.apiserver.rbac_gate, only while a test holds the API server's RBAC storage back.
        return self.etcd_peer_port + 1

    @property
    def server_url(self):
        return "https://127.0.0.1:%d" % self.apiserver_port


def _without_dra(version):
    if os.environ.get("LAB_WITHOUT_DRA", "") not in ("1", "true"):
        return False
    if not version.startswith("1.34."):
        raise ConfigError("LAB_WITHOUT_DRA needs LAB_K8S_VERSION=1.34.x: from 1.35 DRA cannot be turned off "
                          "(got %s)" % version)
    return True


def _consumable_shares(mode):
    """LAB_CONSUMABLE_SHARES, checked as NVIDIA's plugin checks --consumable-shares (the
    simulator's consumable_shares_error, with the gate on)."""
    value = os.environ.get("LAB_CONSUMABLE_SHARES", "")
    if value in ("", "disabled"):
        return None
    if mode != "always":
        raise ConfigError("LAB_CONSUMABLE_SHARES=%s needs LAB_DRIVER_MODE=always; in plugin mode the kubelet-plugin "
                          "pod's CONSUMABLE_SHARES and FEATURE_GATES (ConsumableShares=true) decide, as on a real "
                          "node" % value)
    if gpus.consumable_shares_error(value, {gpus.SHARES_GATE: True}):
        raise ConfigError("LAB_CONSUMABLE_SHARES must be memory, unlimited or a positive number of shares such as "
                          "4 (got %r); leave it unset for a driver without ConsumableShares" % value)
    return value


def _feature_gates():
    """LAB_FEATURE_GATES as kube-apiserver's --feature-gates takes it: Name=true|false, comma-separated."""
    value = os.environ.get("LAB_FEATURE_GATES", "").strip()
    if not value:
        return None
    for item in value.split(","):
        name, sep, setting = item.partition("=")
        if not sep or not name[:1].isupper() or not name.isalnum() or setting not in ("true", "false"):
            raise ConfigError("LAB_FEATURE_GATES must be Name=true or Name=false, comma-separated, such as "
                              "DRAConsumableCapacity=true,DRAPartitionableDevices=false (got %r at %r)" % (value, item))
    return value


def load():
    version = build.normalise_k8s_version(os.environ.get("LAB_K8S_VERSION") or DEFAULT_K8S_VERSION)
    mode = os.environ.get("LAB_DRIVER_MODE") or "plugin"
    if mode not in DRIVER_MODES:
        raise ConfigError("LAB_DRIVER_MODE must be one of %s (got %r)" % (", ".join(DRIVER_MODES), mode))
    topology = os.environ.get("LAB_TOPOLOGY") or os.path.join(
        paths.REPO_ROOT, "lab", "topologies", "default.yml")
    topology = os.path.abspath(topology)
    if not os.path.isfile(topology):
        raise ConfigError("LAB_TOPOLOGY names %s, which is not a file; point it at a topology YAML "
                          "such as lab/topologies/default.yml" % topology)
    base = _port_base()
    return LabConfig(
        k8s_version=version,
        driver_mode=mode,
        topology_file=topology,
        state_dir=os.path.abspath(paths.state_dir()),
        # Each lab takes five consecutive-ish ports from LAB_PORT_BASE, so the demo's lab
        # and the test suite's lab can run side by side.
        etcd_port=base + 79,
        etcd_peer_port=base + 80,
        apiserver_port=base + 43,
        controller_manager_port=base + 57,
        scheduler_port=base + 59,
        without_dra=_without_dra(version),
        consumable_shares=_consumable_shares(mode),
        feature_gates=_feature_gates(),
    )


advertise_address = _advertise_address

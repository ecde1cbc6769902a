"""`lab.py build|up|down|restart|status|fault|env|mirror|node-build|node-up|node-down|node-env`: the one command line
behind the Make targets, for both labs (labctl.apiserver, labctl.nodes)."""

import argparse
import os
import sys
import time

from labctl import gobuild, paths
from labctl.apiserver import build, cluster, config
from labctl.apiserver.sim import health
from labctl.apiserver.processes import ComponentDied
from labctl.nodes import lab as node_lab, machine as node_machine, mirror
from labctl.nodes import runtime as node_runtime


# The versions the node lab upgrades between.
DEFAULT_MIRROR_VERSIONS = ["1.34.4", "1.35.4"]


def _build_log():
    """The lab cache's build log, opened to append (the cache made first)."""
    os.makedirs(paths.cache_root(), exist_ok=True)
    return open(os.path.join(paths.cache_root(), "build.log"), "a")


def _mirror(args):
    started = time.monotonic()
    with _build_log() as log:
        minors = mirror.build_mirror(os.path.abspath(args.root), args.versions, log)
    print("lab: mirror of %s (minors %s) in %s, built in %.1fs" % (
        ", ".join(args.versions), ", ".join(minors), mirror.served_dir(os.path.abspath(args.root)),
        time.monotonic() - started), file=sys.stderr)
    return 0


def _node_build(args):
    """kubeadm, kubelet and kubectl of each version into the cache, without a mirror: the kubeadm
    of a minor the node lab does not run, for tests that need only the binary."""
    started = time.monotonic()
    with _build_log() as log:
        for version in args.versions:
            node_runtime.build_kubernetes_node(build.normalise_k8s_version(version), log)
    print("lab: node binaries of %s ready in %.1fs" % (", ".join(args.versions), time.monotonic() - started),
          file=sys.stderr)
    return 0


def _fault(cfg, args):
    # `fault node-a gpu-lost`: the one event without a device comes as the second word.
    event, device = (args.device, None) if args.event is None else (args.event, args.device)
    # Imported here: it needs the kubernetes client, which `lab.py build` does not.
    from labctl.apiserver import fault  # pylint: disable=import-outside-toplevel
    try:
        events = fault.inject(cfg, args.node, event, device, clear=args.clear)
    except health.FaultError as exc:
        print("lab: error: %s" % exc, file=sys.stderr)
        return 2
    print("lab: node %s: %d health event(s) injected" % (args.node, len(events)), file=sys.stderr)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="lab.py", description="The dra.gpu lab: a real Kubernetes "
                                     "control plane with simulated NVIDIA GPU nodes.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="compile etcd, helm and Kubernetes (LAB_K8S_VERSION) into the cache")
    sub.add_parser("up", help="start the lab (safe on a running lab)")
    sub.add_parser("down", help="stop the lab's processes and remove its run state")
    restart_parser = sub.add_parser("restart", help="restart one component of a running lab")
    restart_parser.add_argument("component")
    restart_parser.add_argument("--hold-rbac", type=float, default=0, metavar="SECONDS",
                                help="kube-apiserver only: keep its RBAC storage unreachable this long after "
                                     "the restart (the authorizer's warm-up window, held open for tests)")
    sub.add_parser("status", help="show each component; exit 1 if one is down, 3 if never started")
    fault_parser = sub.add_parser("fault", help="inject an NVML health event on a simulated GPU (NVIDIA's "
                                  "health taints follow when the plugin's NVMLDeviceHealthCheck gate is on)")
    fault_parser.add_argument("node")
    fault_parser.add_argument("device", nargs="?", help="gpu-2, or a MIG device's name (not for gpu-lost)")
    fault_parser.add_argument("event", nargs="?", help="xid=<number>, gpu-lost or unmonitored")
    fault_parser.add_argument("--clear", action="store_true",
                              help="forget the node's events, as a restart of NVIDIA's kubelet plugin does")
    mirror_parser = sub.add_parser("mirror", help="build the node lab's apt mirror of kubeadm, kubelet, kubectl")
    mirror_parser.add_argument("--versions", nargs="+", default=DEFAULT_MIRROR_VERSIONS)
    mirror_parser.add_argument("--root", default=os.path.join(os.path.dirname(paths.state_dir()), "mirror"))
    node_build_parser = sub.add_parser("node-build", help="compile kubeadm, kubelet and kubectl of these versions "
                                       "into the cache (no mirror)")
    node_build_parser.add_argument("versions", nargs="+")
    sub.add_parser("node-up", help="start the node lab: kubeadm nodes in systemd-nspawn machines")
    sub.add_parser("node-down", help="stop the node lab and remove everything it created")
    sub.add_parser("node-env", help="print shell export lines for the node lab")
    env_parser = sub.add_parser("env", help="print shell export lines for kubectl, helm and ansible")
    env_parser.add_argument("--venv-bin", default=os.path.join(os.path.dirname(sys.executable)))
    args = parser.parse_args(argv)
    try:
        if args.command in ("node-up", "node-down", "node-env"):
            node_cfg = node_lab.load_config()
            if args.command == "node-env":
                print("\n".join(node_lab.env_lines(node_cfg)))
            else:
                (node_lab.up if args.command == "node-up" else node_lab.down)(node_cfg)
            return 0
        cfg = config.load()
        if args.command == "build":
            for name, path in sorted(build.build_all(cfg.k8s_version).items()):
                print("%-24s %s" % (name, path))
            return 0
        if args.command == "up":
            cluster.up(cfg)
            return 0
        if args.command == "down":
            cluster.down(cfg)
            return 0
        if args.command == "restart":
            cluster.restart(cfg, args.component, hold_rbac=args.hold_rbac)
            return 0
        if args.command == "status":
            return cluster.status(cfg)
        if args.command == "mirror":
            return _mirror(args)
        if args.command == "node-build":
            return _node_build(args)
        if args.command == "fault":
            return _fault(cfg, args)
        if args.command == "env":
            print("\n".join(cluster.env_lines(cfg, args.venv_bin)))
            return 0
    except (config.ConfigError, gobuild.BuildError, mirror.MirrorError, node_lab.NodeLabError, node_machine.NodeError,
            ComponentDied, TimeoutError) as exc:
        print("lab: error: %s" % exc, file=sys.stderr)
        return 2
    return 0

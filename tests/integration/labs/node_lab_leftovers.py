"""Did stopping the node lab leave anything behind on this machine?

    node_lab_leftovers.py snapshot FILE   before `lab.py node-up`
    node_lab_leftovers.py compare FILE    after `lab.py node-down`; exit 1 naming what is new

It compares what the node lab could leave: processes, mounts, network devices, cgroups,
and the host's netfilter tables as the kernel lists them. Several node labs may run on one
machine (another checkout's tests, a user's lab), so processes, devices and cgroups are
those of this lab: NODE_LAB_STATE_DIR and NODE_LAB_NET, as the Makefile sets them.
A process is this lab's when its command line names the lab's state directory (nspawn, the
mirror server, gpg-agent) or it sits in one of the lab's cgroups (everything inside a node).
"""

import json
import os
import re
import subprocess
import sys

STATE_DIR = os.path.abspath(os.environ.get("NODE_LAB_STATE_DIR", ".lab/node"))
NET = os.environ.get("NODE_LAB_NET", "0")
# Names of a node lab's devices and cgroups, with its NET: dgl<N>, vb-dgl<N>-*, dra-gpu-lab-n<N>-*.
LAB_NAME = re.compile(r"^(?:vb-)?dgl(\d+)|dra-gpu-lab-n(\d+)-")


def _other_lab(text):
    """Named after another node lab (another NODE_LAB_NET)."""
    for match in LAB_NAME.finditer(text):
        if (match.group(1) or match.group(2)) != NET:
            return True
    return False


def _processes():
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as handle:
                comm = handle.read().strip()
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open("/proc/%s/cgroup" % pid) as handle:
                cgroups = handle.read()
        except OSError:
            continue
        if STATE_DIR + "/" in cmdline or "dra-gpu-lab-n%s-" % NET in cgroups:
            found.append(comm)
    return sorted(found)


def _mounts():
    with open("/proc/self/mounts") as handle:
        return sorted(" ".join(line.split()[:3]) for line in handle)


def _links():
    return sorted(name for name in os.listdir("/sys/class/net") if not _other_lab(name))


# Cgroups that the node lab, nspawn, systemd inside a node, containerd or the kubelet
# create. Other cgroups on this machine come and go with its other programs.
CGROUP_NAMES = ("dra-gpu-lab", "payload", "supervisor", "kubepods", "k8s.io", ".slice", ".scope")


def _cgroups():
    found = []
    for hierarchy in sorted(os.listdir("/sys/fs/cgroup")):
        top = os.path.join("/sys/fs/cgroup", hierarchy)
        for current, subdirs, _files in os.walk(top):
            found.extend(os.path.join(current, d) for d in subdirs if any(n in d for n in CGROUP_NAMES))
    return sorted(path for path in found if not any(_other_lab(part) for part in path.split("/")))


def _netfilter():
    tables = []
    for name in ("ip_tables_names", "ip6_tables_names"):
        path = os.path.join("/proc/net", name)
        if os.path.exists(path):
            with open(path) as handle:
                tables += ["%s:%s" % (name, t) for t in handle.read().split()]
    for tool in (["nft", "list", "tables"], ["iptables-save"]):
        try:
            tables += subprocess.run(tool, capture_output=True, text=True, check=False).stdout.splitlines()
        except FileNotFoundError:
            pass
    return sorted(t for t in tables if not t.startswith("#"))


def snapshot():
    return {"processes": _processes(), "mounts": _mounts(), "links": _links(), "cgroups": _cgroups(),
            "netfilter": _netfilter()}


def compare(before, after):
    """What is in ``after`` and was not in ``before``, per kind."""
    new = {}
    for kind, items in after.items():
        remaining = list(before.get(kind, []))
        extra = []
        for item in items:
            if item in remaining:
                remaining.remove(item)
            else:
                extra.append(item)
        if extra:
            new[kind] = extra
    return new


def main(argv):
    if len(argv) != 2 or argv[0] not in ("snapshot", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "snapshot":
        with open(argv[1], "w") as handle:
            json.dump(snapshot(), handle)
        return 0
    with open(argv[1]) as handle:
        new = compare(json.load(handle), snapshot())
    if new:
        print("node lab: left behind after node-down: %s" % json.dumps(new, indent=2), file=sys.stderr)
        return 1
    print("node lab: nothing left behind (processes, mounts, network devices, cgroups, netfilter tables)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

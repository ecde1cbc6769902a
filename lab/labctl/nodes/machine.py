"""One node of the node lab: a systemd-nspawn machine with systemd as its PID 1.

Containment, so that stopping a node leaves nothing behind on the machine:
- processes: the machine has its own PID namespace; killing its init ends every process
  in it (containerd, shims, pods) at once.
- mounts, network: its own mount and network namespaces (the veth end on the host side
  goes with them); iptables rules written inside live in that network namespace.
- cgroups: nspawn is started inside cgroups the lab creates (one per hierarchy, named
  after the node), so the kubelet's and nspawn's own cgroups are created below them and
  removing those directories, deepest first, removes everything.
The lab-recipe.md's notes on this VM (cgroup v1, no systemd on the host) explain the flags.
"""

import os
import signal
import subprocess
import time

CGROUP_ROOT = "/sys/fs/cgroup"


class NodeError(RuntimeError):
    pass


def _own_cgroup_paths():
    """{hierarchy directory under /sys/fs/cgroup: this process's path in it}."""
    found = {}
    with open("/proc/self/cgroup") as handle:
        entries = [line.rstrip("\n").split(":", 2) for line in handle]
    for _hid, controllers, path in entries:
        if controllers == "":
            name = "unified"
        elif controllers.startswith("name="):
            name = controllers[len("name="):]
        else:
            name = controllers.split(",")[0]
        directory = os.path.join(CGROUP_ROOT, name)
        if os.path.isdir(directory):
            found[directory] = path
    return found


def cgroup_dirs(cgroup_name):
    """The directories a node's cgroups live in, one per hierarchy (created or not)."""
    return [os.path.join(hierarchy, path.lstrip("/"), cgroup_name)
            for hierarchy, path in sorted(_own_cgroup_paths().items())]


def create_cgroups(cgroup_name):
    dirs = cgroup_dirs(cgroup_name)
    for directory in dirs:
        os.makedirs(directory, exist_ok=True)
        # A new cpuset cgroup starts with no CPUs and no memory nodes; no task can join it.
        for knob in ("cpuset.cpus", "cpuset.mems"):
            mine = os.path.join(directory, knob)
            if os.path.exists(mine) and not open(mine).read().strip():
                with open(os.path.join(os.path.dirname(directory), knob)) as parent:
                    value = parent.read().strip()
                with open(mine, "w") as handle:
                    handle.write(value)
    return dirs


def _cgroup_pids(directory):
    pids = set()
    for current, _subdirs, files in os.walk(directory):
        if "cgroup.procs" in files:
            try:
                with open(os.path.join(current, "cgroup.procs")) as handle:
                    pids.update(int(p) for p in handle.read().split())
            except OSError:
                pass
    return pids


def remove_cgroups(cgroup_name, timeout=30):
    """Kill what is left in the node's cgroups, then remove them deepest first."""
    deadline = time.monotonic() + timeout
    for directory in cgroup_dirs(cgroup_name):
        if not os.path.isdir(directory):
            continue
        while True:
            pids = _cgroup_pids(directory)
            if not pids:
                break
            if time.monotonic() > deadline:
                raise NodeError("processes %s are still in %s after %ds" % (sorted(pids), directory, timeout))
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for current, _subdirs, _files in sorted(os.walk(directory), key=lambda w: -w[0].count("/")):
            _rmdir_when_free(current, deadline)


def _rmdir_when_free(directory, deadline):
    # The kernel frees a cgroup a moment after its last task exits.
    while True:
        try:
            os.rmdir(directory)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise NodeError("cannot remove cgroup %s: %s" % (directory, exc)) from exc
            time.sleep(0.05)


def start(name, hostname, rootfs, bridge, binds, log_path, cgroup_name):
    """Boot the machine; returns the PID of systemd-nspawn."""
    dirs = create_cgroups(cgroup_name)

    def enter_cgroups():
        for directory in dirs:
            with open(os.path.join(directory, "cgroup.procs"), "w") as handle:
                handle.write(str(os.getpid()))

    cmd = ["systemd-nspawn", "--quiet", "-D", rootfs, "--boot", "--register=no", "--keep-unit",
           "--console=read-only", "-M", name, "--hostname=" + hostname, "--network-bridge=" + bridge,
           "--capability=all", "--system-call-filter=@keyring bpf", "--bind=/dev/kmsg",
           "--resolv-conf=off", "--timezone=off", "--link-journal=no"]
    cmd += ["--bind-ro=%s:%s" % (src, dest) for src, dest in binds]
    log = open(log_path, "ab")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=enter_cgroups)
    return proc.pid


def init_pid(nspawn_pid, timeout=60):
    """The machine's PID 1 (systemd) as the host sees it.

    nspawn's first child is a helper that forks the machine's init and exits; the init is
    the child in a PID namespace of its own.
    """
    try:
        own_pidns = os.readlink("/proc/%d/ns/pid" % nspawn_pid)
    except FileNotFoundError as exc:
        raise NodeError("systemd-nspawn (pid %d) has ended" % nspawn_pid) from exc
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (nspawn_pid, nspawn_pid)) as handle:
                children = handle.read().split()
        except FileNotFoundError as exc:
            raise NodeError("systemd-nspawn (pid %d) exited while booting" % nspawn_pid) from exc
        for child in children:
            try:
                if os.readlink("/proc/%s/ns/pid" % child) != own_pidns:
                    return int(child)
            except FileNotFoundError:
                continue
        time.sleep(0.05)
    raise NodeError("systemd-nspawn (pid %d) started no init within %ds" % (nspawn_pid, timeout))


def run(init, args, check=True, timeout=600, input_text=None):
    """A command inside the machine, in all its namespaces."""
    proc = subprocess.run(["nsenter", "-t", str(init), "-a"] + list(args), capture_output=True, text=True,
                          check=False, timeout=timeout, input=input_text)
    if check and proc.returncode != 0:
        raise NodeError("`%s` failed in the node (exit %d): %s" % (
            " ".join(args), proc.returncode, (proc.stderr or proc.stdout).strip()[-3000:]))
    return proc


def wait_booted(init, timeout=180):
    """systemd inside reports running (or degraded: a unit failed, which the caller reports)."""
    deadline = time.monotonic() + timeout
    state, problem = "", ""
    while time.monotonic() < deadline:
        # `is-system-running --wait` blocks until boot finished; it fails at once while
        # systemd inside does not accept connections yet (seconds, longer on a loaded machine).
        try:
            proc = run(init, ["systemctl", "is-system-running", "--wait"], check=False,
                       timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            break
        state, problem = proc.stdout.strip(), proc.stderr.strip()
        if state in ("running", "degraded"):
            return state
        time.sleep(0.2)
    raise NodeError("the node's systemd did not finish booting within %ds (state %r%s)"
                    % (timeout, state, "; " + problem[-300:] if problem else ""))


def stop(nspawn_pid, timeout=20):
    """Kill the machine's init: the kernel then ends every process of its PID namespace."""
    try:
        init = init_pid(nspawn_pid, timeout=1)
        os.kill(init, signal.SIGKILL)
    except (NodeError, ProcessLookupError):
        pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(nspawn_pid):
            return
        # nspawn is our child only in the process that started it; reap if it is ours.
        try:
            os.waitpid(nspawn_pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    os.kill(nspawn_pid, signal.SIGKILL)


def alive(pid):
    """Running, not a zombie waiting for its parent."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False

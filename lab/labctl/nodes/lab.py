"""The node lab: real kubeadm nodes (systemd-nspawn machines) with containerd, runc and CNI.

`lab.py node-up` builds what is missing (cached), boots the nodes on a bridge of their own,
installs kubeadm, kubelet, kubectl and cri-tools from the lab's signed apt mirror, imports
the images packed from the lab's own builds, runs `kubeadm init` on cp1, `kubeadm join
--control-plane` on cp2, cp3 (stacked etcd: one member each) and `kubeadm join` on each worker.
`lab.py node-down` removes every process, cgroup, network device and file it created, and
nothing else. Settings (environment):

    NODE_LAB_STATE_DIR   run state, node root file systems, mirror   (default .lab/node)
    NODE_LAB_NET         0-250: bridge dgl<N>, nodes on 10.231.<N>.0/24 (default 0)
    NODE_LAB_CONTROL_PLANES  control planes cp1, cp2, cp3 with stacked etcd (default 1)
    NODE_LAB_WORKERS     workers joined to the control plane cp1: w1, w2, ... (default 1)
    NODE_LAB_VERSION     the version `kubeadm init` installs          (default 1.34.4)
    NODE_LAB_MIRROR_VERSIONS  versions the mirror and the images carry (default 1.34.4 1.35.4)
    NODE_LAB_MIRROR_ROOT where the mirror is built and served from (default STATE_DIR/mirror)
"""

import json
import os
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from labctl import gobuild, paths
from labctl.apiserver import build
from labctl.nodes import files as node_files, images, machine as node_machine, mirror, runtime as node_runtime

DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
# What a kubeadm host needs besides the lab's own builds; python3 is for Ansible.
ROOTFS_PACKAGES = ("systemd", "systemd-sysv", "dbus", "iproute2", "openssh-server", "python3", "iptables",
                   "conntrack", "socat", "ethtool", "ebtables", "kmod", "ca-certificates", "procps", "apt-utils",
                   "python3-apt")
# Host tools the node lab needs; lab/host-packages.sh installs them from Debian.
HOST_TOOLS = ("systemd-nspawn", "debootstrap", "ssh", "nsenter", "dpkg-scanpackages", "gpg")
MIRROR_PORT = 8080
CONTROL_PLANE = "cp1"
# Each node's pods get a /26 of the lab's /24 (node_pod_range), and kubeadm's controller manager
# hands out /26 node CIDRs too: four nodes at most.
MAX_NODES = 4


class NodeLabError(RuntimeError):
    pass


@dataclass(frozen=True)
class NodeLabConfig:
    state_dir: str
    net: int
    version: str
    mirror_versions: tuple
    workers: int = 1
    control_planes: int = 1

    @property
    def bridge(self):
        return "dgl%d" % self.net

    @property
    def gateway(self):
        return "10.231.%d.1" % self.net

    def address(self, index):
        return "10.231.%d.%d" % (self.net, 10 + index)

    @property
    def control_plane_nodes(self):
        """cp1 runs `kubeadm init`; cp2 and cp3 join as control planes (their own etcd members)."""
        return ["cp%d" % i for i in range(1, self.control_planes + 1)]

    @property
    def nodes(self):
        return self.control_plane_nodes + ["w%d" % i for i in range(1, self.workers + 1)]

    @property
    def pod_subnet(self):
        return "10.232.%d.0/24" % self.net

    def node_pod_range(self, index):
        """Each node's pods get a /26 of the cluster's /24 (host-local IPAM, no overlay)."""
        return "10.232.%d.%d/26" % (self.net, 64 * index)

    def machine(self, node):
        # The host side of the veth is "vb-" + this, cut at 15 characters.
        return "dgl%d-%s" % (self.net, node)

    def cgroup(self, node):
        return "dra-gpu-lab-n%d-%s" % (self.net, node)

    @property
    def mirror_root(self):
        # The tests point it at the mirror they build anyway (tests/integration/run-node-lab.sh).
        return os.environ.get("NODE_LAB_MIRROR_ROOT") or os.path.join(self.state_dir, "mirror")

    @property
    def mirror_url(self):
        return "http://%s:%d" % (self.gateway, MIRROR_PORT)

    ssh_key = paths.under_state("ssh", "id_ed25519")
    kubeconfig = paths.under_state("kubeconfig")
    inventory = paths.under_state("inventory.yml")
    record = paths.under_state("node-lab.json")

    def rootfs(self, node):
        return os.path.join(self.state_dir, "nodes", node, "rootfs")


def load_config():
    net = os.environ.get("NODE_LAB_NET", "0")
    if not net.isdigit() or int(net) > 250:
        raise NodeLabError("NODE_LAB_NET must be a number from 0 to 250 (got %r)" % net)
    version = build.normalise_k8s_version(os.environ.get("NODE_LAB_VERSION", "1.34.4"))
    versions = tuple(build.normalise_k8s_version(v) for v in
                     os.environ.get("NODE_LAB_MIRROR_VERSIONS", "1.34.4 1.35.4").split())
    if version not in versions:
        raise NodeLabError("NODE_LAB_VERSION %s is not among NODE_LAB_MIRROR_VERSIONS %s" % (version, versions))
    workers = os.environ.get("NODE_LAB_WORKERS", "1")
    if workers not in ("0", "1", "2", "3"):
        raise NodeLabError("NODE_LAB_WORKERS must be 0 to 3 (got %r)" % workers)
    control_planes = os.environ.get("NODE_LAB_CONTROL_PLANES", "1")
    if control_planes not in ("1", "2", "3"):
        raise NodeLabError("NODE_LAB_CONTROL_PLANES must be 1 to 3 (got %r)" % control_planes)
    if int(workers) + int(control_planes) > MAX_NODES:
        raise NodeLabError("NODE_LAB_CONTROL_PLANES (%s) and NODE_LAB_WORKERS (%s) make more than %d nodes, more "
                           "than the lab's pod network has ranges for (a /26 each of 10.232.<net>.0/24); lower "
                           "one of them" % (control_planes, workers, MAX_NODES))
    state = os.environ.get("NODE_LAB_STATE_DIR", os.path.join(paths.REPO_ROOT, ".lab", "node"))
    return NodeLabConfig(os.path.abspath(state), int(net), version, versions, int(workers), int(control_planes))


def _say(message):
    print("node-lab: " + message, file=sys.stderr, flush=True)


def _check(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        raise NodeLabError("`%s` failed (exit %d): %s" % (" ".join(cmd), proc.returncode,
                                                          (proc.stderr or proc.stdout).strip()[-2000:]))
    return proc.stdout


def check_host():
    """Refuse early, naming the Debian packages to install, rather than fail half-way."""
    if os.geteuid() != 0:
        raise NodeLabError("the node lab boots machines and creates cgroups and bridges: run it as root")
    missing = [tool for tool in HOST_TOOLS if shutil.which(tool) is None]
    if missing:
        raise NodeLabError("missing host tools (%s); install them with lab/host-packages.sh"
                           % ", ".join(missing))


# --- builds (cached) ---------------------------------------------------------------------

# The lab's own programs (lab/go) and the images that carry them.
LAB_COMMANDS = ("pause", "lab-gpu-plugin", "gpu-probe")
PLUGIN_IMAGE = "dra-gpu.lab/lab-gpu-plugin:v1"
PROBE_IMAGE = "dra-gpu.lab/gpu-probe:v1"
PLUGIN_MANIFEST = os.path.join(paths.REPO_ROOT, "lab", "manifests", "lab-gpu-plugin.yaml")


def _build_lab_commands(log):
    """{command: path}; Go's cache makes this seconds when nothing changed."""
    bindir = os.path.join(paths.cache_root(), "node-images", "bin")
    os.makedirs(bindir, exist_ok=True)
    source = os.path.join(paths.REPO_ROOT, "lab", "go")
    gobuild.go_build(source, ["./cmd/" + c for c in LAB_COMMANDS], bindir + "/", log)
    return {c: os.path.join(bindir, c) for c in LAB_COMMANDS}


def kubeadm_images(version):
    """{component: image reference} as kubeadm of ``version`` names them."""
    kubeadm = os.path.join(paths.k8s_build_dir(version), "node-bin", "kubeadm")
    out = _check([kubeadm, "config", "images", "list", "--kubernetes-version", "v" + version])
    refs = {}
    for ref in out.split():
        component = ref.rsplit("/", 1)[1].split(":")[0]
        refs[component] = ref
    return refs


def build_images(versions, log):
    """Image archives for the control plane of each version; returns their directory."""
    outdir = os.path.join(paths.cache_root(), "node-images")
    os.makedirs(outdir, exist_ok=True)
    lab = _build_lab_commands(log)
    pause = lab["pause"]
    images.write_archive(os.path.join(outdir, "lab-gpu-plugin.tar"), [PLUGIN_IMAGE],
                         {"/usr/local/bin/lab-gpu-plugin": lab["lab-gpu-plugin"]},
                         entrypoint=["/usr/local/bin/lab-gpu-plugin"])
    images.write_archive(os.path.join(outdir, "gpu-probe.tar"), [PROBE_IMAGE],
                         {"/usr/local/bin/gpu-probe": lab["gpu-probe"]}, entrypoint=["/usr/local/bin/gpu-probe"])
    etcd = os.path.join(build.build_etcd(log), "etcd")
    etcdctl = os.path.join(node_runtime.build_etcdctl(log), "etcdctl")
    for version in versions:
        bindir = build.build_kubernetes(version, log)
        for component, ref in kubeadm_images(version).items():
            if component in ("kube-proxy", "coredns"):
                continue  # not deployed (node_files.kubeadm_config says why)
            archive = os.path.join(outdir, ref.replace("/", "_").replace(":", "_") + ".tar")
            if os.path.exists(archive) and component != "pause":
                continue  # versioned binaries: an archive once written stays right
            if component == "pause":
                images.write_archive(archive, [ref], {"/pause": pause}, entrypoint=["/pause"])
            elif component == "etcd":
                images.write_archive(archive, [ref], {"/usr/local/bin/etcd": etcd,
                                                      "/usr/local/bin/etcdctl": etcdctl})
            else:
                images.write_archive(archive, [ref], {"/usr/local/bin/" + component: os.path.join(bindir, component)})
    return outdir


def base_rootfs(log):
    """A Debian root file system with systemd, built once by debootstrap and cached."""
    root = os.path.join(paths.cache_root(), "node-rootfs-" + DEBIAN_SUITE)
    stamp = os.path.join(root, "packages")
    wanted = " ".join(ROOTFS_PACKAGES)
    if os.path.exists(stamp) and open(stamp).read() == wanted:
        return os.path.join(root, "rootfs")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    tmp = os.path.join(root, "rootfs.tmp")
    cmd = ["debootstrap", "--variant=minbase", "--include=" + ",".join(ROOTFS_PACKAGES), DEBIAN_SUITE, tmp,
           DEBIAN_MIRROR]
    log.write("$ %s\n" % " ".join(cmd))
    log.flush()
    if subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode != 0:
        raise NodeLabError("debootstrap failed; see %s" % log.name)
    os.rename(tmp, os.path.join(root, "rootfs"))
    with open(stamp, "w") as handle:
        handle.write(wanted)
    return os.path.join(root, "rootfs")


def build_everything(cfg, log):
    runtime = node_runtime.build_all(log)
    mirror.build_mirror(cfg.mirror_root, list(cfg.mirror_versions), log)
    return runtime, build_images(cfg.mirror_versions, log), base_rootfs(log)


# --- one node's root file system -----------------------------------------------------------

def _write(rootfs, path, text, mode=0o644):
    target = os.path.join(rootfs, path.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as handle:
        handle.write(text)
    os.chmod(target, mode)


def _install(rootfs, bindir, names, dest):
    os.makedirs(os.path.join(rootfs, dest.lstrip("/")), exist_ok=True)
    for name in names:
        target = os.path.join(rootfs, dest.lstrip("/"), name)
        shutil.copyfile(os.path.join(bindir, name), target)
        os.chmod(target, 0o755)


def _enable(rootfs, unit):
    wants = os.path.join(rootfs, "etc/systemd/system/multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    link = os.path.join(wants, unit)
    if not os.path.lexists(link):
        os.symlink("/etc/systemd/system/" + unit, link)


def prepare_rootfs(cfg, node, base, runtime, sandbox_image):
    rootfs = cfg.rootfs(node)
    shutil.rmtree(os.path.dirname(rootfs), ignore_errors=True)
    os.makedirs(os.path.dirname(rootfs))
    _check(["cp", "-a", "--reflink=auto", base, rootfs])
    _install(rootfs, runtime["containerd"], ("containerd", "ctr", "containerd-shim-runc-v2"), "/usr/local/bin")
    _install(rootfs, runtime["runc"], ("runc",), "/usr/local/sbin")
    _install(rootfs, runtime["etcdutl"], ("etcdutl",), "/usr/local/bin")
    _install(rootfs, runtime["cni-plugins"], [p.rsplit("/", 1)[1] for p in node_runtime.CNI_PLUGINS], "/opt/cni/bin")
    _write(rootfs, "/etc/containerd/config.toml", node_files.containerd_config(sandbox_image))
    _write(rootfs, "/etc/cni/net.d/10-dra-gpu-lab.conflist",
           node_files.cni_config(cfg.node_pod_range(cfg.nodes.index(node))))
    _write(rootfs, "/etc/crictl.yaml", node_files.CRICTL_CONFIG)
    _write(rootfs, "/usr/local/sbin/dra-gpu-lab-node-prep", node_files.PREP_SCRIPT, 0o755)
    for tunable, value in node_files.KUBELET_KERNEL_TUNABLES.items():
        _write(rootfs, "/etc/dra-gpu-lab/sysctl/" + tunable.replace("/", "."), value + "\n")
    for unit, text in (("dra-gpu-lab-node-prep.service", node_files.PREP_UNIT),
                       ("containerd.service", node_files.CONTAINERD_UNIT)):
        _write(rootfs, "/etc/systemd/system/" + unit, text)
        _enable(rootfs, unit)
    _write(rootfs, "/etc/systemd/system/kubelet.service.d/05-dra-gpu-lab.conf", node_files.KUBELET_DROP_IN)
    # Air-gapped: the node reaches only the lab's mirror, never Debian's.
    for stale in ("etc/apt/sources.list", "etc/machine-id"):
        if os.path.exists(os.path.join(rootfs, stale)):
            os.remove(os.path.join(rootfs, stale))
    _write(rootfs, "/etc/hosts", "127.0.0.1 localhost\n" + "".join(
        "%s %s\n" % (cfg.address(i), n) for i, n in enumerate(cfg.nodes)))
    _write(rootfs, "/etc/resolv.conf", "# the node lab has no DNS server\n")
    for key in os.listdir(os.path.join(rootfs, "etc/ssh")):
        if key.startswith("ssh_host_"):
            os.remove(os.path.join(rootfs, "etc/ssh", key))
    _check(["ssh-keygen", "-A", "-f", rootfs])
    with open(cfg.ssh_key + ".pub") as handle:
        _write(rootfs, "/root/.ssh/authorized_keys", handle.read(), 0o600)
    os.chmod(os.path.join(rootfs, "root/.ssh"), 0o700)
    return rootfs


# --- up / down ---------------------------------------------------------------------------

def _record(cfg, data):
    os.makedirs(cfg.state_dir, exist_ok=True)
    tmp = cfg.record + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(tmp, cfg.record)


def _read_record(cfg):
    try:
        with open(cfg.record) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


def _bridge_up(cfg):
    if not os.path.exists("/sys/class/net/" + cfg.bridge):
        _check(["ip", "link", "add", "name", cfg.bridge, "type", "bridge"])
        _check(["ip", "addr", "add", cfg.gateway + "/24", "dev", cfg.bridge])
    _check(["ip", "link", "set", cfg.bridge, "up"])


def _serve_mirror(cfg, record):
    log = open(os.path.join(cfg.state_dir, "mirror-server.log"), "ab")
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", cfg.gateway, str(MIRROR_PORT),
                               "--directory", mirror.served_dir(cfg.mirror_root)],
                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    record["mirror_server_pid"] = server.pid
    _record(cfg, record)


def _node_network(cfg, init, index):
    node_machine.run(init, ["ip", "addr", "add", cfg.address(index) + "/24", "dev", "host0"])
    node_machine.run(init, ["ip", "link", "set", "host0", "up"])
    node_machine.run(init, ["ip", "route", "add", "default", "via", cfg.gateway])


def _apt_install(cfg, init, version):
    """What a provisioning run does on a new host: the repository of the minor, pinned packages."""
    minor = mirror.minor_of(version)
    repo = "%s/core:/stable:/v%s/deb/" % (cfg.mirror_url, minor)
    key = "/etc/apt/keyrings/kubernetes-apt-keyring.asc"
    with open(os.path.join(mirror.repo_dir(cfg.mirror_root, minor), "Release.key")) as handle:
        node_machine.run(init, ["sh", "-c", "mkdir -p /etc/apt/keyrings && cat > " + key], input_text=handle.read())
    node_machine.run(init, ["sh", "-c", "echo 'deb [signed-by=%s] %s /' > /etc/apt/sources.list.d/kubernetes.list"
                            % (key, repo)])
    node_machine.run(init, ["apt-get", "update", "-q"])
    pinned = ["%s=%s-%s" % (p, version, mirror.DEB_REVISION) for p in ("kubeadm", "kubelet", "kubectl")]
    node_machine.run(init, ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
                            "--no-install-recommends"] + pinned)
    node_machine.run(init, ["apt-mark", "hold", "kubeadm", "kubelet", "kubectl"])
    node_machine.run(init, ["systemctl", "enable", "kubelet"])


def _import_images(init):
    node_machine.run(init, ["sh", "-c", "for image in /opt/dra-gpu-lab/images/*.tar; do "
                            "ctr -n k8s.io images import \"$image\" >/dev/null || exit 1; done"])


def _write_inventory(cfg):
    lines = ["# Written by `lab.py node-up`: the node lab's machines, reached over SSH on the lab bridge.",
             "all:", "  vars:", "    ansible_user: root", "    ansible_ssh_private_key_file: " + cfg.ssh_key,
             "    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
             "    ansible_python_interpreter: /usr/bin/python3", "  children:", "    kube_control_plane:",
             "      hosts:"]
    for index, node in enumerate(cfg.control_plane_nodes):
        lines += ["        %s:" % node, "          ansible_host: " + cfg.address(index)]
    lines += ["    kube_node:", "      hosts:"]
    for index, node in enumerate(cfg.nodes):
        lines += ["        %s:" % node] + (["          ansible_host: " + cfg.address(index)]
                                           if node not in cfg.control_plane_nodes else [])
    with open(cfg.inventory, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def deploy_gpu_plugin(cfg, kubectl):
    """The stand-in DRA driver on every node labelled as a GPU node, as an operator would put it."""
    t0 = time.monotonic()
    _check([kubectl, "--kubeconfig", cfg.kubeconfig, "label", "--overwrite", "nodes", "--all",
            "nvidia.com/gpu.present=true"])
    with open(PLUGIN_MANIFEST) as handle:
        manifest = handle.read().replace("@API_HOST@", cfg.address(0))
    _check([kubectl, "--kubeconfig", cfg.kubeconfig, "apply", "-f", "-"], input=manifest)
    for node in cfg.nodes:
        _wait_for_line([kubectl, "--kubeconfig", cfg.kubeconfig, "get", "resourceslices", "--watch", "-o", "name",
                        "--field-selector", "spec.driver=gpu.nvidia.com,spec.nodeName=" + node],
                       timeout=180, what="the stand-in driver's ResourceSlice of " + node)
    _say("stand-in GPU driver publishing in %.1fs" % (time.monotonic() - t0))


def _wait_for_line(cmd, timeout, what):
    """Run a watching command until it prints its first line (the object appeared)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _w, _x = select.select([proc.stdout], [], [], timeout)
        if not ready or not proc.stdout.readline():
            raise NodeLabError("gave up after %ds waiting for %s" % (timeout, what))
    finally:
        proc.kill()
        proc.wait()


def _boot(cfg, node, index, base, runtime, sandbox, image_dir, record):
    """Prepare, boot and provision one node up to installed packages and imported images."""
    t0 = time.monotonic()
    rootfs = prepare_rootfs(cfg, node, base, runtime, sandbox)
    log_path = os.path.join(cfg.state_dir, "nodes", node, "nspawn.log")
    pid = node_machine.start(cfg.machine(node), node, rootfs, cfg.bridge,
                             [(image_dir, "/opt/dra-gpu-lab/images")], log_path, cfg.cgroup(node))
    record["nodes"][node] = {"nspawn_pid": pid, "cgroup": cfg.cgroup(node), "address": cfg.address(index)}
    _record(cfg, record)
    init = node_machine.init_pid(pid)
    state = node_machine.wait_booted(init)
    _say("%s booted (%s) in %.1fs" % (node, state, time.monotonic() - t0))
    _node_network(cfg, init, index)
    _apt_install(cfg, init, cfg.version)
    _import_images(init)
    return init


def _join(cfg, cp_init, node, init, index, certificate_key=None):
    """`kubeadm join` with a fresh bootstrap token, as a site's provisioning would; a control
    plane also fetches the certificates cp1 uploaded (``certificate_key``) and adds its etcd member."""
    command = node_machine.run(cp_init, ["kubeadm", "token", "create", "--ttl", "30m",
                                         "--print-join-command"]).stdout.split()
    token = command[command.index("--token") + 1]
    ca_hash = command[command.index("--discovery-token-ca-cert-hash") + 1]
    control_plane = (cfg.address(index), certificate_key) if node in cfg.control_plane_nodes else None
    _write(cfg.rootfs(node), "/etc/dra-gpu-lab/kubeadm.yaml",
           node_files.kubeadm_join_config(node, cfg.address(0), token, ca_hash, control_plane))
    t0 = time.monotonic()
    node_machine.run(init, ["kubeadm", "join", "--config", "/etc/dra-gpu-lab/kubeadm.yaml"], timeout=600)
    _say("kubeadm join%s %s in %.1fs" % (" --control-plane" if control_plane else "", node,
                                         time.monotonic() - t0))


def up(cfg):
    check_host()
    record = _read_record(cfg)
    if record.get("nodes"):
        alive = [n for n, v in record["nodes"].items() if node_machine.alive(v["nspawn_pid"])]
        if alive:
            _say("already running (%s); `lab.py node-down` first" % ", ".join(alive))
            return
        down(cfg)
    started = time.monotonic()
    os.makedirs(cfg.state_dir, exist_ok=True)
    log_path = os.path.join(paths.cache_root(), "build.log")
    os.makedirs(paths.cache_root(), exist_ok=True)
    with open(log_path, "a") as log:
        _say("building (cached after the first time; log: %s)" % log_path)
        runtime, image_dir, base = build_everything(cfg, log)
    built = time.monotonic()
    _say("builds ready in %.0fs" % (built - started))
    if not os.path.exists(cfg.ssh_key):
        os.makedirs(os.path.dirname(cfg.ssh_key), exist_ok=True)
        _check(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "dra.gpu node lab", "-f", cfg.ssh_key])
    record = {"net": cfg.net, "bridge": cfg.bridge, "nodes": {}}
    _record(cfg, record)
    _bridge_up(cfg)
    _serve_mirror(cfg, record)
    sandbox = kubeadm_images(cfg.version)["pause"]
    inits = {node: _boot(cfg, node, index, base, runtime, sandbox, image_dir, record)
             for index, node in enumerate(cfg.nodes)}
    # More control planes: cp1 uploads the control-plane certificates (encrypted with this
    # key, kept two hours in the kubeadm-certs Secret) for the others' `kubeadm join --control-plane`.
    certificate_key = None
    if cfg.control_planes > 1:
        certificate_key = node_machine.run(inits[CONTROL_PLANE], ["kubeadm", "certs", "certificate-key"]).stdout.strip()
    _write(cfg.rootfs(CONTROL_PLANE), "/etc/dra-gpu-lab/kubeadm.yaml",
           node_files.kubeadm_config(CONTROL_PLANE, cfg.address(0), cfg.version, cfg.pod_subnet, certificate_key))
    t0 = time.monotonic()
    node_machine.run(inits[CONTROL_PLANE], ["kubeadm", "init", "--config", "/etc/dra-gpu-lab/kubeadm.yaml"]
                     + (["--upload-certs"] if certificate_key else []), timeout=600)
    _say("kubeadm init %s in %.1fs" % (cfg.version, time.monotonic() - t0))
    # One at a time, as kubeadm wants: each control plane adds its etcd member to a healthy cluster.
    for index, node in enumerate(cfg.nodes[1:], start=1):
        _join(cfg, inits[CONTROL_PLANE], node, inits[node], index, certificate_key)
    shutil.copyfile(os.path.join(cfg.rootfs(CONTROL_PLANE), "etc/kubernetes/admin.conf"), cfg.kubeconfig)
    os.chmod(cfg.kubeconfig, 0o600)
    kubectl = os.path.join(paths.k8s_build_dir(cfg.version), "bin", "kubectl")
    # The control planes carry workloads too, so a drain of any node has somewhere to go.
    _check([kubectl, "--kubeconfig", cfg.kubeconfig, "taint", "nodes"] + cfg.control_plane_nodes
           + ["node-role.kubernetes.io/control-plane:NoSchedule-"])
    _check([kubectl, "--kubeconfig", cfg.kubeconfig, "wait", "--for=condition=Ready", "nodes", "--all",
            "--timeout=180s"])
    deploy_gpu_plugin(cfg, kubectl)
    _write_inventory(cfg)
    _say("up in %.0fs (after builds: %.0fs): %s; kubeconfig %s, inventory %s" % (
        time.monotonic() - started, time.monotonic() - built, ", ".join(cfg.nodes), cfg.kubeconfig,
        cfg.inventory))


def env_lines(cfg):
    """Shell exports for a running node lab (tests and molecule read these)."""
    values = {"NODE_LAB_KUBECONFIG": cfg.kubeconfig, "NODE_LAB_INVENTORY": cfg.inventory,
              "NODE_LAB_SSH_KEY": cfg.ssh_key, "NODE_LAB_CP_ADDRESS": cfg.address(0),
              "NODE_LAB_MIRROR_URL": cfg.mirror_url, "NODE_LAB_STATE_DIR": cfg.state_dir,
              "NODE_LAB_NODES": ",".join(cfg.nodes), "NODE_LAB_CONTROL_PLANE_NODES": ",".join(cfg.control_plane_nodes)}
    values.update({"NODE_LAB_%s_ADDRESS" % node.upper(): cfg.address(i) for i, node in enumerate(cfg.nodes)})
    return ["export %s=%s" % item for item in sorted(values.items())]


def down(cfg):
    """Remove what the node lab created: machines, their cgroups, the bridge, the server, files."""
    record = _read_record(cfg)
    nodes = record.get("nodes", {})
    for node, info in nodes.items():
        node_machine.stop(info["nspawn_pid"])
    # By name as well, for a record lost half-way: only cgroups named after this lab's nodes.
    for node in set(nodes) | set(cfg.nodes):
        node_machine.remove_cgroups(cfg.cgroup(node))
    server = record.get("mirror_server_pid")
    if server and node_machine.alive(server):
        os.kill(server, 15)
    if os.path.exists("/sys/class/net/" + cfg.bridge):
        _check(["ip", "link", "delete", cfg.bridge])
    shutil.rmtree(os.path.join(cfg.state_dir, "nodes"), ignore_errors=True)
    for path in (cfg.record, cfg.kubeconfig, cfg.inventory):
        if os.path.exists(path):
            os.remove(path)
    _say("down: nodes, cgroups, bridge %s and mirror server removed" % cfg.bridge)

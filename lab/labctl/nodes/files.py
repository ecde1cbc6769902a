"""The files a node lab's node gets in its root file system before it boots.

They set the node up the way a kubeadm guide would (containerd with CDI, CNI bridge,
crictl), plus what this VM needs and a real host would not (see each comment): cgroup v1
controllers made writable, kernel tunables the kubelet insists on answered from files so
the machine's own values are never written, and a tolerant oom_score_adj.
"""

import textwrap

# The kubelet sets these (or, with protectKernelDefaults, refuses to start unless they hold).
# They are machine-wide, not per network namespace: writing them from a node would change
# the machine the lab runs on, so the node sees these values bound over /proc/sys instead.
KUBELET_KERNEL_TUNABLES = {
    "vm/overcommit_memory": "1",
    "vm/panic_on_oom": "0",
    "kernel/panic": "10",
    "kernel/panic_on_oops": "1",
    "kernel/keys/root_maxkeys": "1000000",
    "kernel/keys/root_maxbytes": "25000000",
}

PREP_SCRIPT = textwrap.dedent("""\
    #!/bin/sh
    # dra.gpu node lab: make this systemd-nspawn machine look like a kubeadm host.
    set -eu
    # nspawn mounts the cgroup v1 controllers read-only; the kubelet and runc write there.
    for controller in /sys/fs/cgroup/*/; do
      mount -o remount,bind,rw "$controller"
    done
    # Kernel tunables the kubelet checks: answered from files (labctl/nodes/files.py says why).
    for file in /etc/dra-gpu-lab/sysctl/*; do
      target=/proc/sys/$(basename "$file" | tr . /)
      mount --bind "$file" "$target"
    done
    # Per network namespace, so these stay inside the node.
    echo 1 > /proc/sys/net/ipv4/ip_forward
    echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
    # Volumes with mount propagation need a shared root, as on a host booted by systemd.
    mount --make-rshared /
    """)

PREP_UNIT = textwrap.dedent("""\
    [Unit]
    Description=dra.gpu node lab: cgroups, kernel tunables, shared mounts
    DefaultDependencies=no
    After=local-fs.target
    Before=containerd.service kubelet.service

    [Service]
    Type=oneshot
    RemainAfterExit=yes
    ExecStart=/usr/local/sbin/dra-gpu-lab-node-prep

    [Install]
    WantedBy=multi-user.target
    """)

CONTAINERD_UNIT = textwrap.dedent("""\
    [Unit]
    Description=containerd container runtime (built by the dra.gpu node lab)
    After=network.target dra-gpu-lab-node-prep.service
    Requires=dra-gpu-lab-node-prep.service

    [Service]
    ExecStart=/usr/local/bin/containerd
    Type=simple
    Restart=always
    RestartSec=2
    Delegate=yes
    KillMode=process
    LimitNOFILE=infinity
    TasksMax=infinity

    [Install]
    WantedBy=multi-user.target
    """)

KUBELET_DROP_IN = textwrap.dedent("""\
    [Unit]
    After=containerd.service dra-gpu-lab-node-prep.service
    """)


def containerd_config(sandbox_image):
    # cgroupfs, not systemd: the kubelet uses cgroupfs on this VM's cgroup v1 (lab-recipe.md).
    # restrict_oom_score_adj: the VM denies CAP_SYS_RESOURCE, so negative scores must be
    # clamped to containerd's own instead of failing every container.
    return textwrap.dedent("""\
        version = 3

        [plugins."io.containerd.cri.v1.runtime"]
          enable_cdi = true
          cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
          restrict_oom_score_adj = true

          [plugins."io.containerd.cri.v1.runtime".containerd]
            default_runtime_name = "runc"

            [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
              runtime_type = "io.containerd.runc.v2"

              [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
                BinaryName = "/usr/local/sbin/runc"
                SystemdCgroup = false

          [plugins."io.containerd.cri.v1.runtime".cni]
            bin_dirs = ["/opt/cni/bin"]
            conf_dir = "/etc/cni/net.d"

        [plugins."io.containerd.cri.v1.images"]
          snapshotter = "overlayfs"

          [plugins."io.containerd.cri.v1.images".pinned_images]
            sandbox = "%s"
        """) % sandbox_image


def cni_config(pod_subnet):
    """Bridge networking for the pods of one node. No overlay and no routes between nodes: pods
    reach other nodes (the API server) through the node's address (ipMasq), which is all the
    lab's pods need."""
    return textwrap.dedent("""\
        {
          "cniVersion": "1.0.0",
          "name": "dra-gpu-lab",
          "plugins": [
            {
              "type": "bridge",
              "bridge": "cni0",
              "isGateway": true,
              "ipMasq": true,
              "ipam": {"type": "host-local", "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}]}
            },
            {"type": "portmap", "capabilities": {"portMappings": true}}
          ]
        }
        """) % pod_subnet


CRICTL_CONFIG = "runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\n"


def _node_registration(node_name):
    """The nodeRegistration block of init and join alike.

    imagePullPolicy Never: every image was imported from the lab's own builds. Only the
    cgroup v1 verification is skipped (see lab-recipe.md)."""
    return "\n".join([
        "nodeRegistration:",
        "  name: %s" % node_name,
        "  criSocket: unix:///run/containerd/containerd.sock",
        "  imagePullPolicy: Never",
        "  ignorePreflightErrors:",
        "    - SystemVerification",
    ])


def kubeadm_config(node_name, address, version, pod_subnet, certificate_key=None):
    # kube-proxy and CoreDNS are skipped: kube-proxy's image needs iptables binaries and
    # CoreDNS is not a Go module build here; nothing the lab tests uses Services or DNS.
    # controlPlaneEndpoint is cp1's address: the lab has no load balancer, and the other
    # control planes join through it (certificate_key: the one `--upload-certs` encrypts with).
    return textwrap.dedent("""\
        apiVersion: kubeadm.k8s.io/v1beta4
        kind: InitConfiguration
        localAPIEndpoint:
          advertiseAddress: {address}
          bindPort: 6443
        {key}{registration}
        skipPhases:
          - addon/kube-proxy
          - addon/coredns
        ---
        apiVersion: kubeadm.k8s.io/v1beta4
        kind: ClusterConfiguration
        kubernetesVersion: v{version}
        controlPlaneEndpoint: {address}:6443
        networking:
          podSubnet: {pod_subnet}
        controllerManager:
          extraArgs:
            - name: node-cidr-mask-size
              value: "26"
        # Marked disabled too, so `kubeadm upgrade apply` skips them instead of installing them.
        dns:
          disabled: true
        proxy:
          disabled: true
        apiServer:
          certSANs: [{address}, 127.0.0.1]
        ---
        apiVersion: kubelet.config.k8s.io/v1beta1
        kind: KubeletConfiguration
        cgroupDriver: cgroupfs
        failCgroupV1: false
        failSwapOn: false
        # The nodes share this machine's disk with its builds and other labs: the default
        # thresholds (imagefs 15 %, nodefs 10 % free) would evict the lab's pods for space the
        # lab does not use. All four signals are named: an unnamed one would be off.
        evictionHard:
          memory.available: 100Mi
          nodefs.available: 1%
          imagefs.available: 1%
          nodefs.inodesFree: 1%
        # For the same reason image garbage collection is off (100 %): on a disk over 85 % full
        # the kubelet deletes images no container uses, such as the next version's control-plane
        # images imported at start, and `kubeadm upgrade node` then fails to pull them (there is
        # no registry here).
        imageGCHighThresholdPercent: 100
        """).format(address=address, registration=_node_registration(node_name), version=version,
                    pod_subnet=pod_subnet, key="certificateKey: %s\n" % certificate_key if certificate_key else "")


def kubeadm_join_config(node_name, control_plane_address, token, ca_cert_hash, control_plane=None):
    """``control_plane``: (this node's address, certificate key) to join as a control plane."""
    joining = ""
    if control_plane:
        joining = "\n".join(["controlPlane:", "  localAPIEndpoint:", "    advertiseAddress: %s" % control_plane[0],
                             "    bindPort: 6443", "  certificateKey: %s" % control_plane[1], ""])
    return textwrap.dedent("""\
        apiVersion: kubeadm.k8s.io/v1beta4
        kind: JoinConfiguration
        discovery:
          bootstrapToken:
            apiServerEndpoint: {address}:6443
            token: {token}
            caCertHashes: [{ca_hash}]
        """).format(address=control_plane_address, token=token, ca_hash=ca_cert_hash) + joining + \
        _node_registration(node_name) + "\n"

"""The node lab: real kubeadm nodes in systemd-nspawn machines, with containerd, runc and CNI,
where containers really run (root only).

lab: node-up, node-down, node-env (NODE_LAB_*); machine: one systemd-nspawn machine; files: what
a node's root file system gets; runtime: compile kubeadm, kubelet, containerd, runc, CNI,
crictl, etcdctl; images: image archives packed from the lab's builds; mirror: the signed apt
repository of kubeadm, kubelet and kubectl.
"""

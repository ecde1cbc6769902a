"""The API-server lab: a real etcd, kube-apiserver, kube-scheduler and kube-controller-manager as
local processes (no root), with GPU nodes and NVIDIA's drivers simulated by ``sim``.

build: compile Kubernetes, etcd and helm; config: LAB_*; pki: certificates and tokens;
processes: start, find and stop the lab's own processes; cluster: up, down, restart, status,
env; rbac_gate: hold the API server's RBAC storage back (restart tests); sim: the simulator.
"""

"""The dra.gpu lab (test tooling only), in two parts behind one command line (cli, lab/lab.py).

apiserver: a real Kubernetes control plane with simulated GPU nodes, local processes, no root.
nodes: the node lab, real kubeadm nodes in systemd-nspawn machines, root only.
Shared: paths (cache and state directories) and gobuild (the one way both compile Go).
"""

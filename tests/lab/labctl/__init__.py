"""The dra.gpu lab: a real Kubernetes control plane with simulated GPU nodes (test tooling only)."""

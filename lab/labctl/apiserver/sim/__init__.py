"""SIMULATED parts of the lab: GPU nodes and NVIDIA's DRA kubelet plugin (no hardware here)."""

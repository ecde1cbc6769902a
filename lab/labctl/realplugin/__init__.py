"""NVIDIA's real gpu-kubelet-plugin beside the lab, as the reference the simulator is compared with (make real-plugin)."""

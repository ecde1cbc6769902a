"""SIMULATED probe answers for smoke-test pods on the lab's GPU nodes.

No container runs in the lab. When a pod on a simulated node completes, the simulated
kubelet writes into its termination message what the probe would have printed inside a
container given the devices the real scheduler allocated: `nvidia-smi -L` lines with the
allocated GPUs' UUIDs, or the dra-example-driver's GPU_DEVICE_* variables. The allocation
is read from the pod's real ResourceClaims; only the printing is simulated.

Tests exercise failure paths with the pod annotation `lab.dra.gpu/simulate-probe`:
`wrong-uuid`, `extra-gpu`, `fail`, `image-pull-error`.
"""

import uuid

ANNOTATION = "lab.dra.gpu/simulate-probe"


def behaviour(pod):
    return ((pod["metadata"].get("annotations") or {}).get(ANNOTATION) or "").strip()


def probe_kind(pod):
    text = " ".join(" ".join(c.get("command") or []) + " " + " ".join(c.get("args") or [])
                    for c in pod["spec"].get("containers") or [])
    if "nvidia-smi" in text:
        return "nvidia"
    if "GPU_DEVICE" in text:
        return "example"
    return None


def claim_names(pod):
    """The claims the kubelet prepares for a pod: its own, the ones made from its templates, and
    the one the scheduler made for an extended resource a DeviceClass serves (status field
    extendedResourceClaimStatus, Kubernetes 1.34+ with DRAExtendedResource)."""
    status = pod.get("status") or {}
    names = [s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or []]
    names.append((status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName"))
    names += [r.get("resourceClaimName") for r in pod["spec"].get("resourceClaims") or []]
    return [n for n in names if n]


def nvidia_smi_lines(devices, node_devices, extra=False, wrong=False):
    """What `nvidia-smi -L` prints in a container that was given ``devices``."""
    lines, index = [], 0
    shown = list(devices)
    if extra:
        spare = [d for d in node_devices if d not in devices and d["attributes"]["type"]["string"] == "gpu"]
        shown.append(spare[0] if spare else None)
    for device in shown:
        if device is None:
            lines.append("GPU %d: NVIDIA Phantom (UUID: GPU-%s)" % (index, uuid.uuid4()))
            index += 1
            continue
        attrs = device["attributes"]
        product = attrs["productName"]["string"]
        ident = attrs["uuid"]["string"]
        if wrong and index == 0:
            ident = "GPU-%s" % uuid.uuid4()
        if attrs["type"]["string"] == "mig":
            lines.append("GPU %d: %s (UUID: %s)" % (index, product, attrs["parentUUID"]["string"]))
            lines.append("  MIG %s Device 0: (UUID: %s)" % (attrs["profile"]["string"], ident))
        else:
            lines.append("GPU %d: %s (UUID: %s)" % (index, product, ident))
        index += 1
    return "\n".join(lines) + "\n"


def example_lines(devices):
    return "".join("GPU_DEVICE_%d=%s\n" % (i, d["name"]) for i, d in enumerate(devices))


# What NVIDIA's plugin puts into a container of a claim prepared with MPS (its CDI edits):
# the pipe directory of the claim's MPS control daemon. The limits live in that daemon.
MPS_PIPE_ENV = "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps"


def mps_lines(pod, sharing):
    """The probe's `env | grep CUDA_MPS` part: present only when a device was prepared with MPS."""
    text = " ".join(" ".join(c.get("args") or []) + " ".join(c.get("command") or [])
                    for c in pod["spec"].get("containers") or [])
    if "CUDA_MPS" not in text:
        return ""
    if any((s or {}).get("strategy") == "MPS" for s in (sharing or {}).values()):
        return MPS_PIPE_ENV + "\n"
    return ""


def answer(pod, allocated, node_devices, sharing=None):
    """(exit_code, termination message) for a completed probe pod."""
    mode = behaviour(pod)
    if mode == "fail":
        return 1, "simulated probe failure: NVIDIA-SMI has failed because it couldn't communicate with the driver\n"
    kind = probe_kind(pod)
    if kind == "nvidia":
        return 0, nvidia_smi_lines(allocated, node_devices, extra=mode == "extra-gpu",
                                   wrong=mode == "wrong-uuid") + mps_lines(pod, sharing)
    if kind == "example":
        return 0, example_lines(allocated)
    return 0, ""

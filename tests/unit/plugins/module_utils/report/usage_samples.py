"""Usage dicts as gpu_usage.usage returns them, for the tests of the report's page, text and
wording: a busy and an idle claim (its pod's name is markup), a shared device, and no GPUs at all."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy


def pod(namespace, name, phase="Running", owner=("Deployment", "train"), terminating=False):
    return {"namespace": namespace, "name": name, "phase": phase, "terminating": terminating,
            "owner": {"kind": owner[0], "name": owner[1]} if owner else None}


def device(name, state="free", claim=None, pods=(), since=None, age=None, reason=None, model="NVIDIA A10",
           memory="22.5 GiB", kind="gpu"):
    return {"name": name, "driver": "gpu.nvidia.com", "pool": "p", "type": kind, "model": model, "memory": memory,
            "memory_bytes": None, "state": state, "claim": claim, "pods": list(pods), "since": since,
            "age_seconds": age, "idle_reason": reason}


EVIL_POD = pod("team-b", "x<script>alert(1)</script>", phase="Pending", owner=None)
IDLE_REASON = "its only pod team-b/x is Pending (ImagePullBackOff)"
IDLE_CLAIM = {"namespace": "team-b", "name": "job-x-claim", "shared": False, "state": "idle",
              "devices": ["gpu-node-2/gpu-1"], "pods": [dict(EVIL_POD, node="gpu-node-2")],
              "since": "2026-12-05T13:33:00Z", "age_seconds": 7620, "since_source": "pod scheduled",
              "idle_reason": IDLE_REASON}
BUSY_CLAIM = {"namespace": "team-a", "name": "train-abc12", "shared": True, "state": "in_use",
              "devices": ["gpu-node-1/gpu-0"], "pods": [dict(pod("team-a", "train-0"), node="gpu-node-1"),
                                                        dict(pod("team-a", "train-1"), node="gpu-node-1")],
              "since": "2026-12-05T12:28:00Z", "age_seconds": 11520, "since_source": "pod scheduled",
              "idle_reason": None}

USAGE = {
    "generated_at": "2026-12-05T15:40:00Z",
    "summary": {"devices": 5, "allocated": 2, "in_use": 1, "idle": 1, "free": 3, "claims": 2, "idle_claims": 1,
                "pods": 3, "line": "5 devices on 2 nodes: 1 in use, 1 idle (allocated, no running pod), 3 free"},
    "nodes": [
        {"name": "gpu-node-1", "ready": True, "totals": {"devices": 3, "in_use": 1, "idle": 0, "free": 2},
         "devices": [device("gpu-0", "in_use", {"namespace": "team-a", "name": "train-abc12", "shared": True},
                            BUSY_CLAIM["pods"], "2026-12-05T12:28:00Z", 11520),
                     device("gpu-1"), device("gpu-2", model=None, memory=None, kind="other")]},
        {"name": "gpu-node-2", "ready": False, "totals": {"devices": 2, "in_use": 0, "idle": 1, "free": 1},
         "devices": [device("gpu-0", model="NVIDIA L4"),
                     device("gpu-1", "idle", {"namespace": "team-b", "name": "job-x-claim", "shared": False},
                            [EVIL_POD], "2026-12-05T13:33:00Z", 7620, IDLE_REASON, model="NVIDIA L4")]},
        {"name": "gpu-node-3", "ready": True, "totals": {"devices": 0, "in_use": 0, "idle": 0, "free": 0},
         "devices": []},
    ],
    "claims": [BUSY_CLAIM, IDLE_CLAIM],
    "idle": [IDLE_CLAIM],
    "by_namespace": [
        {"namespace": "team-a", "claims": 1, "devices": 1, "pods": 2, "idle_claims": 0, "idle_devices": 0},
        {"namespace": "team-b", "claims": 1, "devices": 1, "pods": 1, "idle_claims": 1, "idle_devices": 1}],
    "by_node_model": [
        {"node": "gpu-node-1", "model": "NVIDIA A10", "devices": 2, "allocated": 1, "free": 1},
        {"node": "gpu-node-1", "model": "other", "devices": 1, "allocated": 0, "free": 1},
        {"node": "gpu-node-2", "model": "NVIDIA L4", "devices": 2, "allocated": 1, "free": 1}],
    "free_by_class": [
        {"class": "gpu.nvidia.com", "previewable": True, "reason": None, "total": 4, "free": 3,
         "by_node": {"gpu-node-2": 1, "gpu-node-1": 2}, "memory_free_bytes": (4596 + 2 * 23028) * 2 ** 20,
         "largest_claim_bytes": 23028 * 2 ** 20},
        {"class": "mig.nvidia.com", "previewable": True, "reason": None, "total": 0, "free": 0, "by_node": {}},
        {"class": "odd|class", "previewable": False, "reason": "cannot evaluate device.foo locally: unknown",
         "total": None, "free": None, "by_node": None}],
    "notes": ["node gpu-node-3 is labelled nvidia.com/gpu.present=true but publishes no gpu.nvidia.com devices"],
}

EMPTY = {"generated_at": "2026-12-05T15:40:00Z",
         "summary": {"devices": 0, "allocated": 0, "in_use": 0, "idle": 0, "free": 0, "claims": 0,
                     "idle_claims": 0, "pods": 0, "line": "0 devices on 0 nodes: 0 in use, 0 idle, 0 free"},
         "nodes": [], "claims": [], "idle": [], "by_namespace": [], "by_node_model": [], "free_by_class": [],
         "notes": []}


SHARED = dict(device("gpu-0", "in_use", {"namespace": "ml", "name": "a-gpu", "shared": False},
                     [pod("ml", "a"), pod("ml", "b")], "2026-12-05T12:28:00Z", 60, memory="23028Mi"),
              shareable=True, memory_consumed="18Gi", memory_free="4596Mi",
              shares=[{"namespace": "ml", "name": "a-gpu", "state": "in_use", "share_id": "1111-aaaa",
                       "consumed": {"memory": "8Gi"}},
                      {"namespace": "ml", "name": "b<i>-gpu", "state": "in_use", "share_id": "2222-bbbb",
                       "consumed": {"memory": "10Gi"}}])


def tainted_usage():
    """USAGE with node 1's second GPU tainted by NVIDIA's health check and by a maintenance rule."""
    usage = copy.deepcopy(USAGE)
    usage["summary"].update(tainted=1, free=2)
    usage["nodes"][0]["totals"].update(tainted=1, free=1)
    usage["nodes"][0]["devices"][1].update(state="tainted", taints=[
        {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule", "time_added": "2026-12-05T15:00:00Z",
         "rule": None},
        {"key": "dra.gpu/maintenance", "value": "", "effect": "NoExecute", "time_added": "2026-12-05T15:10:00Z",
         "rule": "dra-gpu-maintenance-gpu-node-1-gpu-1"}])
    return usage

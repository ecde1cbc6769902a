"""`lab.py fault NODE [DEVICE] EVENT` / `lab.py fault NODE --clear`: inject an NVML health event
into the simulated driver (sim/health.py), or forget a node's events as a restart of NVIDIA's
kubelet plugin would (its taints live only in the plugin's memory)."""

import json

from kubernetes import client

from labctl.apiserver.sim import agent, health


def inject(cfg, node, event_text=None, device=None, clear=False):
    """Append one event to the node's injected events (or clear them); returns the events now
    injected. Raises health.FaultError for a malformed event, before anything changes."""
    core = client.CoreV1Api(agent.load_client(cfg.kubeconfig))
    if clear:
        core.patch_node(node, {"metadata": {"annotations": {health.FAULTS_ANNOTATION: None}}})
        return []
    event = health.parse_event(event_text, device)
    events = health.read_events(core.read_node(node).metadata.annotations) + [event]
    core.patch_node(node, {"metadata": {"annotations": {health.FAULTS_ANNOTATION: json.dumps(events)}}})
    return events

"""What a prepared claim must give a container, checked on NVIDIA's NodePrepareResources answer
and the CDI spec it wrote (pure logic; prepare.py feeds it). The smoke test's container probe
reports the UUIDs of the GPUs it sees: the spec must hand it the allocated GPU's device node and
no other GPU's."""

import re

CDI_KIND = "k8s.gpu.nvidia.com/claim"
_GPU_NODE = re.compile(r"^/dev/nvidia(\d+)$")


def expected_cdi_id(claim_uid, device):
    """NVIDIA's CDI device name for one allocated device of a claim (the stand-in plugin uses the
    same <claim uid>-<device> form under its own kind)."""
    return "%s=%s-%s" % (CDI_KIND, claim_uid, device)


def _gpu_minors(edits):
    return {int(m.group(1)) for node in (edits or {}).get("deviceNodes") or []
            for m in [_GPU_NODE.match(node.get("path") or "")] if m}


def device_nodes(specs, cdi_id):
    """Paths of the device nodes a container of ``cdi_id`` gets (the device's and the spec's edits)."""
    name = cdi_id.split("=", 1)[1]
    for spec in specs:
        for device in spec.get("devices") or []:
            if spec.get("kind") == CDI_KIND and device.get("name") == name:
                edits = [(device.get("containerEdits") or {}), (spec.get("containerEdits") or {})]
                return sorted({n.get("path") for e in edits for n in e.get("deviceNodes") or []})
    return []


def findings(claim_uid, results, answer, specs, minor_of):
    """Problems (empty: as expected) of one claim's prepare: ``results`` its allocation results
    [{pool, device}], ``answer`` the plugin's answer for the claim ({"devices": [...], "error"}),
    ``specs`` the CDI spec documents in the CDI root, ``minor_of`` {device name: GPU minor}."""
    problems = []
    if (answer or {}).get("error"):
        return ["claim %s: prepare failed: %s" % (claim_uid, answer["error"])]
    answered = {(d.get("pool_name"), d.get("device_name")): d for d in (answer or {}).get("devices") or []}
    wanted = {(r["pool"], r["device"]) for r in results}
    if set(answered) != wanted:
        problems.append("claim %s: prepared devices %s, allocated %s" % (claim_uid, sorted(answered), sorted(wanted)))
    devices = {d.get("name"): (spec, d) for spec in specs if spec.get("kind") == CDI_KIND
               for d in spec.get("devices") or []}
    for (pool, name), device in sorted(answered.items()):
        want = expected_cdi_id(claim_uid, name)
        if device.get("cdi_device_ids") != [want]:
            problems.append("claim %s device %s/%s: CDI ids %s, expected [%s]"
                            % (claim_uid, pool, name, device.get("cdi_device_ids"), want))
        found = devices.get(want.split("=", 1)[1])
        if found is None:
            problems.append("claim %s: no CDI spec in the CDI root has device %s" % (claim_uid, want))
            continue
        spec, entry = found
        minors = _gpu_minors(entry.get("containerEdits")) | _gpu_minors(spec.get("containerEdits"))
        if minors != {minor_of[name]}:
            problems.append("claim %s device %s: the spec's GPU device nodes are /dev/nvidia%s, expected /dev/nvidia%d only"
                            % (claim_uid, name, sorted(minors), minor_of[name]))
    return problems

"""Field-by-field comparison of the ResourceSlices NVIDIA's real plugin published with what the
simulator publishes for the same GPUs (pure logic; make real-plugin feeds it)."""

import json

from labctl.apiserver.sim import gpus, pool


def flatten(value, prefix=""):
    """{dotted path: leaf} of a JSON value; a leaf keeps its JSON type, so that an int 0 and a
    string "0" differ, and an empty dict or list is a leaf of its own (present but empty)."""
    if isinstance(value, dict) and value:
        found = {}
        for key in sorted(value):
            found.update(flatten(value[key], "%s.%s" % (prefix, key) if prefix else str(key)))
        return found
    if isinstance(value, list) and value:
        found = {}
        for index, item in enumerate(value):
            found.update(flatten(item, "%s[%d]" % (prefix, index)))
        return found
    return {prefix: value}


def _shown(value):
    return "(absent)" if value is _ABSENT else json.dumps(value, sort_keys=True)


_ABSENT = object()


def field_differences(where, real, sim):
    """One line per field whose presence, JSON type or value differ: where, the field, both sides."""
    real_flat, sim_flat = flatten(real), flatten(sim)
    lines = []
    for key in sorted(set(real_flat) | set(sim_flat)):
        a, b = real_flat.get(key, _ABSENT), sim_flat.get(key, _ABSENT)
        if a is _ABSENT or b is _ABSENT or type(a) is not type(b) or a != b:
            lines.append("%s: %s: real %s, simulator %s" % (where, key, _shown(a), _shown(b)))
    return lines


def device_differences(node, real_devices, sim_devices):
    """Differences between two device lists of one pool, matched by device name."""
    real_by, sim_by = {d["name"]: d for d in real_devices}, {d["name"]: d for d in sim_devices}
    lines = []
    for name in sorted(set(real_by) | set(sim_by)):
        where = "%s/%s" % (node, name)
        if name not in sim_by:
            lines.append("%s: device published by the real plugin only" % where)
        elif name not in real_by:
            lines.append("%s: device published by the simulator only" % where)
        else:
            lines.extend(field_differences(where, real_by[name], sim_by[name]))
    return lines


def slice_metadata(item):
    """What of a stored slice the comparison covers beside its devices: the spec without devices,
    the name prefix, the owner."""
    metadata = item.get("metadata") or {}
    spec = {k: v for k, v in (item.get("spec") or {}).items() if k != "devices"}
    owners = [{k: o.get(k) for k in ("apiVersion", "kind", "name", "controller")}
              for o in metadata.get("ownerReferences") or []]
    return {"spec": spec, "generateName": metadata.get("generateName"), "ownerReferences": owners}


def expected_slices(pool_name, devices, generation, driver=gpus.DRIVER):
    """The simulator's slices for a pool (gpus.slice_specs, pool.generate_name, a Node owner),
    in the slice_metadata form plus devices."""
    specs = gpus.slice_specs(pool_name, devices, generation, driver)
    return [{"metadata": {"generateName": pool.generate_name(i, len(specs), driver, pool_name),
                          "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": pool_name,
                                               "controller": True}]},
             "spec": spec} for i, spec in enumerate(specs)]


def pool_differences(pool_name, real_slices, sim_slices):
    """Differences of one pool: slice count, each slice's metadata (in name order of the
    generated prefix) and all devices of the pool matched by name."""
    lines = []
    if len(real_slices) != len(sim_slices):
        lines.append("%s: slices: real %d, simulator %d" % (pool_name, len(real_slices), len(sim_slices)))
    by_prefix = sorted(real_slices, key=lambda s: (s.get("metadata") or {}).get("generateName") or "")
    for index, (real, sim) in enumerate(zip(by_prefix, sim_slices)):
        lines.extend(field_differences("%s slice %d" % (pool_name, index), slice_metadata(real), slice_metadata(sim)))
    real_devices = [d for s in real_slices for d in (s.get("spec") or {}).get("devices") or []]
    sim_devices = [d for s in sim_slices for d in (s.get("spec") or {}).get("devices") or []]
    lines.extend(device_differences(pool_name, real_devices, sim_devices))
    return lines


def restart_differences(pool_name, before, after, wanted_devices):
    """How the pool changed across a plugin restart, against what the simulator's controller
    model (pool.plan) does from the same starting slices: which slices it keeps (by name), and
    the generation it publishes at."""
    steps = pool.plan(before, pool.chunks(wanted_devices))
    before_names = {s["metadata"]["name"] for s in before}
    kept = before_names - set(steps["delete"])
    real_kept = before_names & {s["metadata"]["name"] for s in after}
    real_generation = max([s["spec"]["pool"]["generation"] for s in after] + [0])
    lines = []
    if real_kept != kept:
        lines.append("%s: restart: slices kept: real %s, simulator %s" % (pool_name, sorted(real_kept), sorted(kept)))
    if real_generation != steps["generation"]:
        lines.append("%s: restart: pool.generation: real %d, simulator %d"
                     % (pool_name, real_generation, steps["generation"]))
    return lines

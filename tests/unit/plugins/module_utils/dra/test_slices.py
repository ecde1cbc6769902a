"""slices.py, what resource_slice_info reads: its output options (the summary counted straight from the
slices equals the summary of the full device list, filters and order are those of the old path, fields
project), and the filters' node names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices, slices
from ansible_collections.dra.gpu.plugins.module_utils.inputs.inputs import InputError
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes


def gpu(name, product="NVIDIA L4", memory="23034Mi", attributes=None, **extra):
    attributes = dict({"type": {"string": "gpu"}, "resource.kubernetes.io/pciBusID": {"string": "0000:01:00.0"}},
                      **(attributes or {}))
    if product:
        attributes["productName"] = {"string": product}
    device = {"name": name, "attributes": attributes}
    if memory is not None:
        device["capacity"] = {"memory": {"value": memory}}
    device.update(extra)
    return device


def make_slice(name, pool, devices, driver="gpu.nvidia.com", node="same", generation=1, count=1, **spec):
    body = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": devices}
    if node:
        body["nodeName"] = pool if node == "same" else node
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def fleet():
    """Every case the summary keys on: nodes, drivers, models (productName, model, type, none),
    memory missing and unparsable, network-attached devices, an ignored pool, allocations."""
    return [
        make_slice("b", "node-b", [gpu("gpu-10"), gpu("gpu-2"), gpu("gpu-1", product="NVIDIA A10", memory="23028Mi")]),
        make_slice("a", "node-a", [gpu("gpu-0", product=None), gpu("gpu-1", memory=None)]),
        make_slice("a-old", "node-a", [gpu("gpu-0")], generation=0),
        make_slice("m", "node-a-mig", [gpu("mig-1g", product=None, attributes={"model": {"string": "1g.10gb"}}, memory="9856Mi"),
                                       gpu("weird", memory="lots")], node="node-a"),
        make_slice("x", "node-b", [{"name": "nic-0", "attributes": {}}], driver="nic.example.com"),
        make_slice("fab", "fabric", [gpu("all-0")], node=None, allNodes=True),
        make_slice("sel", "racks", [gpu("sel-0")], node=None,
                   nodeSelector={"nodeSelectorTerms": [{"matchExpressions": []}]}),
        make_slice("per", "per-device", [gpu("pd-0", nodeName="node-c")], node=None, perDeviceNodeSelection=True),
        make_slice("half", "node-d", [gpu("gpu-0")], count=2),
        make_slice("dup1", "node-e", [gpu("gpu-0")], count=2),
        make_slice("dup2", "node-e", [gpu("gpu-0")], count=2),
    ]


CLAIMS = [
    {"metadata": {"namespace": "ns", "name": "one"},
     "status": {"allocation": {"devices": {"results": [
         {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-2"},
         {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "fabric", "device": "all-0"}]}},
         "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}},
    {"metadata": {"namespace": "ns", "name": "mig"},
     "status": {"allocation": {"devices": {"results": [
         {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a-mig", "device": "mig-1g"}]}}}},
]


# The inventory as it was computed before the output options (commit 94daf5d): flatten every
# device, sort, filter, summarize. The lean path must give exactly this.
def legacy_devices(slice_list, claims):
    usable, problems = slice_devices.usable_pools(slice_list)
    taken = slice_devices.allocations(claims)
    devices = [slice_devices.flatten_device(item, device, taken)
               for item in usable for device in item["spec"].get("devices") or []]
    devices.sort(key=lambda d: (d["node"] or "", d["driver"] or "", d["pool"] or "", slice_devices._natural_key(d["name"])))
    return devices, problems


def legacy_summary(devices):
    def memory(device):
        try:
            return to_bytes(device["capacity"]["memory"]) if device["capacity"].get("memory") is not None else 0
        except QuantityError:
            return 0
    summary = {"total": {"count": 0, "allocated": 0, "free": 0, "tainted": 0, "memory_bytes": 0},
               "by_node": {}, "by_driver": {}, "by_model": {}}

    def add(bucket, device):
        for key in ("count", "allocated", "free", "tainted", "memory_bytes"):
            bucket.setdefault(key, 0)
        bucket["count"] += 1
        bucket["allocated" if device["allocated"] else "tainted" if device["tainted"] else "free"] += 1
        bucket["memory_bytes"] += memory(device)
    for device in devices:
        add(summary["total"], device)
        add(summary["by_node"].setdefault(device["node"] or "(%s)" % device["node_scope"], {}), device)
        add(summary["by_driver"].setdefault(device["driver"], {}), device)
        add(summary["by_model"].setdefault(slice_devices.device_model(device), {}), device)
    for bucket in [summary["total"]] + [b for key in ("by_node", "by_driver", "by_model") for b in summary[key].values()]:
        bucket["memory"] = human_bytes(bucket["memory_bytes"])
    return summary


FILTERS = [
    {},
    {"driver": "gpu.nvidia.com"},
    {"driver": "nic.example.com"},
    {"nodes": ["node-a"]},
    {"nodes": ["node-a", "node-c", "no-such-node"]},
    {"nodes": []},
    {"pool": "node-b"},
    {"pool": "node-b", "driver": "gpu.nvidia.com", "nodes": ["node-b"]},
    {"driver": "no.such.driver"},
]


@pytest.mark.parametrize("wanted", FILTERS, ids=lambda f: ",".join("%s=%s" % kv for kv in sorted(f.items())) or "none")
def test_full_output_is_what_it_was(wanted):
    devices, problems = legacy_devices(fleet(), CLAIMS)
    devices = slice_devices.filter_devices(devices, wanted.get("driver"), wanted.get("nodes"), wanted.get("pool"))
    result = slices.report(fleet(), CLAIMS, slices.Filters(**wanted), wanted.get("nodes"))
    assert result["devices"] == devices
    assert result["summary"] == legacy_summary(devices)
    assert result["ignored_pools"] == problems
    assert list(result) == ["devices", "summary", "ignored_pools"]


@pytest.mark.parametrize("wanted", FILTERS, ids=lambda f: ",".join("%s=%s" % kv for kv in sorted(f.items())) or "none")
def test_summary_output_equals_the_summary_of_the_full_output(wanted):
    filters, nodes = slices.Filters(**wanted), wanted.get("nodes")
    full = slices.report(fleet(), CLAIMS, filters, nodes)
    summary = slices.report(fleet(), CLAIMS, filters, nodes, output="summary")
    assert summary == {"summary": full["summary"], "ignored_pools": full["ignored_pools"]}
    # the same keys in the same order, not only equal dicts
    for key in ("by_node", "by_driver", "by_model"):
        assert list(summary["summary"][key]) == list(full["summary"][key])


def test_the_summary_counts_what_the_fleet_holds():
    summary = slices.report(fleet(), CLAIMS, slices.Filters(), None, output="summary")["summary"]
    assert summary["total"]["count"] == 11 and summary["total"]["allocated"] == 3
    assert list(summary["by_node"]) == ["(all_nodes)", "(node_selector)", "node-a", "node-b", "node-c"]
    assert summary["by_node"]["node-a"] == {"count": 4, "allocated": 1, "free": 3, "tainted": 0,
                                            "memory_bytes": (23034 + 9856) * 2 ** 20, "memory": "32890Mi"}
    assert summary["by_model"]["1g.10gb"]["allocated"] == 1
    assert summary["by_model"]["gpu"]["count"] == 1  # no productName: the type
    assert summary["by_model"]["unknown"]["count"] == 1  # the NIC has no attributes at all
    assert summary["by_driver"]["nic.example.com"] == {"count": 1, "allocated": 0, "free": 1, "tainted": 0,
                                                       "memory_bytes": 0,
                                                       "memory": "0"}


def test_summary_without_claims_counts_every_device_free():
    summary = slices.report(fleet(), [], slices.Filters(), None, output="summary")["summary"]
    assert summary["total"]["allocated"] == 0 and summary["total"]["free"] == summary["total"]["count"]


def test_fields_keep_only_the_named_keys_in_that_order_and_leave_the_summary_whole():
    full = slices.report(fleet(), CLAIMS, slices.Filters(driver="gpu.nvidia.com"), None)
    some = slices.report(fleet(), CLAIMS, slices.Filters(driver="gpu.nvidia.com"), None,
                         fields=["name", "node", "claim"])
    assert [list(d) for d in some["devices"]] == [["name", "node", "claim"]] * len(full["devices"])
    assert some["devices"] == [{"name": d["name"], "node": d["node"], "claim": d["claim"]} for d in full["devices"]]
    assert some["summary"] == full["summary"]


def test_every_documented_field_exists():
    device = slices.report(fleet(), CLAIMS, slices.Filters(), None)["devices"][0]
    assert tuple(device) == slice_devices.DEVICE_FIELDS
    assert slices.OUTPUT_ARGUMENT_SPEC["fields"]["choices"] == list(slice_devices.DEVICE_FIELDS)


def test_selectors_see_the_device_of_the_usable_generation():
    class OnlyA10:
        def match(self, driver, device):
            return ((device.get("attributes") or {}).get("productName") or {}).get("string") == "NVIDIA A10", None
    for output in ("full", "summary"):
        result = slices.report(fleet(), CLAIMS, slices.Filters(), None, selectors=OnlyA10(), output=output)
        assert result["summary"]["total"]["count"] == 1
        assert list(result["summary"]["by_model"]) == ["NVIDIA A10"]


def test_fields_with_summary_output_are_refused():
    with pytest.raises(InputError, match="output is summary, which returns no devices"):
        slices.check_output("summary", ["node"])
    with pytest.raises(InputError, match="more than once"):
        slices.check_output("full", ["node", "name", "node"])
    slices.check_output("summary", None)
    slices.check_output("full", ["node"])


# ----- the filters' node names and gather ----------------------------------------------------

class NodeKube:
    """What Filters and gather call: node_names, slices and claims."""

    def __init__(self, labelled=("node-a", "node-b")):
        self.labelled = list(labelled)
        self.asked = []

    def node_names(self, selector):
        self.asked.append(("node_names", selector))
        return self.labelled

    def slices(self, driver=None):
        self.asked.append(("slices", driver))
        return fleet(), "1"

    def claims(self):
        self.asked.append(("claims",))
        return CLAIMS

    def list_resource(self, plural):
        self.asked.append(("list", plural))
        return [], "1"


def test_filters_from_module_params():
    filters = slices.Filters.from_params({"driver": "gpu.nvidia.com", "nodes": ["a"], "node_selector": "x=y",
                                          "pool": "p", "output": "ignored"})
    assert (filters.driver, filters.nodes, filters.node_selector, filters.pool) == ("gpu.nvidia.com", ["a"], "x=y", "p")
    assert set(slices.FILTER_ARGUMENT_SPEC) == {"driver", "nodes", "node_selector", "pool"}


def test_no_node_filter_means_any_node_and_asks_nothing():
    kube = NodeKube()
    assert slices.Filters().node_names(kube) is None
    assert slices.Filters(nodes=[]).node_names(kube) is None
    assert kube.asked == []


def test_nodes_alone_are_taken_as_given_sorted_and_once():
    assert slices.Filters(nodes=["node-b", "node-a", "node-b"]).node_names(NodeKube()) == ["node-a", "node-b"]


def test_a_node_selector_alone_gives_the_nodes_it_matches():
    kube = NodeKube(labelled=["node-b", "node-a"])
    assert slices.Filters(node_selector="gpu=true").node_names(kube) == ["node-a", "node-b"]
    assert kube.asked == [("node_names", "gpu=true")]


def test_nodes_and_a_node_selector_together_give_the_nodes_in_both():
    kube = NodeKube(labelled=["node-a", "node-b"])
    assert slices.Filters(nodes=["node-b", "node-c"], node_selector="gpu=true").node_names(kube) == ["node-b"]
    assert slices.Filters(nodes=["node-c"], node_selector="gpu=true").node_names(kube) == []
    assert slices.Filters(node_selector="gpu=true").node_names(NodeKube(labelled=[])) == []


def test_gather_reads_the_drivers_slices_and_the_claims_and_reports():
    kube = NodeKube(labelled=["node-b"])
    filters = slices.Filters(driver="gpu.nvidia.com", node_selector="gpu=true")
    result = slices.gather(kube, filters)
    assert kube.asked == [("slices", "gpu.nvidia.com"), ("claims",), ("node_names", "gpu=true"),
                          ("list", "devicetaintrules")]
    assert result == slices.report(fleet(), CLAIMS, filters, ["node-b"])
    assert {d["node"] for d in result["devices"]} == {"node-b"}


def test_gather_without_claims_counts_everything_free_and_does_not_read_them():
    kube = NodeKube()
    result = slices.gather(kube, slices.Filters(), with_claims=False, output="summary")
    assert ("claims",) not in kube.asked
    assert result["summary"]["total"]["allocated"] == 0 and "devices" not in result


def test_gather_passes_the_fields_on():
    result = slices.gather(NodeKube(), slices.Filters(pool="node-b"), fields=["name", "driver"])
    assert result["devices"] == [{"name": "gpu-1", "driver": "gpu.nvidia.com"}, {"name": "gpu-2", "driver": "gpu.nvidia.com"},
                                 {"name": "gpu-10", "driver": "gpu.nvidia.com"}, {"name": "nic-0", "driver": "nic.example.com"}]

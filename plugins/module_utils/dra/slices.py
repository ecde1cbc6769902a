# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what DRA drivers publish, filtered the way the modules' options describe."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.inputs.inputs import InputError

FILTER_ARGUMENT_SPEC = dict(
    driver=dict(type="str"),
    nodes=dict(type="list", elements="str"),
    node_selector=dict(type="str"),
    pool=dict(type="str"),
)


class Filters:
    def __init__(self, driver=None, nodes=None, node_selector=None, pool=None):
        self.driver = driver
        self.nodes = nodes
        self.node_selector = node_selector
        self.pool = pool

    @classmethod
    def from_params(cls, params):
        return cls(params.get("driver"), params.get("nodes"), params.get("node_selector"), params.get("pool"))

    def node_names(self, kube):
        """The nodes the filters allow, or None for "any node"."""
        names = None
        if self.node_selector:
            names = set(kube.node_names(self.node_selector))
        if self.nodes:
            names = set(self.nodes) if names is None else names & set(self.nodes)
        return None if names is None else sorted(names)


OUTPUTS = ("full", "summary")

OUTPUT_ARGUMENT_SPEC = dict(
    include_allocations=dict(type="bool", default=True),
    output=dict(type="str", default="full", choices=list(OUTPUTS)),
    fields=dict(type="list", elements="str", choices=list(slice_devices.DEVICE_FIELDS)),
)


def check_output(output, fields):
    """``fields`` shapes the device entries, which ``output: summary`` leaves out."""
    if fields and output == "summary":
        raise InputError("fields is %s, but output is summary, which returns no devices: leave fields out, "
                         "or set output: full" % ", ".join(fields))
    if fields and len(set(fields)) != len(fields):
        inputs.unique("fields", fields, "field")


def report(slices, claims, filters, node_names, selectors=None, output="full", fields=None, rules=()):
    """Devices, summary and ignored pools for already-fetched slices and claims.

    ``selectors`` (a :class:`cel.Selectors`) keeps only the devices it matches. ``output``
    ``summary`` leaves out ``devices`` and counts straight from the slices; ``fields`` keeps
    only those keys of each device.
    """
    entries, problems = slice_devices.selected_devices(slices, filters.driver, node_names, filters.pool)
    if selectors is not None:
        entries = [e for e in entries if selectors.match(e[0]["spec"].get("driver"), e[1])[0]]
    if output == "summary":
        return {"summary": slice_devices.summarize_raw(entries, claims, rules), "ignored_pools": problems}
    taken = slice_devices.allocations(claims)
    devices = [slice_devices.flatten_device(item, device, taken, rules) for item, device, _node in entries]
    return {"devices": slice_devices.project(devices, fields), "summary": slice_devices.summarize(devices),
            "ignored_pools": problems}


def gather(kube, filters, with_claims=True, output="full", fields=None):
    """Read and report. ``kube`` is a :class:`client.Kube` or a :class:`client.RawReader`
    (the same calls, read as raw JSON)."""
    slices, _version = kube.slices(filters.driver)
    claims = kube.claims() if with_claims else []
    return report(slices, claims, filters, filters.node_names(kube), output=output, fields=fields,
                  rules=taint_rules(kube))


def taint_rules(kube):
    """The cluster's DeviceTaintRules (resource.k8s.io/v1), or none where it serves none (before 1.37)."""
    try:
        return kube.list_resource("devicetaintrules")[0]
    except ApiException as exc:
        if exc.status in (403, 404):
            return []
        raise

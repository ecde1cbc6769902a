# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what DRA drivers publish, filtered the way the modules' options describe."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils import inventory

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


def report(slices, claims, filters, node_names, selectors=None):
    """Devices, summary and ignored pools for already-fetched slices and claims.

    ``selectors`` (a :class:`cel.Selectors`) keeps only the devices it matches.
    """
    devices, problems = inventory.devices_from_slices(slices, claims)
    devices = inventory.filter_devices(devices, filters.driver, node_names, filters.pool)
    if selectors is not None:
        raw = raw_devices(slices)
        devices = [d for d in devices if selectors.match(d["driver"], raw[(d["driver"], d["pool"], d["name"])])[0]]
    return {"devices": devices, "summary": inventory.summarize(devices), "ignored_pools": problems}


def raw_devices(slices):
    """(driver, pool, device name) -> the device entry as published, with typed attributes."""
    found = {}
    for item in slices:
        spec = item.get("spec") or {}
        for device in spec.get("devices") or []:
            found[(spec.get("driver"), (spec.get("pool") or {}).get("name"), device.get("name"))] = device
    return found


def gather(kube, filters, with_claims=True):
    slices, _version = kube.slices(filters.driver)
    claims = kube.claims() if with_claims else []
    return report(slices, claims, filters, filters.node_names(kube))

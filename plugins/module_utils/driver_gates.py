# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which feature gates NVIDIA's DRA kubelet plugin runs with, read from its DaemonSet.

Both ways NVIDIA installs the driver render the chart value ``featureGates`` (standalone DRA
chart) or ``draDriver.featureGates`` (v26.7 operator-managed GPUCluster) as the environment
variable FEATURE_GATES (``MPSSupport=true,TimeSlicingSettings=true,``) on the ``gpus``
container of a DaemonSet named ``*-kubelet-plugin``. A sharing config whose gate is off is
accepted by the API server and fails only when a pod starts, so it is checked here first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import KUBELET_PLUGIN_SUFFIX as PLUGIN_SUFFIX

GATES_ENV = "FEATURE_GATES"
PLUGIN_CONTAINER = "gpus"


def parse(text):
    """``"A=true,B=false,"`` -> {"A": True, "B": False}; tolerant of spaces and a trailing comma."""
    gates = {}
    for item in (text or "").split(","):
        name, _sep, value = item.strip().partition("=")
        if name:
            gates[name.strip()] = value.strip().lower() == "true"
    return gates


def kubelet_plugins(daemonsets):
    """The DRA kubelet-plugin DaemonSets among ``daemonsets`` (dicts as the API returns them),
    each as {namespace, name, gates}."""
    found = []
    for ds in daemonsets or []:
        meta = ds.get("metadata") or {}
        if not (meta.get("name") or "").endswith(PLUGIN_SUFFIX):
            continue
        containers = ((((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or [])
        gpus = [c for c in containers if c.get("name") == PLUGIN_CONTAINER]
        if not gpus:
            continue
        env = {e.get("name"): e.get("value") for e in gpus[0].get("env") or []}
        found.append({"namespace": meta.get("namespace"), "name": meta.get("name"), "gates": parse(env.get(GATES_ENV))})
    return sorted(found, key=lambda p: (p["namespace"] or "", p["name"]))


def missing(required, plugins):
    """Per plugin, the required gates it runs without: [{namespace, name, missing}]."""
    result = []
    for plugin in plugins:
        # A gate not named is off: the sharing gates default to off in NVIDIA's driver.
        off = [gate for gate in required if not plugin["gates"].get(gate, False)]
        if off:
            result.append(dict(plugin, missing=off))
    return result


def problem(required, plugins):
    """One sentence with the fix when a required gate is off or no plugin is found; else None."""
    if not required:
        return None
    if not plugins:
        return ("no NVIDIA DRA kubelet plugin (a DaemonSet *-kubelet-plugin with a gpus container) was found, so the "
                "feature gates %s cannot be checked; install the driver first (dra.gpu.gpu_operator)"
                % ", ".join(required))
    off = missing(required, plugins)
    if not off:
        return None
    where = "; ".join("%s/%s runs without %s" % (p["namespace"], p["name"], ", ".join(p["missing"])) for p in off)
    return ("the sharing classes need the DRA driver's feature gates %s, which are off by default: %s. Turn them on "
            "with gpu_operator_dra_sharing: true in dra.gpu.gpu_operator (it sets the chart value featureGates), "
            "run that role, then this one" % (", ".join(required), where))

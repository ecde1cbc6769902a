# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which feature gates NVIDIA's DRA kubelet plugin runs with, read from its DaemonSet.

Both ways NVIDIA installs the driver render the chart value ``featureGates`` (standalone DRA
chart) or ``draDriver.featureGates`` (v26.7 operator-managed GPUCluster) as the environment
variable FEATURE_GATES (``MPSSupport=true,TimeSlicingSettings=true,``) on the ``gpus``
container of a DaemonSet named ``*-kubelet-plugin``. A sharing config whose gate is off is
accepted by the API server and fails only when a pod starts, so it is checked here first.

ConsumableShares (driver 0.5.0) also needs its mode, CONSUMABLE_SHARES on that same container:
the standalone chart renders its value ``consumableShares`` there, and NVIDIA's v26.7 operator
puts ``draDriver.gpus.kubeletPlugin.env`` (where gpu_operator_values puts the mode, its
GPUCluster having no key of its own for it) there too, so one reading serves both layouts.
The plugin publishes shares only with the gate on and a mode other than "disabled" (read on
the driver's main branch, 0.5.0-dev, cmd/gpu-kubelet-plugin/consumable_shares.go).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import KUBELET_PLUGIN_SUFFIX as PLUGIN_SUFFIX

GATES_ENV = "FEATURE_GATES"
SHARES_ENV = "CONSUMABLE_SHARES"
SHARES_GATE = "ConsumableShares"
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
    each as {namespace, name, gates, consumable_shares}: ``consumable_shares`` is the mode the
    plugin publishes shares in ("memory", "unlimited", "4"), None when it publishes none."""
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
        gates = parse(env.get(GATES_ENV))
        found.append({"namespace": meta.get("namespace"), "name": meta.get("name"), "gates": gates,
                      "consumable_shares": shares_mode(gates, env.get(SHARES_ENV))})
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


def shares_mode(gates, value):
    """The ConsumableShares mode a plugin with ``gates`` and CONSUMABLE_SHARES ``value`` runs in,
    or None: the driver shares nothing without its gate, and "" or "disabled" is its default."""
    mode = (value or "").strip()
    if not gates.get(SHARES_GATE, False) or mode in ("", "disabled"):
        return None
    return mode


def shares_problem(plugins):
    """One sentence with the fix when no plugin publishes memory shares (or one of several does
    not: claims of a memory class would fit on some nodes only); else None."""
    if not plugins:
        return ("no NVIDIA DRA kubelet plugin (a DaemonSet *-kubelet-plugin with a gpus container) was found, so "
                "whether it publishes memory shares cannot be checked; install the driver first "
                "(dra.gpu.gpu_operator with gpu_operator_dra_consumable_shares)")
    without = [p for p in plugins if not p.get("consumable_shares")]
    if not without:
        return None
    where = "; ".join("%s/%s publishes none (gate %s %s)"
                      % (p["namespace"], p["name"], SHARES_GATE, "on, but no mode" if p["gates"].get(SHARES_GATE) else "off")
                      for p in without)
    return ("the memory classes need NVIDIA's DRA driver 0.5.0 to publish memory shares (its %s gate and a "
            "%s mode on the kubelet plugin): %s. Set gpu_operator_dra_consumable_shares (memory, unlimited "
            "or a share count) in dra.gpu.gpu_operator, run that role, then this one"
            % (SHARES_GATE, SHARES_ENV, where))


def sharing_modes(plugins):
    """The ConsumableShares modes the plugins run in, each once, sorted."""
    return sorted(set(p["consumable_shares"] for p in plugins if p.get("consumable_shares")))

# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA's opaque sharing config (``GpuConfig``, ``MigDeviceConfig``) checked as its kubelet
plugin decodes it: what it would refuse, and which feature gates a config needs. Pure functions.

NVIDIA's DRA driver (v0.4.x) reads sharing settings from opaque config
(``resource.nvidia.com/v1beta1``, kinds ``GpuConfig`` and ``MigDeviceConfig``) and decodes it
strictly only when the kubelet plugin prepares a claim: a wrong field makes the pod fail to
start, long after the class was applied. So the schema is kept here as data and every config
is checked against it before anything is written. Facts read from the driver's source at
v0.4.1 (``api/nvidia.com/resource/v1beta1``), which a 0.4.x plugin enforces; ``multiUser`` came
with v0.5.0 (read on its main branch) and is refused here as 0.4.x refuses it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, to_bytes

API_VERSION = "resource.nvidia.com/v1beta1"
GPU_CONFIG, MIG_CONFIG = "GpuConfig", "MigDeviceConfig"
INTERVALS = ("Default", "Short", "Medium", "Long")
MEBIBYTE = 1024 * 1024

# What the driver's strict decoder accepts, field by field: a nested dict is an object with
# exactly these fields; "quantity_map" is {uuid-or-index: quantity}.
_MPS_FIELDS = {"defaultActiveThreadPercentage": "int", "defaultPinnedDeviceMemoryLimit": "quantity",
               "defaultPerDevicePinnedMemoryLimit": "quantity_map"}
SCHEMA = {
    GPU_CONFIG: {"apiVersion": "string", "kind": "string",
                 "sharing": {"strategy": "string", "timeSlicingConfig": {"interval": "string"},
                             "mpsConfig": _MPS_FIELDS}},
    MIG_CONFIG: {"apiVersion": "string", "kind": "string",
                 "sharing": {"strategy": "string", "mpsConfig": _MPS_FIELDS}},
}
# The driver's feature gate each strategy needs (both off by default in v0.4.x).
GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}


def _check_type(path, kind, value, problems):
    if kind == "string" and not isinstance(value, str):
        problems.append("%s: must be a string, not %r" % (path, value))
    elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        problems.append("%s: must be a whole number, not %r" % (path, value))
    elif kind == "quantity":
        _check_quantity(path, value, problems)
    elif kind == "quantity_map":
        if not isinstance(value, dict):
            problems.append("%s: must be a map of GPU UUID or index to a quantity" % path)
            return
        for key, item in value.items():
            if not (str(key).isdigit() or str(key).startswith(("GPU-", "MIG-"))):
                problems.append("%s: key %r is neither a device index nor a GPU-/MIG- UUID" % (path, key))
            _check_quantity("%s.%s" % (path, key), item, problems)


def _check_quantity(path, value, problems):
    try:
        amount = to_bytes(value)
    except (QuantityError, TypeError):
        problems.append("%s: %r is not a quantity (write e.g. 8Gi)" % (path, value))
        return
    # The driver hands MPS whole megabytes (value / 1024 / 1024) and refuses 0.
    if amount < MEBIBYTE:
        problems.append("%s: %r is below 1Mi, which the driver refuses as 'value set too low'" % (path, value))


def _walk(schema, value, path, problems):
    if not isinstance(value, dict):
        problems.append("%s: must be an object" % (path or "parameters"))
        return
    for key in sorted(value):
        where = "%s.%s" % (path, key) if path else key
        if key not in schema:
            # The driver's message for this is: strict decoding error: unknown field "<where>".
            problems.append('unknown field "%s" (known here: %s)' % (where, ", ".join(sorted(schema))))
        elif isinstance(schema[key], dict):
            _walk(schema[key], value[key], where, problems)
        else:
            _check_type(where, schema[key], value[key], problems)


def parameter_problems(parameters):
    """Everything NVIDIA's kubelet plugin would refuse in one opaque config's ``parameters``,
    before gates: a list of sentences, empty when it would be accepted."""
    if not isinstance(parameters, dict):
        return ["parameters must be an object with apiVersion %s and a kind" % API_VERSION]
    if parameters.get("apiVersion") != API_VERSION:
        return ["apiVersion is %r; NVIDIA's driver decodes only %s" % (parameters.get("apiVersion"), API_VERSION)]
    kind = parameters.get("kind")
    if kind not in SCHEMA:
        return ["kind is %r; for sharing write %s (whole GPUs) or %s (MIG devices)" % (kind, GPU_CONFIG, MIG_CONFIG)]
    problems = []
    _walk(SCHEMA[kind], parameters, "", problems)
    if problems:
        return problems
    sharing = parameters.get("sharing")
    if sharing is None:
        return []
    strategy = sharing.get("strategy")
    if strategy not in GATES:
        return ["sharing.strategy is %r; the driver knows TimeSlicing and MPS" % (strategy,)]
    if strategy == "TimeSlicing" and "mpsConfig" in sharing:
        problems.append("sharing.mpsConfig is set with strategy TimeSlicing; the driver refuses it (remove "
                        "mpsConfig or use strategy MPS)")
    if strategy == "MPS" and "timeSlicingConfig" in sharing:
        problems.append("sharing.timeSlicingConfig is set with strategy MPS; the driver refuses it (remove "
                        "timeSlicingConfig or use strategy TimeSlicing)")
    interval = (sharing.get("timeSlicingConfig") or {}).get("interval")
    if "timeSlicingConfig" in sharing and interval not in INTERVALS:
        problems.append("sharing.timeSlicingConfig.interval is %r; write one of %s" % (interval, ", ".join(INTERVALS)))
    percentage = (sharing.get("mpsConfig") or {}).get("defaultActiveThreadPercentage")
    if percentage is not None and not 0 <= percentage <= 100:
        problems.append("sharing.mpsConfig.defaultActiveThreadPercentage is %d; it must be 0 to 100" % percentage)
    return problems


def required_gates(parameters):
    """The driver feature gates a valid config needs."""
    strategy = ((parameters or {}).get("sharing") or {}).get("strategy")
    return [GATES[strategy]] if strategy in GATES else []


def config_problems(config, where):
    """Problems of a DeviceClass or claim ``config`` list, each prefixed with ``where[i]``."""
    problems = []
    for index, entry in enumerate(config or []):
        opaque = (entry or {}).get("opaque") or {}
        if opaque.get("driver") != nvidia.DRA_DRIVER:
            continue  # other drivers' configs are not ours to judge, as NVIDIA's plugin skips them
        problems += ["%s[%d].opaque.parameters: %s" % (where, index, p) for p in parameter_problems(opaque.get("parameters"))]
    return problems

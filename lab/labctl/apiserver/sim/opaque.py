"""SIMULATED: how NVIDIA's DRA kubelet plugin (v0.4.1) prepares a claim's opaque config.

Written from the driver's source (cmd/gpu-kubelet-plugin/device_state.go prepareDevices and
GetOpaqueDeviceConfigs, api/nvidia.com/resource/v1beta1 types, Normalize and Validate), on
purpose independently of the collection's own checker (plugins/module_utils/sharing/opaque_config.py):
the lab must refuse what NVIDIA's plugin refuses even where the collection's checker is wrong.
Messages are the driver's wording, wrapped as the kubelet reports them in the pod's
FailedPrepareDynamicResources event.
"""

GROUP_VERSION = "resource.nvidia.com/v1beta1"
DRIVER = "gpu.nvidia.com"

# Go structs as field -> type; "obj:<Name>" nests, "map" is map[string]Quantity.
_TYPES = {
    "GpuConfig": {"apiVersion": "str", "kind": "str", "sharing": "obj:GpuSharing"},
    "MigDeviceConfig": {"apiVersion": "str", "kind": "str", "sharing": "obj:MigDeviceSharing"},
    "VfioDeviceConfig": {"apiVersion": "str", "kind": "str", "iommu": "str"},
    "GpuSharing": {"strategy": "str", "timeSlicingConfig": "obj:TimeSlicingConfig", "mpsConfig": "obj:MpsConfig"},
    "MigDeviceSharing": {"strategy": "str", "mpsConfig": "obj:MpsConfig"},
    "TimeSlicingConfig": {"interval": "str"},
    "MpsConfig": {"defaultActiveThreadPercentage": "int", "defaultPinnedDeviceMemoryLimit": "quantity",
                  "defaultPerDevicePinnedMemoryLimit": "map"},
}
_KINDS = ("GpuConfig", "MigDeviceConfig", "VfioDeviceConfig", "ComputeDomainChannelConfig",
          "ComputeDomainDaemonConfig", "ComputeDomain", "ComputeDomainClique")
_SUFFIX = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "k": 10 ** 3, "M": 10 ** 6,
           "G": 10 ** 9, "T": 10 ** 12, "": 1}
GATE_TIMESLICING, GATE_MPS = "TimeSlicingSettings", "MPSSupport"


class PrepareError(Exception):
    pass


class OverlapError(PrepareError):
    """Refused before any device is prepared (DeviceState.Prepare, not prepareDevices)."""


def _bytes(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    text = str(value)
    for suffix in sorted(_SUFFIX, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            return int(float(text[:-len(suffix)]) * _SUFFIX[suffix])
    return int(float(text))


def _decode(struct, value, path):
    """Go's strict JSON decode into ``struct``: unknown fields and wrong types are errors."""
    for key, item in value.items():
        field = "%s.%s" % (path, key) if path else key
        kind = _TYPES[struct].get(key)
        if kind is None:
            raise PrepareError('strict decoding error: unknown field "%s"' % field)
        if kind.startswith("obj:"):
            if item is None:
                continue
            if not isinstance(item, dict):
                raise PrepareError("json: cannot unmarshal %s into Go struct field %s.%s of type v1beta1.%s"
                                   % (type(item).__name__, struct, field, kind[4:]))
            _decode(kind[4:], item, field)
        elif kind == "str" and not isinstance(item, str):
            raise PrepareError("json: cannot unmarshal number into Go struct field %s.%s of type string" % (struct, field))
        elif kind == "int" and (isinstance(item, bool) or not isinstance(item, int)):
            raise PrepareError("json: cannot unmarshal %s into Go struct field %s.%s of type int"
                               % ("string" if isinstance(item, str) else "number", struct, field))
        elif kind == "quantity":
            try:
                _bytes(item)
            except ValueError:
                raise PrepareError("quantities must match the regular expression "
                                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def decode(parameters):
    if parameters.get("apiVersion") != GROUP_VERSION:
        raise PrepareError('no kind "%s" is registered for version "%s" in scheme' % (parameters.get("kind"),
                                                                                      parameters.get("apiVersion")))
    if parameters.get("kind") not in _KINDS:
        raise PrepareError('no kind "%s" is registered for version "%s" in scheme' % (parameters.get("kind"), GROUP_VERSION))
    if parameters["kind"] in _TYPES:
        _decode(parameters["kind"], parameters, "")
    return parameters


def _validate_strategy(strategy, gates):
    if strategy == "TimeSlicing":
        if gates.get(GATE_TIMESLICING):
            return
        raise PrepareError('"TimeSlicing" is selected as the GPU sharing strategy, but the "%s" feature gate is '
                           'not enabled' % GATE_TIMESLICING)
    if strategy == "MPS":
        if gates.get(GATE_MPS):
            return
        raise PrepareError('"MPS" is selected as the GPU sharing strategy, but the "%s" feature gate is not enabled'
                           % GATE_MPS)
    raise PrepareError("unknown GPU sharing strategy: %s, supported GPU sharing strategies: TimeSlicing, MPS" % strategy)


def normalize_and_validate(config, gates):
    """The driver's Normalize then Validate; returns the effective sharing (or None)."""
    sharing = config.get("sharing")
    if sharing is None or config["kind"] == "VfioDeviceConfig":
        return None
    sharing = dict(sharing)
    if config["kind"] == "GpuConfig" and gates.get(GATE_TIMESLICING) and sharing.get("strategy") == "TimeSlicing" \
            and sharing.get("timeSlicingConfig") is None:
        sharing["timeSlicingConfig"] = {"interval": "Default"}
    if gates.get(GATE_MPS) and sharing.get("strategy") == "MPS" and sharing.get("mpsConfig") is None:
        sharing["mpsConfig"] = {}
    try:
        _validate_strategy(sharing.get("strategy"), gates)
    except PrepareError as exc:
        raise PrepareError("error validating GPU config: %s" % exc)
    mps = sharing.get("mpsConfig")
    if sharing["strategy"] == "TimeSlicing" and config["kind"] == "GpuConfig":
        interval = (sharing.get("timeSlicingConfig") or {}).get("interval")
        if interval not in ("Default", "Short", "Medium", "Long"):
            raise PrepareError("error validating GPU config: unknown time-slice interval: %s, supported time-slice "
                               "intervals: Default, Short, Medium, Long" % interval)
        if mps is not None:
            raise PrepareError("error applying config: cannot use MpsConfig with the 'TimeSlicing' strategy")
    if sharing["strategy"] == "MPS":
        if config["kind"] == "GpuConfig" and sharing.get("timeSlicingConfig") is not None:
            raise PrepareError("error applying config: cannot use TimeSlicingConfig with the 'MPS' strategy")
        percentage = (mps or {}).get("defaultActiveThreadPercentage")
        if percentage is not None and percentage < 0:
            raise PrepareError("error validating GPU config: active thread percentage must not be negative")
        if percentage is not None and percentage > 100:
            raise PrepareError("error validating GPU config: active thread percentage must not be greater than 100")
        limit = (mps or {}).get("defaultPinnedDeviceMemoryLimit")
        if limit is not None and _bytes(limit) // (1024 * 1024) <= 0:
            raise PrepareError("error applying config: error transforming DefaultPerDevicePinnedMemoryLimit into "
                               "string: invalid limit: default value set too low: %s" % limit)
    return sharing


def prepare(claim, devices_by_name, gates, shares=False):
    """What preparing ``claim`` on this node gives: {device name: effective sharing or None}.

    ``shares``: the plugin runs with ConsumableShares on (0.5.0), which refuses MPS.
    Raises PrepareError with the driver's message when NVIDIA's plugin would refuse it.
    """
    allocation = (claim.get("status") or {}).get("allocation") or {}
    entries = (allocation.get("devices") or {}).get("config") or []
    ordered = [e for e in entries if e.get("source") == "FromClass"] + \
              [e for e in entries if e.get("source") == "FromClaim"]
    configs = [{"requests": [], "config": {"apiVersion": GROUP_VERSION, "kind": "MigDeviceConfig"}},
               {"requests": [], "config": {"apiVersion": GROUP_VERSION, "kind": "GpuConfig"}}]
    try:
        for entry in ordered:
            opaque = entry.get("opaque")
            if opaque is None:
                raise PrepareError("only opaque parameters are supported by this driver")
            if opaque.get("driver") != DRIVER:
                continue
            try:
                decoded = decode(opaque.get("parameters") or {})
            except PrepareError as exc:
                raise PrepareError("error decoding config parameters: %s" % exc)
            configs.append({"requests": entry.get("requests") or [], "config": decoded})
    except PrepareError as exc:
        raise PrepareError("error getting opaque device configs: %s" % exc)
    chosen = {}
    for result in (allocation.get("devices") or {}).get("results") or []:
        if result.get("driver") != DRIVER:
            continue
        device = devices_by_name.get(result["device"])
        if device is None:
            raise PrepareError('allocatable not found for device "%s"' % result["device"])
        kind = device["attributes"]["type"]["string"]
        for candidate in reversed(configs):
            config_kind = candidate["config"]["kind"]
            fits = (config_kind == "GpuConfig" and kind == "gpu") or (config_kind == "MigDeviceConfig" and kind == "mig")
            if result.get("request") in candidate["requests"]:
                if not fits:
                    raise PrepareError('cannot apply %s to device "%s" of type "%s" (request: %s)'
                                       % (config_kind, result["device"], kind, result.get("request")))
                chosen[result["device"]] = candidate["config"]
                break
            if not candidate["requests"] and fits:
                chosen[result["device"]] = candidate["config"]
                break
    effective = {name: normalize_and_validate(config, gates) for name, config in chosen.items()}
    if shares and gates.get(GATE_MPS) and any((e or {}).get("strategy") == "MPS" for e in effective.values()):
        # applySharingConfig (0.5.0): the MPS daemon cannot be shared between claims.
        raise PrepareError("error applying config: MPS sharing is not supported when consumable shares is enabled")
    return effective


def check_overlap(claim, effective, prepared, shares=False):
    """validateNoOverlappingPreparedDevices (0.5.0): a device this claim gets without admin access
    that another prepared claim on the node holds is refused, unless ConsumableShares is on and
    both claims configure it alike. ``prepared``: {claim uid: {device: effective config}}."""
    uid = claim["metadata"]["uid"]
    results = ((((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or [])
    wanted = [r["device"] for r in results if r.get("driver") == DRIVER and not r.get("adminAccess")]
    for other, devices in prepared.items():
        if other == uid:
            continue
        for device in wanted:
            if device not in devices:
                continue
            if shares:
                if devices[device] != effective.get(device):
                    raise OverlapError("unable to prepare claim %s: requested device %s has conflicting configuration "
                                       "with already prepared claim %s" % (uid, device, other))
                continue
            raise OverlapError("unable to prepare claim %s: requested device %s is already allocated to different "
                               "claim %s" % (uid, device, other))


def kubelet_message(claim, error):
    """The pod event's message, as the kubelet and the driver wrap it."""
    meta = claim["metadata"]
    stage = "" if isinstance(error, OverlapError) else "prepare devices failed: "
    return ("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for "
            "ResourceClaim %s: error preparing devices for claim %s/%s:%s: %s%s"
            % (meta["name"], meta["namespace"], meta["name"], meta["uid"], stage, error))


def parse_gates(text):
    gates = {}
    for item in (text or "").split(","):
        name, _sep, value = item.partition("=")
        if name.strip():
            gates[name.strip()] = value.strip().lower() == "true"
    return gates

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features, dra_probes
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException


def refused(status, message):
    exc = ApiException(status=status)
    exc.body = json.dumps({"kind": "Status", "message": message})
    return exc


class FakeServer:
    """An API server whose dry runs drop the fields of the gates that are off (as a real one does)
    and serve v1 DeviceTaintRules only when told; every call is recorded with its dry_run."""

    def __init__(self, on, rules=False, forbidden=()):
        self.on, self.rules, self.forbidden, self.calls = set(on), rules, set(forbidden), []

    def _answer(self, plural, body):
        if plural in self.forbidden:
            raise refused(403, "%s is forbidden: User cannot create resource" % plural)
        answer = copy.deepcopy(body)
        spec = answer["spec"]
        if plural == "resourceclaims":
            request = spec["devices"]["requests"][0]
            if "firstAvailable" in request and "prioritized_list" not in self.on:
                raise refused(422, "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
                                   "`firstAvailable` is required")
            exactly = request.get("exactly") or {}
            if exactly.get("adminAccess"):
                if "admin_access" in self.on:
                    raise refused(422, "spec.devices.requests[0].exactly.adminAccess: Forbidden: admin access to "
                                       "devices requires the `resource.kubernetes.io/admin-access: true` label")
                del exactly["adminAccess"]
            if "capacity" in exactly and "consumable_capacity" not in self.on:
                del exactly["capacity"]
        elif plural == "resourceslices":
            if "partitionable_devices" not in self.on:
                spec.pop("sharedCounters", None)
            if "device_taints" not in self.on:
                for device in spec.get("devices") or []:
                    device.pop("taints", None)
        elif plural == "deviceclasses" and "extended_resource" not in self.on:
            spec.pop("extendedResourceName", None)
        elif plural == "devicetaintrules" and not self.rules:
            raise refused(404, "the server could not find the requested resource")
        return answer

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, dry_run=None):
        self.calls.append((plural, dry_run))
        return self._answer(plural, body)

    def create_cluster_custom_object(self, group, version, plural, body, dry_run=None):
        self.calls.append((plural, dry_run))
        return self._answer(plural, body)


class Kube:
    def __init__(self, server):
        self.custom = server

    def server_version(self):
        return "v1.35.4"


ON_135 = ("prioritized_list", "admin_access")
ON_137 = ON_135 + ("partitionable_devices", "consumable_capacity", "device_taints", "extended_resource")


@pytest.mark.parametrize("on,rules,minor", [(ON_135, False, 35), (ON_137, True, 37)])
def test_the_probes_find_what_a_server_with_its_versions_defaults_serves(on, rules, minor):
    server = FakeServer(on, rules)
    probed = dra_probes.probe(Kube(server))
    assert all(dry_run == "All" for _plural, dry_run in server.calls)  # nothing is ever written
    assert sorted(probed) == sorted(n for n in dra_features.NAMES if n not in dra_features.NOT_PROBED)
    expected = dra_features.expected(minor)
    assert dict((n, p["on"]) for n, p in probed.items()) == dict((n, expected[n]["on"]) for n in probed)
    rows = dra_features.report(minor, probed, 37)
    assert not any(r["flipped"] for r in rows)
    status = [r for r in rows if r["name"] == "device_status"][0]
    assert status["on"] and not status["probed"] and "cannot be written in a dry run" in status["how"]


def test_the_probe_follows_a_gate_turned_on_not_the_version():
    probed = dra_probes.probe(Kube(FakeServer(ON_135 + ("consumable_capacity",))))
    rows = dra_features.report(35, probed, 37)
    capacity = [r for r in rows if r["name"] == "consumable_capacity"][0]
    assert capacity["on"] and capacity["flipped"] and capacity["default"] is False and capacity["stage"] == "alpha"
    assert "kept it" in capacity["how"]
    line = [t for t in dra_features.lines("1.35.4", "1.37", rows) if t.startswith("consumable capacity")][0]
    assert "1.35.4: on, gate DRAConsumableCapacity set against the version's default" in line
    assert line.endswith("1.37: on (beta)")


def test_a_refused_or_forbidden_dry_run_says_so():
    probed = dra_probes.probe(Kube(FakeServer((), forbidden=("resourceslices",))))
    assert probed["prioritized_list"]["on"] is False and "exactly one of" in probed["prioritized_list"]["how"]
    assert probed["admin_access"]["on"] is False and "dropped it" in probed["admin_access"]["how"]
    assert probed["partitionable_devices"]["on"] is None and "not probed" in probed["partitionable_devices"]["how"]
    rows = dra_features.report(35, probed, 37)
    taints = [r for r in rows if r["name"] == "device_taints"][0]
    assert not taints["probed"] and taints["on"] is False  # the version's default, said so
    assert "may not create" in taints["how"]


def test_admin_access_refused_outside_an_admin_namespace_counts_as_on():
    probed = dra_probes.probe(Kube(FakeServer(("admin_access",))))
    assert probed["admin_access"]["on"] is True and "refused over it, so the server knows the field" in probed["admin_access"]["how"]


def test_other_errors_are_not_taken_for_an_answer():
    class Broken(FakeServer):
        def create_namespaced_custom_object(self, *args, **kwargs):
            raise refused(500, "etcd is away")
    with pytest.raises(ApiException):
        dra_probes.probe(Kube(Broken(ON_137)))

"""A replace that meets the workload controller's newer resourceVersion is made again on the
live object, unless the spec it was planned on has changed (CI: a rollback refused so)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.client import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.workload_migration_run import Migration


class FakeApps:
    def __init__(self, versions, conflicts):
        self.versions = list(versions)  # what each read returns, in turn
        self.conflicts = conflicts
        self.written = []

    def read_namespaced_deployment(self, name, namespace):
        return self.versions.pop(0) if len(self.versions) > 1 else self.versions[0]

    def replace_namespaced_deployment(self, name, namespace, body, **kwargs):
        if self.conflicts:
            self.conflicts -= 1
            raise ApiException(status=409, reason="Conflict")
        self.written.append(body)
        return body

    def __getattr__(self, name):
        # The StatefulSet and DaemonSet calls, which these tests do not reach.
        return None


class FakeApi:
    @staticmethod
    def sanitize_for_serialization(obj):
        return obj


class FakeKube:
    def __init__(self, apps):
        self.apps, self.api = apps, FakeApi()


def deployment(version, generation=3):
    return {"metadata": {"name": "llm", "resourceVersion": str(version), "generation": generation}}


def migration(apps):
    return Migration(FakeKube(apps), {"kind": "Deployment", "namespace": "ns", "name": "llm"})


def stamped(live):
    return dict(live, spec={"planned_on": live["metadata"]["resourceVersion"]})


def test_a_conflict_with_the_controller_is_written_again_on_the_live_object():
    apps = FakeApps([deployment(11), deployment(12)], conflicts=1)
    migration(apps)._replace(deployment(10), stamped)
    assert apps.written == [stamped(deployment(11))]


def test_a_spec_changed_meanwhile_is_refused_not_overwritten():
    apps = FakeApps([deployment(11, generation=4)], conflicts=1)
    with pytest.raises(wm.MigrationRefused, match="changed while it was being migrated; run again"):
        migration(apps)._replace(deployment(10), stamped)
    assert apps.written == []


def test_conflicts_that_do_not_end_are_refused():
    apps = FakeApps([deployment(11)], conflicts=99)
    with pytest.raises(wm.MigrationRefused, match="changed while it was being migrated"):
        migration(apps)._replace(deployment(10), stamped)

"""workload_migration_run.py: migrating one workload against the API, over fakes of the calls it makes.

A replace that meets the workload controller's newer resourceVersion is made again on the live
object, unless the spec it was planned on has changed (CI: a rollback refused so)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_run as run
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.workloads.workload_migration_run import Migration


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


def refused(status, message="denied by policy"):
    exc = ApiException(status=status)
    exc.body = '{"message": "%s"}' % message
    return exc


# ----- Migration: reads and writes --------------------------------------------------------------

GPU_DEPLOYMENT = {
    "metadata": {"name": "llm", "namespace": "ml", "generation": 3},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "llm"}},
             "template": {"metadata": {"labels": {"app": "llm"}}, "spec": {"containers": [
                 {"name": "main", "image": "vllm", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}


class Apps:
    def __init__(self, obj=None, read_error=None, write_error=None):
        self.obj, self.read_error, self.write_error = obj, read_error, write_error
        self.written = []

    def read_namespaced_deployment(self, name, namespace):
        if self.read_error is not None:
            raise self.read_error
        return self.obj

    def replace_namespaced_deployment(self, name, namespace, body, **kwargs):
        if self.write_error is not None:
            raise self.write_error
        self.written.append((body, kwargs))
        return body

    def __getattr__(self, name):
        # The StatefulSet and DaemonSet calls, which these tests do not reach.
        return None


class Custom:
    def __init__(self, claims=None, classes=("gpu.nvidia.com",), create_error=None, delete_error=None):
        self.claims, self.classes = dict(claims or {}), list(classes)
        self.create_error, self.delete_error = create_error, delete_error
        self.calls = []

    def get_namespaced_custom_object(self, group, version, namespace, plural, name):
        self.calls.append(("get", plural, name))
        if name not in self.claims:
            raise ApiException(status=404)
        return self.claims[name]

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, **kwargs):
        self.calls.append(("create", plural, body["metadata"]["name"], kwargs))
        if self.create_error is not None:
            raise self.create_error

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name):
        self.calls.append(("delete", plural, name))
        if self.delete_error is not None:
            raise self.delete_error

    def get_cluster_custom_object(self, group, version, plural, name):
        if name not in self.classes:
            raise ApiException(status=404)
        return {"metadata": {"name": name}}


class Kube:
    def __init__(self, apps=None, custom=None):
        self.apps, self.custom, self.api = apps or Apps(GPU_DEPLOYMENT), custom or Custom(), FakeApi()

    def list_resource(self, plural, namespace=None, **kwargs):
        return [{"metadata": {"name": n}} for n in self.custom.classes], "1"


def on(kube, **params):
    return Migration(kube, dict({"kind": "Deployment", "namespace": "ml", "name": "llm",
                                 "device_class": "gpu.nvidia.com", "claim_mode": "template", "timeout": 60}, **params))


def test_a_workload_that_does_not_exist_says_how_to_look_for_it():
    with pytest.raises(wm.MigrationRefused) as err:
        on(Kube(Apps(read_error=ApiException(status=404)))).read()
    assert str(err.value) == ("Deployment ml/llm does not exist; check kind, namespace and name, e.g. with "
                              "`kubectl get deployment -n ml`")
    with pytest.raises(ApiException):
        on(Kube(Apps(read_error=ApiException(status=500)))).read()


def test_writes_are_dry_run_when_asked_and_refusals_carry_the_servers_message():
    apps = Apps(GPU_DEPLOYMENT)
    on(Kube(apps))._write({"spec": 1}, dry_run=True)
    on(Kube(apps))._write({"spec": 2})
    assert apps.written == [({"spec": 1}, {"dry_run": "All"}), ({"spec": 2}, {})]
    with pytest.raises(run.Conflict):
        on(Kube(Apps(write_error=ApiException(status=409))))._write({})
    with pytest.raises(wm.MigrationRefused) as err:
        on(Kube(Apps(write_error=refused(422, "spec.template: Invalid value"))))._write({})
    assert str(err.value) == "the API server refused the new Deployment ml/llm: spec.template: Invalid value"


def test_claim_objects_read_missing_as_none_and_delete_missing_quietly():
    custom = Custom(claims={"kept": {"metadata": {"name": "kept"}}}, delete_error=ApiException(status=404))
    migration = on(Kube(custom=custom))
    assert migration._read_claim("ResourceClaimTemplate", "kept") == {"metadata": {"name": "kept"}}
    assert migration._read_claim("ResourceClaim", "gone") is None
    migration._delete_claim("ResourceClaim", "gone")
    assert custom.calls[-1] == ("delete", "resourceclaims", "gone")
    custom.delete_error = ApiException(status=403)
    with pytest.raises(ApiException):
        migration._delete_claim("ResourceClaim", "gone")


def test_a_refused_claim_object_is_named():
    custom = Custom(create_error=refused(422, "spec.spec.devices: Required value"))
    with pytest.raises(wm.MigrationRefused) as err:
        on(Kube(custom=custom))._create_claim({"kind": "ResourceClaimTemplate", "metadata": {"name": "llm-gpu"}},
                                              dry_run=True)
    assert str(err.value) == "the API server refused the ResourceClaimTemplate llm-gpu: spec.spec.devices: Required value"
    assert custom.calls == [("create", "resourceclaimtemplates", "llm-gpu", {"dry_run": "All"})]


def test_a_missing_device_class_is_refused_naming_the_ones_there_are():
    with pytest.raises(wm.MigrationRefused) as err:
        on(Kube(custom=Custom(classes=["z.example.com", "gpu.nvidia.com"])))._check_class("gpu.example.com")
    assert str(err.value) == ("DeviceClass gpu.example.com does not exist (the cluster has: gpu.nvidia.com, "
                              "z.example.com); set device_class to one of them, or create it with the device_classes role")
    with pytest.raises(wm.MigrationRefused, match=r"\(the cluster has: none\)"):
        on(Kube(custom=Custom(classes=[])))._check_class("gpu.nvidia.com")


# ----- Migration: the two directions, where they stop before waiting -----------------------------

def test_check_mode_plans_the_move_and_writes_nothing():
    kube = Kube()
    result = on(kube).migrate(True, "2026-01-01T00:00:00Z")
    assert result["changed"] is True and result["status"] == "migrated"
    assert result["claim"] == {"kind": "ResourceClaimTemplate", "name": "llm-gpu", "device_class": "gpu.nvidia.com"}
    assert result["message"] == "Deployment ml/llm would move to ResourceClaimTemplate llm-gpu"
    assert result["diff"]["before"]["claim"] is None and result["diff"]["after"]["claim"]["metadata"]["name"] == "llm-gpu"
    assert kube.apps.written == [] and [c[0] for c in kube.custom.calls] == ["get"]


def test_a_claim_of_the_same_name_made_for_something_else_is_not_taken_over():
    stranger = {"metadata": {"name": "llm-gpu", "labels": {"app": "other"}}}
    with pytest.raises(wm.MigrationRefused) as err:
        on(Kube(custom=Custom(claims={"llm-gpu": stranger}))).migrate(False, "now")
    assert str(err.value) == ("ResourceClaimTemplate ml/llm-gpu exists and was not made for Deployment ml/llm; set "
                              "claim_name to another name")


def test_a_workload_on_its_claim_already_is_left_as_it_is():
    plan = wm.rewrite("Deployment", GPU_DEPLOYMENT, "gpu.nvidia.com")
    moved = wm.migrated(GPU_DEPLOYMENT, plan, "gpu.nvidia.com", "then")
    kube = Kube(Apps(moved))
    assert on(kube).migrate(False, "now") == {
        "changed": False, "status": "migrated", "message": "Deployment ml/llm is on its claim already",
        "claim": {"kind": "ResourceClaimTemplate", "name": "llm-gpu", "device_class": "gpu.nvidia.com"}}
    assert kube.apps.written == [] and kube.custom.calls == []


def test_a_rejected_workload_update_removes_the_claim_object_it_made():
    apps = Apps(GPU_DEPLOYMENT)
    custom = Custom()
    migration = on(Kube(apps, custom))
    writes = []

    def write(body, dry_run=False):
        writes.append(dry_run)
        if not dry_run:
            raise wm.MigrationRefused("the API server refused the new Deployment ml/llm: quota")
    migration._write = write
    with pytest.raises(wm.MigrationRefused, match="quota"):
        migration.migrate(False, "now")
    assert writes == [True, False]
    assert [c[:3] for c in custom.calls] == [("get", "resourceclaimtemplates", "llm-gpu"),
                                             ("create", "resourceclaimtemplates", "llm-gpu"),
                                             ("create", "resourceclaimtemplates", "llm-gpu"),
                                             ("delete", "resourceclaimtemplates", "llm-gpu")]
    assert custom.calls[1][3] == {"dry_run": "All"} and custom.calls[2][3] == {}


def test_revert_of_a_workload_never_migrated_changes_nothing():
    kube = Kube()
    assert on(kube).revert(False) == {"changed": False, "status": "device-plugin",
                                      "message": "Deployment ml/llm was not migrated by dra.gpu: nothing to revert"}
    assert kube.apps.written == []


def test_revert_in_check_mode_shows_the_template_coming_back():
    plan = wm.rewrite("Deployment", GPU_DEPLOYMENT, "gpu.nvidia.com")
    kube = Kube(Apps(wm.migrated(GPU_DEPLOYMENT, plan, "gpu.nvidia.com", "then")))
    result = on(kube).revert(True)
    assert result["changed"] is True and result["status"] == "reverted"
    assert result["message"] == "Deployment ml/llm would go back to its template before the migration"
    assert result["claim"]["name"] == "llm-gpu" and kube.apps.written == []


def test_the_share_check_reads_each_pools_newest_generation_as_the_allocator(monkeypatch):
    # Generation 1 still lists a device that took several allocations; the driver's generation 2
    # publishes it whole: no pod could get a share, so the migration is refused before any write.
    def item(generation, shared):
        device = {"name": "gpu-0", "capacity": {"memory": {"value": "24Gi"}}}
        if shared:
            device["allowMultipleAllocations"] = True
        return {"metadata": {"name": "s%d" % generation}, "spec": {
            "driver": "gpu.nvidia.com", "nodeName": "node-a", "pool": {"name": "node-a", "generation": generation},
            "devices": [device]}}

    class SliceKube:
        def slices(self, driver=None):
            return [item(1, True), item(2, False)], "1"
    monkeypatch.setattr(run.consumable_capacity, "availability", lambda kube, namespace: {"available": True})
    share = Migration(SliceKube(), {"kind": "Deployment", "namespace": "ns", "name": "llm", "memory": "8Gi"})
    gpu_class = {"metadata": {"name": "gpu.nvidia.com"}, "spec": {}}
    with pytest.raises(wm.MigrationRefused, match="takes more than one allocation"):
        share._check_shares(gpu_class)

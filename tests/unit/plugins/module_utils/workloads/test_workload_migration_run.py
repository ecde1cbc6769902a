"""workload_migration_run.py: migrating one workload against the API, over fakes of the calls it makes.

A replace that meets the workload controller's newer resourceVersion is made again on the live
object, unless the spec it was planned on has changed (CI: a rollback refused so)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
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


# ----- the module's options ---------------------------------------------------------------------

PARAMS = {"kind": "Deployment", "name": "llm", "label_selector": None, "namespace": "ml", "state": "migrated",
          "device_class": "gpu.nvidia.com", "claim_mode": "template", "claim_name": None, "timeout": 300,
          "method": "claim"}


def test_good_options_pass_and_unset_optional_ones_are_not_checked():
    assert inputs.collect(run.input_checks(PARAMS)) == []
    assert inputs.collect(run.input_checks(dict(PARAMS, name=None, label_selector="app=llm"))) == []


def test_every_bad_option_is_named():
    found = inputs.collect(run.input_checks(dict(PARAMS, name="LLM", label_selector="a==b==c", namespace="ML",
                                                 device_class="GPU", claim_name="Claim!", timeout=0)))
    assert [problem.split(" ")[0] for problem in found] == ["name", "label_selector", "namespace", "device_class",
                                                            "claim_name", "timeout"]


# ----- one workload: the result or the failure ---------------------------------------------------

class Scripted:
    """A Migration whose three ways each return or raise what the test gives."""

    label = "Deployment ml/llm"

    def __init__(self, outcome):
        self.outcome, self.called = outcome, []

    def _do(self, name, *args):
        self.called.append((name,) + args)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return dict(self.outcome)

    def migrate(self, check_mode, now):
        return self._do("migrate", check_mode, now)

    def revert(self, check_mode):
        return self._do("revert", check_mode)

    def on_extended_resource(self, device_class):
        return self._do("on_extended_resource", device_class)


PATH = {"available": True, "device_class": "gpu.nvidia.com", "reason": "served"}


@pytest.mark.parametrize("state, method, call", [
    ("migrated", "claim", ("migrate", False, "now")),
    ("migrated", "extended_resource", ("on_extended_resource", "gpu.nvidia.com")),
    ("reverted", "claim", ("revert", False)),
    ("reverted", "extended_resource", ("revert", False)),
])
def test_one_runs_the_way_the_state_and_method_ask_for(state, method, call):
    migration = Scripted({"changed": True})
    passed, _result = run.one(migration, dict(PARAMS, state=state, method=method), False, True, "now", PATH)
    assert passed and migration.called == [call]


def test_one_drops_the_diff_unless_asked_for():
    assert run.one(Scripted({"changed": True, "diff": {}}), PARAMS, False, False, "now", PATH) == (True, {"changed": True})
    assert run.one(Scripted({"changed": True, "diff": {}}), PARAMS, False, True, "now", PATH)[1]["diff"] == {}


def test_a_refusal_names_the_workload_and_changed_tells_whether_earlier_ones_moved():
    passed, result = run.one(Scripted(wm.MigrationRefused("it asks for no GPU")), PARAMS, False, True, "now", PATH)
    assert not passed and result == {"msg": "Deployment ml/llm: it asks for no GPU", "changed": False,
                                     "extended_resource": PATH}
    done = [{"name": "a", "changed": True}]
    passed, result = run.one(Scripted(wm.MigrationRefused("x")), PARAMS, False, True, "now", PATH, done)
    assert result["changed"] is True and result["workloads"] == done


def test_a_failed_rollout_is_a_change_with_what_was_put_back():
    failed = run.MigrationFailed("the rollout did not succeed", rolled_back=True, rollback={"state": "done"})
    passed, result = run.one(Scripted(failed), PARAMS, False, True, "now", PATH)
    assert not passed and result == {"msg": "the rollout did not succeed", "changed": True, "rolled_back": True,
                                     "rollback": {"state": "done"}, "extended_resource": PATH}


def test_an_api_error_gives_the_servers_message():
    passed, result = run.one(Scripted(refused(403, "deployments is forbidden")), PARAMS, False, True, "now", PATH)
    assert not passed and result["msg"] == "Deployment ml/llm: the API server answered: deployments is forbidden"
    assert result["changed"] is False


# ----- the extended-resource path and the workloads a selector matches ----------------------------

def test_the_extended_resource_path_is_read_or_said_to_be_unknown(monkeypatch):
    monkeypatch.setattr(run.extended_resource, "availability", lambda kube: PATH)
    assert run.extended_resource_path("kube") == PATH

    def fails(kube):
        raise refused(403, "apis is forbidden")
    monkeypatch.setattr(run.extended_resource, "availability", fails)
    assert run.extended_resource_path("kube") == {
        "available": None, "device_class": None,
        "reason": "could not tell whether the API server keeps extendedResourceName: apis is forbidden"}


class ListingKube:
    def __init__(self, names):
        self.names, self.asked = names, []

        class Apps:
            def __getattr__(self, name):
                return name
        self.apps = Apps()

    def list_all(self, list_fn, **kwargs):
        self.asked.append((list_fn, kwargs))
        return [{"metadata": {"name": n}} for n in self.names], "1"


@pytest.mark.parametrize("kind, call", [("Deployment", "list_namespaced_deployment"),
                                        ("StatefulSet", "list_namespaced_stateful_set"),
                                        ("DaemonSet", "list_namespaced_daemon_set")])
def test_names_matching_lists_the_kind_in_the_namespace_sorted(kind, call):
    kube = ListingKube(["b", "a"])
    assert run.names_matching(kube, dict(PARAMS, kind=kind, label_selector="app=x")) == ["a", "b"]
    assert kube.asked == [(call, {"namespace": "ml", "label_selector": "app=x"})]


def test_names_matching_refuses_kinds_without_a_rollout():
    with pytest.raises(wm.MigrationRefused, match="Job cannot be migrated in place"):
        run.names_matching(ListingKube([]), dict(PARAMS, kind="Job"))


# ----- run_module ------------------------------------------------------------------------------

@pytest.fixture
def scripted(monkeypatch):
    """run_module with the path, the selector's names and each workload's outcome given."""
    def install(path=None, names=(), outcomes=None):
        path = PATH if path is None else path
        monkeypatch.setattr(run, "extended_resource_path", lambda kube: path)
        monkeypatch.setattr(run, "names_matching", lambda kube, params: list(names))
        made = []

        def migration(kube, params):
            made.append(params["name"])
            moved = {"changed": True, "message": "%s moved" % params["name"], "report": ["r-%s" % params["name"]]}
            return Scripted((outcomes or {}).get(params["name"], moved))
        monkeypatch.setattr(run, "Migration", migration)
        return made
    return install


def test_an_unavailable_extended_resource_path_changes_nothing(scripted):
    made = scripted(path={"available": False, "device_class": None, "reason": "the server drops the field"})
    passed, result = run.run_module("kube", dict(PARAMS, method="extended_resource"), False, False)
    assert not passed and made == []
    assert result["msg"] == ("the extended-resource path is not available: the server drops the field. "
                             "Nothing was changed.")


def test_a_named_workload_is_migrated_alone_with_the_path_reported(scripted):
    made = scripted()
    passed, result = run.run_module("kube", PARAMS, False, False)
    assert passed and made == ["llm"] and result["extended_resource"] == PATH and result["message"] == "llm moved"


def test_a_selector_migrates_each_match_in_order_and_reports_them_all(scripted):
    made = scripted(names=["a", "b"], outcomes={"a": {"changed": False, "message": "a stays"}})
    passed, result = run.run_module("kube", dict(PARAMS, name=None, label_selector="app=x"), False, False)
    assert passed and made == ["a", "b"]
    assert result["changed"] is True and result["report"] == ["a stays", "b moved", "r-b"]
    assert [w["name"] for w in result["workloads"]] == ["a", "b"]
    assert result["message"] == "2 Deployment(s) matched app=x"


def test_a_selector_stops_at_the_first_failure(scripted):
    made = scripted(names=["a", "b", "c"], outcomes={"b": wm.MigrationRefused("no GPU")})
    passed, result = run.run_module("kube", dict(PARAMS, name=None, label_selector="app=x"), False, False)
    assert not passed and made == ["a", "b"]
    assert result["changed"] is True and [w["name"] for w in result["workloads"]] == ["a"]


def test_a_selector_over_a_kind_without_a_rollout_is_refused(monkeypatch, scripted):
    scripted()

    def names(kube, params):
        raise wm.MigrationRefused("Job cannot be migrated in place")
    monkeypatch.setattr(run, "names_matching", names)
    passed, result = run.run_module("kube", dict(PARAMS, name=None, label_selector="app=x", kind="Job"), False, False)
    assert not passed and result == {"msg": "Job cannot be migrated in place", "extended_resource": PATH}


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

"""workload_migration_module_run.py: the module's options, one workload's result or failure, and
the workloads a label selector matches, each migrated in turn, over scripted migrations."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_module_run as run
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException


def refused(status, message="denied by policy"):
    exc = ApiException(status=status)
    exc.body = '{"message": "%s"}' % message
    return exc


# ----- the module's options ---------------------------------------------------------------------

PARAMS = {"kind": "Deployment", "name": "llm", "label_selector": None, "namespace": "ml", "state": "migrated",
          "device_class": "gpu.nvidia.com", "claim_mode": "template", "claim_name": None, "timeout": 300,
          "method": "claim"}


def test_good_options_pass_and_unset_optional_ones_are_not_checked():
    assert run.input_problems(PARAMS) == []
    assert run.input_problems(dict(PARAMS, name=None, label_selector="app=llm")) == []


def test_every_bad_option_is_named():
    found = run.input_problems(dict(PARAMS, name="LLM", label_selector="a==b==c", namespace="ML",
                                    device_class="GPU", claim_name="Claim!", timeout=0))
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

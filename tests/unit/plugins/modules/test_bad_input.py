"""Every module refuses bad input before it reads anything: client.kube_module runs each module's
checks first, so a wrong value fails fast with its name, even where no cluster is reachable.

The kubeconfig points at a file that does not exist: a module that tried to connect before its
checks would fail on that instead, and the message asserted here would not appear."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import json

import pytest

from ansible.module_utils.testing import patch_module_args

NO_CLUSTER = {"kubeconfig": "/nonexistent/kubeconfig"}

CASES = [
    ("api_ready", {"timeout": 0}, "timeout must be a positive number"),
    ("claim_smoke_check", {"namespace": "Bad_NS"}, "namespace"),
    ("device_class", {"name": "Not_A_Name"}, "name is 'Not_A_Name'"),
    ("device_plugin_drain", {"nodes": ["a", "a"], "timeout": 30}, "nodes"),
    ("dra_readiness", {"min_version": "1.3x"}, "min_version"),
    ("gpu_manager_wait", {"state": "dra_gone", "nodes": ["a", "a"]}, "nodes"),
    ("gpu_fit", {"workloads": [{"name": "w", "gpus": "lots"}]}, "workloads"),
    ("gpu_operator_plan", {"version": "26.3", "check_charts": False}, "version is '26.3', which is not a chart version"),
    ("gpu_operator_plan", {"version": "v26.3.1", "helm_timeout": 0}, "helm_timeout"),
    ("gpu_usage_info", {"driver": "Not A Driver"}, "driver"),
    ("gpu_workload_info", {"driver": "Not A Driver"}, "driver"),
    ("gpu_workload_migrate", {"name": "web", "namespace": "Bad_NS"}, "namespace"),
    ("mig_layout", {"nodes": [], "layout": "all-1g.10gb"}, "nodes"),
    ("node_wait", {"names": ["n1"], "kubelet_version": "one.35"}, "kubelet_version"),
    ("resource_slice_info", {"node_selector": "a in (b"}, "node_selector"),
    ("resource_slice_wait", {"driver": "gpu.nvidia.com", "timeout": -1}, "timeout"),
    ("upgrade_plan", {"target": "1.35.x"}, "target"),
]


def run_main(name, args):
    module = importlib.import_module("ansible_collections.dra.gpu.plugins.modules." + name)
    with patch_module_args(dict(NO_CLUSTER, **args)):
        with pytest.raises(SystemExit) as exited:
            module.main()
    return exited.value.code


@pytest.mark.parametrize("name,args,named", CASES, ids=["%s-%s" % (c[0], sorted(c[1])[0]) for c in CASES])
def test_bad_input_fails_before_the_module_connects(name, args, named, capsys):
    assert run_main(name, args) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True
    assert named in result["msg"]
    assert "kubeconfig" not in result["msg"]


def test_good_input_goes_on_to_connect_and_names_the_missing_kubeconfig(capsys):
    # The same wiring, past the checks: the missing kubeconfig is what fails now.
    assert run_main("node_wait", {"names": ["n1"]}) == 1
    result = json.loads(capsys.readouterr().out)
    assert "kubeconfig" in result["msg"] and "does not exist" in result["msg"]


def failed_problems(name, args, capsys):
    assert run_main(name, args) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["msg"] == "; ".join(result["problems"])
    return result["problems"]


def test_every_problem_is_listed_in_the_order_of_the_checks(capsys):
    problems = failed_problems("resource_slice_wait", {"driver": "gpu.nvidia.com", "timeout": 0, "min_devices": 0,
                                                       "min_devices_per_node": 0, "nodes": ["a", "a"]}, capsys)
    assert [p.split(" ", 1)[0] for p in problems] == ["timeout", "min_devices", "min_devices_per_node", "nodes"]
    problems = failed_problems("node_wait", {"names": ["n1", "n1"], "timeout": 0, "kubelet_version": "one.35"}, capsys)
    assert [p.split(" ", 1)[0] for p in problems] == ["timeout", "names", "kubelet_version"]


@pytest.mark.parametrize("name,args", [
    ("mig_layout", {"state": "absent", "nodes": [], "timeout": 0}),
    ("resource_slice_wait", {"driver": "gpu.nvidia.com", "timeout": 0}),
    ("gpu_maintenance", {"state": "in_service", "timeout": 0}),
], ids=["mig_layout-absent", "resource_slice_wait-no-min_devices", "gpu_maintenance-no-reason"])
def test_checks_that_do_not_apply_are_skipped(name, args, capsys):
    # Only the timeout is wrong: nodes for state absent, an unset min_devices or reason are not checked.
    problems = failed_problems(name, args, capsys)
    assert len(problems) == 1 and problems[0].startswith("timeout")


def test_gpu_maintenance_checks_the_reason_and_the_gpus_to_take_out(capsys):
    problems = failed_problems("gpu_maintenance", {"uuids": ["GPU-1", "GPU-1"], "reason": "not a label"}, capsys)
    assert [p.split(" ", 1)[0] for p in problems] == ["uuids", "reason"]
    problems = failed_problems("gpu_maintenance", {"reason": "repair"}, capsys)
    assert problems == ["state out_of_service needs the GPUs to take out: devices, uuids or selector"]

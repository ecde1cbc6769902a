"""`module_defaults: {group/dra.gpu.k8s: ...}` reaches the report's and the packing check's modules
(issue 32: gpu_usage_info was missing from meta/runtime.yml's action group, so
playbooks/report.yml used the environment's connection instead of the play's). Here the
environment's KUBECONFIG names a file that does not exist and only module_defaults names the
lab's: a module the group does not reach fails on that file. tests/collection/test_catalogue.py
keeps the group and the modules' connection options in step."""

import os

from conftest import run_playbook, task_results


def test_module_defaults_reach_gpu_usage_info_and_gpu_packing_check(tmp_path):
    play = {"hosts": "localhost", "gather_facts": False, "connection": "local",
            "module_defaults": {"group/dra.gpu.k8s": {"kubeconfig": os.environ["KUBECONFIG"]}},
            "tasks": [
                {"name": "usage", "dra.gpu.gpu_usage_info": {}},
                # Check mode plans only; whatever it says of the lab's classes, it must have connected.
                {"name": "packing", "dra.gpu.gpu_packing_check": {
                    "device_class": "it-module-defaults-none", "workloads": [{"name": "w", "memory": "8Gi"}]},
                 "check_mode": True, "ignore_errors": True}]}
    rc, report, stderr = run_playbook([play], env={"KUBECONFIG": str(tmp_path / "no-such-kubeconfig")})
    results = dict(task_results(report))
    assert rc == 0 and not results["usage"].get("failed"), (results, stderr[-2000:])
    assert "nodes" in results["usage"] or "devices" in results["usage"], sorted(results["usage"])
    packing = str(results["packing"].get("msg", ""))
    assert "no-such-kubeconfig" not in packing and "KUBECONFIG" not in packing, packing

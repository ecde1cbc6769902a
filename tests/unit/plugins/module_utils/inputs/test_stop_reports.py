from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import stop_reports

PLAN = {"node_patches": [{"node": "gpu-1", "step": "device_plugin_off"}, {"node": "gpu-1", "step": "dra"},
                         {"node": "gpu-2", "step": "dra"}],
        "releases": [{"name": "gpu-operator"}, {"name": "nvidia-dra-driver-gpu"}]}


def labelled(*nodes, **changed):
    return {"results": [{"item": {"node": n}, "changed": changed.get(n, True)} for n in nodes]}


def test_operator_stopped_in_the_helm_loop_names_what_was_done_and_what_was_not():
    failed = {"msg": "One or more items failed", "results": [
        {"item": {"name": "gpu-operator"}, "status": {"status": "deployed"}},
        {"item": {"name": "nvidia-dra-driver-gpu"}, "failed": True, "msg": "  chart refused the values  "}]}
    message = stop_reports.operator_stopped("Install the charts", failed, PLAN,
                                            [labelled("gpu-1"), labelled("gpu-1", "gpu-2", **{"gpu-2": False})], failed)
    assert message == (
        'gpu_operator stopped at "Install the charts": chart refused the values. Node labels changed: gpu-1, gpu-1; '
        "not changed: gpu-2. Releases installed: gpu-operator; not installed: nvidia-dra-driver-gpu. Fix the cause and "
        "run again (what is done reports no change), or undo with gpu_operator_state=absent.")


def test_operator_stopped_before_any_change_says_none_done():
    message = stop_reports.operator_stopped("Check the node labels", {"msg": "refused"}, PLAN, [{}, {"skipped": True}], {})
    assert ': refused. Node labels changed: none; not changed: gpu-1, gpu-2. Releases installed: none; not ' \
        "installed: gpu-operator, nvidia-dra-driver-gpu." in message


def test_classes_stopped_names_each_failed_class_and_what_was_applied_and_pruned():
    listed = [{"name": "good"}, {"name": "same"}, {"name": "bad"}, {"name": "later"}]
    applied = {"msg": "One or more items failed", "results": [
        {"item": {"name": "good"}, "changed": True, "failed": False},
        {"item": {"name": "same"}, "changed": False},
        {"item": {"name": "bad"}, "failed": True, "msg": "selector does not compile"}]}
    pruned = {"results": [{"item": "old", "changed": True}, {"item": "kept", "changed": False}]}
    message = stop_reports.classes_stopped("Apply the DeviceClasses", applied, listed, applied, pruned)
    assert message == (
        'device_classes stopped at "Apply the DeviceClasses": One or more items failed (bad: selector does not '
        "compile). Applied: good, same (good changed). Not applied: bad, later. Removed: old. Run the role again once "
        "the cause is fixed: finished classes report no change.")


def test_classes_stopped_outside_a_loop():
    message = stop_reports.classes_stopped("Find the classes this role created", {"msg": "403 Forbidden"},
                                           [{"name": "a"}], {"results": [{"item": {"name": "a"}, "changed": True}]}, {})
    assert message.startswith('device_classes stopped at "Find the classes this role created": 403 Forbidden. '
                              "Applied: a (a changed). Not applied: none. Removed: none.")

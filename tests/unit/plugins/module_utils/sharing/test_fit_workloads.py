from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs.inputs import InputError
from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_workloads


@pytest.mark.parametrize("workloads, message", [
    ([{"name": "a", "memory": "4Gi"}, {"name": "b", "memory": "4GB"}],
     "workloads[1].memory is '4GB', which is not a Kubernetes quantity; write 4Gi or 4G"),
    ([{"name": "a", "memory": "512 mib"}],
     "workloads[0].memory is '512 mib', which is not a Kubernetes quantity; write 512Mi"),
    ([{"name": "a", "memory": "lots"}],
     "workloads[0].memory is 'lots', which is not a Kubernetes quantity; write a number with a unit, e.g. 4Gi, "
     "4096Mi or 4G"),
    ([{"name": "a", "memory": 4}],
     "workloads[0].memory is 4, which Kubernetes reads as less than 1Mi; write it with a unit, e.g. 4Gi"),
    ([{"name": "a"}], "workloads[0].memory is missing; set the GPU memory one replica needs, e.g. 4Gi (or default: "
                      "a claim with no memory request)"),
    ([{"name": "a", "memory": "4Gi", "device_class": "Bad_Class"}],
     "workloads[0].device_class is 'Bad_Class', which is not a valid DeviceClass name: use lowercase letters, digits, "
     "'-' and '.', starting and ending with a letter or digit (e.g. gpu.example.com)"),
    ([{"name": "a", "memory": "0"}],
     "workloads[0].memory is 0; a replica needs more than 0 bytes of GPU memory, e.g. 4Gi"),
    ([{"memory": "4Gi"}], "workloads[0].name is missing; give each workload a name, e.g. web"),
    ([{"name": 7, "memory": "4Gi"}], "workloads[0].name is 7; give each workload a name, e.g. web"),
    ([{"name": "a", "memory": "4Gi", "replicas": 0}],
     "workloads[0].replicas is 0; it must be at least 1 (pods of this workload)"),
    ([{"name": "a", "memory": "4Gi", "replica": 3}],
     "workloads[0] has replica, which it does not know; use name, replicas, memory, model, device_class"),
    ([{"name": "a", "memory": "4Gi", "model": ""}],
     "workloads[0].model is ''; write part of the GPU's product name, e.g. L4 or A100, or leave it out for any model"),
    ([{"name": "a", "memory": "4Gi"}, {"name": "a", "memory": "8Gi"}],
     "workloads names a more than once; each workload name must appear once (remove or rename the repeated one)"),
    (["a"], "workloads[0] is 'a'; each workload is a mapping with name, memory, and optionally replicas and model, "
            "e.g. {name: web, memory: 4Gi, replicas: 2}"),
    ([], "workloads is []; list at least one workload, e.g. [{name: web, memory: 4Gi, replicas: 2}]"),
])
def test_bad_workloads_are_refused_with_the_field_and_the_fix(workloads, message):
    with pytest.raises(InputError) as caught:
        fit_workloads.parse_workloads(workloads)
    assert str(caught.value) == message


def test_every_problem_is_reported_at_once():
    problems = fit_workloads.input_problems([{"name": "a", "memory": "4GB", "replicas": -1}])
    assert problems == ["workloads[0].replicas is -1; it must be at least 1 (pods of this workload)",
                        "workloads[0].memory is '4GB', which is not a Kubernetes quantity; write 4Gi or 4G"]


def test_a_reason_names_the_model_and_the_device_class_only_when_given():
    given = {"model": "L4", "device_class": "l4"}
    assert fit_workloads.of_model(given) + fit_workloads.of_class(given) == " of model L4 of DeviceClass l4"
    assert fit_workloads.of_model({"model": None}) + fit_workloads.of_class({"model": None}) == ""

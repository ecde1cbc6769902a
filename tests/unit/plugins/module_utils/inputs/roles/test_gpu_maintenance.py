from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import gpu_maintenance


def test_taking_gpus_out_of_service_needs_one_chosen():
    assert gpu_maintenance.problems({"gpu_maintenance_timeout": 300}, []) == [
        "gpu_maintenance_state is out_of_service but no GPU is chosen: set gpu_maintenance_devices "
        "(e.g. [{node: node-b, device: gpu-2}]), gpu_maintenance_uuids or gpu_maintenance_selector"]
    assert gpu_maintenance.problems({"gpu_maintenance_state": "in_service", "gpu_maintenance_timeout": 300}, []) == []


@pytest.mark.parametrize("chosen", [{"gpu_maintenance_devices": [{"node": "node-b", "device": "gpu-2"}]},
                                    {"gpu_maintenance_uuids": ["GPU-1"]},
                                    {"gpu_maintenance_selector": "device.attributes['gpu.nvidia.com'].index == 2"}])
def test_any_one_way_of_choosing_is_enough(chosen):
    assert gpu_maintenance.problems(dict(chosen, gpu_maintenance_timeout=300), []) == []


def test_the_wait_and_the_reason_are_checked_in_order():
    found = gpu_maintenance.problems({"gpu_maintenance_state": "in_service", "gpu_maintenance_timeout": 0,
                                      "gpu_maintenance_reason": "fan failing"}, [])
    assert len(found) == 2
    assert found[0].startswith("gpu_maintenance_timeout is 0")
    assert found[1].startswith("gpu_maintenance_reason sets the taint's value to 'fan failing', which is not a label value")
    assert gpu_maintenance.problems({"gpu_maintenance_state": "in_service", "gpu_maintenance_timeout": 300,
                                     "gpu_maintenance_reason": "fan-failing"}, []) == []

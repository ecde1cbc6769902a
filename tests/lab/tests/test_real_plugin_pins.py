"""Device entries NVIDIA's real gpu-kubelet-plugin published in a make real-plugin run
(2026-12-06, Kubernetes 1.37.2, NVIDIA's mock NVML set to the simulator's figures; v0.4.1 and
main 95932046 treated as 0.5.0), pinned here so that CI, which has no checkout of NVIDIA's code,
keeps the simulator publishing the same: every field, key, type and value."""

import pytest

from labctl.apiserver.sim import gpus
from labctl.realplugin import compare

# (node, model, GPUs on the node, ConsumableShares mode or None, plugin 0.5.0 or later,
#  the real plugin's last device of the node, as the API server stored it)
REAL = [
    ('gpu-h100', 'H100-80GB', 2, 'memory', True,
     {'allowMultipleAllocations': True,
      'attributes': {'architecture': {'string': 'Hopper'},
                     'brand': {'string': 'Nvidia'},
                     'cudaComputeCapability': {'version': '9.0.0'},
                     'cudaDriverVersion': {'version': '13.0.0'},
                     'driverVersion': {'version': '580.126.20'},
                     'productName': {'string': 'NVIDIA H100 80GB HBM3'},
                     'resource.kubernetes.io/numaNode': {'int': 0},
                     'resource.kubernetes.io/pciBusID': {'string': '0000:20:00.0'},
                     'resource.kubernetes.io/pcieRoot': {'string': 'pci0000:1f'},
                     'type': {'string': 'gpu'},
                     'uuid': {'string': 'GPU-206c4af2-1fba-5a0d-8eb5-d4c039bc64b2'}},
      'capacity': {'memory': {'requestPolicy': {'default': '81559Mi',
                                                'validRange': {'max': '81559Mi', 'min': '1Mi', 'step': '1Mi'}},
                              'value': '81559Mi'}},
      'name': 'gpu-1'}),
    ('node-b', 'L4', 4, None, False,
     {'attributes': {'architecture': {'string': 'Ada Lovelace'},
                     'brand': {'string': 'Nvidia'},
                     'cudaComputeCapability': {'version': '8.9.0'},
                     'cudaDriverVersion': {'version': '13.0.0'},
                     'driverVersion': {'version': '580.126.20'},
                     'productName': {'string': 'NVIDIA L4'},
                     'resource.kubernetes.io/pciBusID': {'string': '0000:40:00.0'},
                     'resource.kubernetes.io/pcieRoot': {'string': 'pci0000:3f'},
                     'type': {'string': 'gpu'},
                     'uuid': {'string': 'GPU-ee0e7174-4c68-50cf-a7ae-4946c507f251'}},
      'capacity': {'memory': {'value': '23034Mi'}},
      'name': 'gpu-3'}),
    ('node-a', 'A10', 2, 'unlimited', True,
     {'allowMultipleAllocations': True,
      'attributes': {'architecture': {'string': 'Ampere'},
                     'brand': {'string': 'Nvidia'},
                     'cudaComputeCapability': {'version': '8.6.0'},
                     'cudaDriverVersion': {'version': '13.0.0'},
                     'driverVersion': {'version': '580.126.20'},
                     'productName': {'string': 'NVIDIA A10'},
                     'resource.kubernetes.io/numaNode': {'int': 0},
                     'resource.kubernetes.io/pciBusID': {'string': '0000:20:00.0'},
                     'resource.kubernetes.io/pcieRoot': {'string': 'pci0000:1f'},
                     'type': {'string': 'gpu'},
                     'uuid': {'string': 'GPU-46c80926-c66e-52f4-959d-0f85365ced80'}},
      'capacity': {'memory': {'requestPolicy': {'default': '0',
                                                'validRange': {'max': '23028Mi', 'min': '0', 'step': '1Mi'}},
                              'value': '23028Mi'}},
      'name': 'gpu-1'}),
    ('node-a', 'A10', 2, None, True,
     {'attributes': {'architecture': {'string': 'Ampere'},
                     'brand': {'string': 'Nvidia'},
                     'cudaComputeCapability': {'version': '8.6.0'},
                     'cudaDriverVersion': {'version': '13.0.0'},
                     'driverVersion': {'version': '580.126.20'},
                     'productName': {'string': 'NVIDIA A10'},
                     'resource.kubernetes.io/numaNode': {'int': 0},
                     'resource.kubernetes.io/pciBusID': {'string': '0000:20:00.0'},
                     'resource.kubernetes.io/pcieRoot': {'string': 'pci0000:1f'},
                     'type': {'string': 'gpu'},
                     'uuid': {'string': 'GPU-46c80926-c66e-52f4-959d-0f85365ced80'}},
      'capacity': {'memory': {'value': '23028Mi'}},
      'name': 'gpu-1'}),
]


@pytest.mark.parametrize("node,model,count,mode,release_05,real", REAL)
def test_the_simulator_publishes_what_nvidias_plugin_published(node, model, count, mode, release_05, real):
    groups = [{"model": model, "count": count}]
    devices = gpus.driver_devices(gpus.node_devices(node, groups), groups, mode, numa=release_05)
    sim = [d for d in devices if d["name"] == real["name"]]
    assert compare.device_differences(node, [real], sim) == []

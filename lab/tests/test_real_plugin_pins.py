"""Device entries NVIDIA's real gpu-kubelet-plugin published in a make real-plugin run
(2026-12-06, Kubernetes 1.37.2, NVIDIA's mock NVML set to the simulator's figures; v0.4.1 and
main 95932046 treated as 0.5.0), pinned here so that CI, which has no checkout of NVIDIA's code,
keeps the simulator publishing the same: every field, key, type and value."""

import pytest

from labctl.apiserver.sim import gpus
from labctl.realplugin import compare

# What every entry of the run carried alike: the mock NVML's driver and CUDA versions.
COMMON = {'brand': {'string': 'Nvidia'}, 'cudaDriverVersion': {'version': '13.0.0'},
          'driverVersion': {'version': '580.126.20'}, 'type': {'string': 'gpu'}}
# Per model: architecture, cudaComputeCapability, productName.
MODELS = {'H100-80GB': ('Hopper', '9.0.0', 'NVIDIA H100 80GB HBM3'),
          'L4': ('Ada Lovelace', '8.9.0', 'NVIDIA L4'),
          'A10': ('Ampere', '8.6.0', 'NVIDIA A10')}

# (node, the device's model, the node's GPUs as (model, count) groups, ConsumableShares mode or None,
#  plugin 0.5.0 or later, a device of the real plugin's: its name, uuid, pciBusID, pcieRoot and capacity).
# The plugin added allowMultipleAllocations in every mode, numaNode (0 here) from 0.5.0 on.
REAL = [
    ('gpu-h100', 'H100-80GB', [('H100-80GB', 2)], 'memory', True, 'gpu-1', 'GPU-206c4af2-1fba-5a0d-8eb5-d4c039bc64b2',
     '0000:20:00.0', 'pci0000:1f',
     {'memory': {'requestPolicy': {'default': '81559Mi', 'validRange': {'max': '81559Mi', 'min': '1Mi', 'step': '1Mi'}},
                 'value': '81559Mi'}}),
    ('node-b', 'L4', [('L4', 4)], None, False, 'gpu-3', 'GPU-ee0e7174-4c68-50cf-a7ae-4946c507f251',
     '0000:40:00.0', 'pci0000:3f',
     {'memory': {'value': '23034Mi'}}),
    ('node-a', 'A10', [('A10', 2)], 'unlimited', True, 'gpu-1', 'GPU-46c80926-c66e-52f4-959d-0f85365ced80',
     '0000:20:00.0', 'pci0000:1f',
     {'memory': {'requestPolicy': {'default': '0', 'validRange': {'max': '23028Mi', 'min': '0', 'step': '1Mi'}},
                 'value': '23028Mi'}}),
    ('node-a', 'A10', [('A10', 2)], None, True, 'gpu-1', 'GPU-46c80926-c66e-52f4-959d-0f85365ced80',
     '0000:20:00.0', 'pci0000:1f',
     {'memory': {'value': '23028Mi'}}),
    # The node the Go stand-in plugin is compared on too (lab/go/labgpu/realplugin_test.go).
    ('gpu-shared', 'L4', [('A10', 1), ('L4', 1)], '4', True, 'gpu-1', 'GPU-cc7a1824-4365-50c6-b8c1-ccd7c1be9efc',
     '0000:20:00.0', 'pci0000:1f',
     {'memory': {'requestPolicy': {'default': '0', 'validRange': {'max': '23034Mi', 'min': '0', 'step': '1Mi'}},
                 'value': '23034Mi'},
      'shares': {'requestPolicy': {'default': '1', 'validRange': {'max': '4', 'min': '1', 'step': '1'}}, 'value': '4'}}),
]


def real_entry(model, mode, release_05, name, uuid, bus, root, capacity):
    """The entry as the API server stored it."""
    architecture, compute, product = MODELS[model]
    attributes = dict(COMMON, architecture={'string': architecture}, cudaComputeCapability={'version': compute},
                      productName={'string': product}, uuid={'string': uuid})
    attributes['resource.kubernetes.io/pciBusID'] = {'string': bus}
    attributes['resource.kubernetes.io/pcieRoot'] = {'string': root}
    if release_05:
        attributes['resource.kubernetes.io/numaNode'] = {'int': 0}
    entry = {'attributes': attributes, 'capacity': capacity, 'name': name}
    if mode:
        entry['allowMultipleAllocations'] = True
    return entry


@pytest.mark.parametrize("node,model,groups,mode,release_05,name,uuid,bus,root,capacity", REAL)
def test_the_simulator_publishes_what_nvidias_plugin_published(node, model, groups, mode, release_05, name, uuid, bus,
                                                               root, capacity):
    real = real_entry(model, mode, release_05, name, uuid, bus, root, capacity)
    groups = [{"model": group, "count": count} for group, count in groups]
    devices = gpus.driver_devices(gpus.node_devices(node, groups), groups, mode, numa=release_05)
    sim = [d for d in devices if d["name"] == name]
    assert compare.device_differences(node, [real], sim) == []

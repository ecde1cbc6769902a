from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_wait
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia


def test_kubelet_plugin_names_follow_the_chart_name():
    assert nvidia.kubelet_plugin_daemonset(nvidia.DRA_CHART) == "dra-driver-nvidia-gpu-kubelet-plugin"
    assert nvidia.kubelet_plugin_daemonset(nvidia.OLD_DRA_CHART) == "nvidia-dra-driver-gpu-kubelet-plugin"
    assert nvidia.kubelet_plugin_pod_selector(nvidia.DRA_CHART) == "dra-driver-nvidia-gpu-component=kubelet-plugin"


def test_the_plan_and_the_slice_wait_look_for_the_same_kubelet_plugin_pods():
    # resource_slice_wait's default selectors must find the pods of either chart the plan installs.
    for chart in (nvidia.DRA_CHART, nvidia.OLD_DRA_CHART):
        releases = [{}, {"namespace": "dra", "chart": chart, "values": {}}]
        assert gov.plugin_location(releases, "standalone")["pod_selector"] in slice_wait.DEFAULT_PLUGIN_POD_SELECTORS
    assert set(catalog.DRA_DRIVER_MINORS.values()) == {nvidia.DRA_CHART, nvidia.OLD_DRA_CHART}


def test_gpu_node_selector_is_gpu_feature_discoverys_label():
    assert nvidia.GPU_NODE_SELECTOR == "nvidia.com/gpu.present=true"

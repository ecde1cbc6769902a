# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names NVIDIA's charts and drivers put on the cluster, written once.

Several modules read or set the same labels and selectors; when NVIDIA renames one (as the DRA
chart was renamed at v0.4), this is the one place to change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The DRA driver's name: on its ResourceSlices, in its opaque configs, and the DeviceClass its chart creates.
DRA_DRIVER = "gpu.nvidia.com"
# The extended resource NVIDIA's device plugin advertises.
DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"
# GPU Feature Discovery's node label, and the selector of GPU nodes built on it.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
GPU_NODE_SELECTOR = GPU_PRESENT_LABEL + "=true"
# The DRA chart's kubelet plugin runs on nodes with this label set to "true".
DRA_NODE_LABEL = "nvidia.com/dra-kubelet-plugin"
# The GPU Operator leaves the device plugin off a node with this label set to "false".
DEVICE_PLUGIN_NODE_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# The DRA driver chart under its name from v0.4 on, and under its old name (up to v25.12).
DRA_CHART = "dra-driver-nvidia-gpu"
OLD_DRA_CHART = "nvidia-dra-driver-gpu"
# Both DRA charts name the kubelet plugin's DaemonSet "<chart name or nameOverride>-kubelet-plugin".
KUBELET_PLUGIN_SUFFIX = "-kubelet-plugin"


def kubelet_plugin_daemonset(name):
    """The kubelet plugin DaemonSet of a DRA chart named (or nameOverridden) ``name``."""
    return name + KUBELET_PLUGIN_SUFFIX


def kubelet_plugin_pod_selector(name):
    """The label selector of that DaemonSet's pods: the chart labels them after its name too."""
    return "%s-component=kubelet-plugin" % name

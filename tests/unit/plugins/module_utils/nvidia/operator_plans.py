# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plans the gpu_operator test files ask for, on GPU nodes as Node Feature Discovery labels them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov

GPU_NODES = ["node-a", "node-b"]
UBUNTU_22_04 = {images.OS_ID_LABEL: "ubuntu", images.OS_VERSION_LABEL: "22.04"}


def plan(version, mode="auto", **kwargs):
    kwargs.setdefault("gpu_nodes", GPU_NODES)
    # GPU nodes as Node Feature Discovery labels them, so the driver image's tag is known.
    kwargs.setdefault("gpu_node_labels", {name: UBUNTU_22_04 for name in kwargs["gpu_nodes"]})
    return gov.plan(version, mode, **kwargs)

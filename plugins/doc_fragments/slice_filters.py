# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  driver:
    description:
      - Only devices of this DRA driver, for example V(gpu.nvidia.com).
    type: str
  nodes:
    description:
      - Only devices local to these nodes.
    type: list
    elements: str
  node_selector:
    description:
      - Only devices local to nodes matching this label selector, for example V(nvidia.com/gpu.present=true).
      - Combined with O(nodes), a node must satisfy both.
    type: str
  pool:
    description:
      - Only devices of this resource pool. NVIDIA's driver names each node's pool after the node.
    type: str
notes:
  - Only the newest generation of each pool counts, and only when all of its slices are published
    (C(resourceSliceCount)), as the scheduler does. Pools left out are listed in RV(ignored_pools).
"""

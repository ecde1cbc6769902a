# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kubeconfig and module parameters as the connection test files use them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_settings

KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "lab",
              "clusters": [{"name": "lab", "cluster": {"server": "https://10.0.0.1:6443"}}],
              "users": [{"name": "admin", "user": {"token": "t"}}],
              "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "admin"}}]}


def params(**values):
    base = dict((name, None) for name in connection_settings.ENVIRONMENT)
    base.update(values)
    return base

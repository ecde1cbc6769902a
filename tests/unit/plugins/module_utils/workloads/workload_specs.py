# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod templates and Deployments as the workload_migration test files write them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def container(name="main", gpus=None, **extra):
    resources = {"limits": {"nvidia.com/gpu": gpus, "memory": "1Gi"}} if gpus is not None else {}
    return dict({"name": name, "image": "vllm", "resources": resources}, **extra)


def deployment(containers, init=None, claims=None, name="llm"):
    spec = {"containers": containers, "nodeSelector": {"nvidia.com/gpu.present": "true"}}
    if init:
        spec["initContainers"] = init
    if claims:
        spec["resourceClaims"] = claims
    return {"metadata": {"name": name, "namespace": "ml", "generation": 3, "labels": {"team": "a"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}

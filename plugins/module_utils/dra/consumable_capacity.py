# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does the cluster keep consumable capacity, which memory shares of a GPU need?

NVIDIA's DRA driver 0.5.0 with its ConsumableShares gate publishes every GPU with
``allowMultipleAllocations: true`` and a request policy on ``memory``, and claims ask for
``capacity.requests.memory``. Kubernetes serves those fields only where its
DRAConsumableCapacity feature is on (its stages per version: dra_features.py). Where it is off
the API server drops them silently: from the driver's slices (the plugin logs it once and goes
on) and from every claim and template, without a warning, so that each pod gets a whole GPU and
nobody is told. Whether the server keeps them is learned from the
server itself, with a server-side dry run of a claim that asks for memory, not from its version,
because the gate can be turned on or off by hand (as extended_resource.py learns whether it keeps
extendedResourceName).

What the dry run cannot see: the gate of kube-scheduler, kube-controller-manager and the
kubelets. Where someone turned it on for the API server alone (1.34/1.35), claims keep their
requests but the scheduler does not share; the answer says so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION

FEATURE = "consumable_capacity"
GATE = dra_features.gate(FEATURE)
# A name no one uses, in a namespace every cluster has: the dry run needs no namespace of ours
# and leaves nothing behind. The device class need not exist for a claim to be validated.
PROBE_CLAIM = "dra-gpu-consumable-capacity-probe"
PROBE_NAMESPACE = "default"
PROBE_CLASS = "gpu.nvidia.com"
PROBE_MEMORY = "1Mi"
COMPONENTS = dra_features.COMPONENTS
UNSEEN = ("a server-side dry run sees only the API server: it cannot tell whether %s is on for kube-scheduler, "
          "kube-controller-manager and the kubelets, which must have it too (on by default from Kubernetes 1.%d)"
          % (GATE, dra_features.first_on(FEATURE)))


def probe_claim(namespace=PROBE_NAMESPACE):
    """The ResourceClaim the dry run creates: one request of ``PROBE_MEMORY`` memory."""
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "ResourceClaim",
            "metadata": {"name": PROBE_CLAIM, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": PROBE_CLASS, "capacity": {"requests": {"memory": PROBE_MEMORY}}}}]}}}


def keeps_capacity_requests(answer):
    """Whether the API server's answer to the dry run still carries the memory request."""
    requests = (((answer or {}).get("spec") or {}).get("devices") or {}).get("requests") or [{}]
    return bool((((requests[0].get("exactly") or {}).get("capacity") or {}).get("requests") or {}).get("memory"))


def verdict(server_version, keeps):
    """``{available, reason}``: whether memory shares can work on this cluster, and why not with
    the fix, or, when they can, what the check could not see."""
    if keeps:
        return {"available": True,
                "reason": "this API server (%s) keeps a claim's capacity requests (%s is on); %s"
                          % (server_version, GATE, UNSEEN)}
    return {"available": False,
            "reason": "this API server (%s) drops a claim's capacity requests: a server-side dry run of a "
                      "ResourceClaim asking for memory %s came back without it, so %s is off. With it off the API "
                      "server also strips allowMultipleAllocations and the request policies from NVIDIA's slices, "
                      "and every pod would get a whole GPU without an error. Memory shares use %s, which %s. "
                      "Upgrade to Kubernetes 1.%d or later (dra.gpu.cluster_upgrade), or turn the feature gate %s "
                      "on for %s"
                      % (server_version, PROBE_MEMORY, GATE, dra_features.title(FEATURE), dra_features.needs(FEATURE),
                         dra_features.first_on(FEATURE), GATE, COMPONENTS)}


def availability(kube, namespace=PROBE_NAMESPACE):
    """``verdict`` for the live cluster, from a dry-run create of ``probe_claim``; changes nothing."""
    answer = kube.custom.create_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, namespace, "resourceclaims",
                                                         probe_claim(namespace), dry_run="All")
    return verdict(kube.server_version(), keeps_capacity_requests(answer))

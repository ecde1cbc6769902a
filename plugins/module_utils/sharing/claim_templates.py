# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ResourceClaimTemplates for memory classes: rendered from gpu_sharing_claim_templates, checked,
compared with the live ones (what to delete and make again), and checked against the GPUs'
memory. Pure functions.

Each pod that names such a template gets its own claim asking ``capacity.requests.memory`` of a
class of strategy ``memory`` (:mod:`sharing_config`), and the scheduler packs those claims onto
GPUs NVIDIA's driver shares by memory (ConsumableShares).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes
from ansible_collections.dra.gpu.plugins.module_utils.sharing.opaque_config import MEBIBYTE
from ansible_collections.dra.gpu.plugins.module_utils.sharing.sharing_config import SharingConfigError

_TEMPLATE_FIELDS = {"name", "namespace", "class", "memory"}


def _template_problems(entry, where, memory_classes):
    problems = ["%s.%s is not a setting of a claim template; known: %s" % (where, key, ", ".join(sorted(_TEMPLATE_FIELDS)))
                for key in sorted(set(entry) - _TEMPLATE_FIELDS)]
    for check in (lambda: inputs.dns_subdomain(where + ".name", entry.get("name"), "ResourceClaimTemplate"),
                  lambda: inputs.dns_label(where + ".namespace", entry.get("namespace"))):
        try:
            check()
        except inputs.InputError as exc:
            problems.append(str(exc))
    if entry.get("class") not in memory_classes:
        problems.append("%s.class is %r; a claim template asks for memory from a class of strategy memory in "
                        "gpu_sharing_classes (%s)" % (where, entry.get("class"), ", ".join(memory_classes) or
                                                      "there is none: add one, e.g. {name: nvidia-gpu-memory, "
                                                      "strategy: memory}"))
    try:
        if to_bytes(str(entry.get("memory"))) < MEBIBYTE:
            problems.append("%s.memory is %r, below 1Mi, the smallest share NVIDIA's driver offers" % (where, entry["memory"]))
    except (QuantityError, TypeError):
        problems.append("%s.memory is %r; write the memory each claim asks for as a quantity, e.g. 8Gi"
                        % (where, entry.get("memory")))
    return problems


def claim_templates(entries, classes, managed_labels=None, root="gpu_sharing_claim_templates"):
    """ResourceClaimTemplates for ``entries`` ({name, namespace, class, memory}), each asking for
    ``memory`` of a memory class among ``classes`` (the entries of gpu_sharing_classes). Raises
    SharingConfigError naming every problem at once."""
    memory_classes = [c.get("name") for c in classes or [] if isinstance(c, dict) and c.get("strategy") == "memory"]
    problems, bodies, seen = [], [], set()
    for index, entry in enumerate(entries or []):
        where = "%s[%d]" % (root, index)
        if not isinstance(entry, dict):
            problems.append("%s must be a map with name, namespace, class and memory" % where)
            continue
        found = _template_problems(entry, where, memory_classes)
        key = (entry.get("namespace"), entry.get("name"))
        if key in seen:
            found.append("%s: %s/%s is listed twice" % (where, key[0], key[1]))
        seen.add(key)
        problems += found
        if not found:
            bodies.append(template_body(entry, managed_labels))
    if problems:
        raise SharingConfigError("; ".join(problems))
    return bodies


def template_body(entry, managed_labels=None):
    """One ResourceClaimTemplate: every pod that names it gets its own claim of ``memory``."""
    request = {"name": "gpu", "exactly": {"deviceClassName": entry["class"],
                                          "capacity": {"requests": {"memory": str(entry["memory"])}}}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": entry["name"], "namespace": entry["namespace"], "labels": dict(managed_labels or {})},
            "spec": {"spec": {"devices": {"requests": [request]}}}}


def _asks(template):
    """(class, memory in bytes) a template's first request asks for; None for anything else."""
    requests = ((((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or [])
    if len(requests) != 1:
        return None
    exactly = requests[0].get("exactly") or {}
    memory = ((exactly.get("capacity") or {}).get("requests") or {}).get("memory")
    try:
        return exactly.get("deviceClassName"), to_bytes(str(memory)) if memory is not None else None
    except QuantityError:
        return None


def template_changes(wanted, live, managed_labels):
    """What applying ``wanted`` templates to a cluster with ``live`` ones (every
    ResourceClaimTemplate, as the API returns them) takes: {delete, problems}. A template's spec
    cannot be changed in place, so one that asks for something else is deleted and made again;
    ours (``managed_labels``) that are no longer wanted are deleted; someone else's of a wanted
    name is a problem, not ours to replace."""
    by_key = dict(((t["metadata"]["namespace"], t["metadata"]["name"]), t) for t in live)
    ours = [key for key, t in sorted(by_key.items())
            if all((t["metadata"].get("labels") or {}).get(k) == v for k, v in (managed_labels or {}).items())]
    delete, problems = [], []
    wanted_keys = set()
    for body in wanted:
        key = (body["metadata"]["namespace"], body["metadata"]["name"])
        wanted_keys.add(key)
        if key not in by_key:
            continue
        if key not in ours:
            problems.append("ResourceClaimTemplate %s/%s exists and was not made by this role; give the template "
                            "another name, or delete that one" % key)
        elif _asks(by_key[key]) != _asks(body):
            delete.append({"namespace": key[0], "name": key[1], "reason": "changed"})
    delete += [{"namespace": k[0], "name": k[1], "reason": "no longer listed"} for k in ours if k not in wanted_keys]
    return {"delete": delete, "problems": problems}


def template_memory_problems(templates, devices, root="gpu_sharing_claim_templates"):
    """A template asking for more memory than any published GPU has could never be allocated."""
    sizes = [to_bytes(d["capacity"]["memory"]) for d in devices
             if d["attributes"].get("type") == "gpu" and d["capacity"].get("memory")]
    if not sizes:
        return []
    problems = []
    for index, body in enumerate(templates):
        asked = _asks(body)[1]
        if asked > max(sizes):
            problems.append("%s[%d] (%s/%s): memory %s is more than the largest GPU has (%s); no claim of it could "
                            "ever be allocated" % (root, index, body["metadata"]["namespace"], body["metadata"]["name"],
                                                   human_bytes(asked), human_bytes(max(sizes))))
    return problems

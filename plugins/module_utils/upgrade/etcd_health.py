# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a kubeadm cluster's stacked etcd healthy, asked on one control plane between upgrade steps.

Healthy means: every member started (an unstarted member has no name and no client URLs yet)
and none a learner, as many members as the cluster has control planes, one leader that every
member names, and a write that reads back and is deleted again. etcdctl runs inside the node's
own etcd container (``crictl exec``: kubeadm's etcd image carries etcdctl and no shell), so the
check needs neither the API server nor an etcdctl on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

MANIFEST = "/etc/kubernetes/manifests/etcd.yaml"
PKI = "/etc/kubernetes/pki/etcd"
# Short timeouts per call: a member that is away is retried by the wait, not waited on here.
ETCDCTL = ["etcdctl", "--endpoints=https://127.0.0.1:2379", "--cacert=%s/ca.crt" % PKI,
           "--cert=%s/server.crt" % PKI, "--key=%s/server.key" % PKI, "--dial-timeout=3s", "--command-timeout=5s"]
FIND_CONTAINER = ["crictl", "ps", "--quiet", "--state", "Running", "--name", "^etcd$",
                  "--label", "io.kubernetes.pod.namespace=kube-system"]


def _json(text, what):
    try:
        return json.loads(text), None
    except ValueError:
        return None, "%s did not answer JSON (%s)" % (what, (text or "no output").strip()[:200])


def members(text):
    """``etcdctl member list -w json`` -> ([{id, name, started, learner, client_urls}], problem)."""
    doc, problem = _json(text, "etcdctl member list")
    if problem:
        return [], problem
    found = []
    for member in doc.get("members") or []:
        urls = member.get("clientURLs") or []
        found.append({"id": member.get("ID"), "name": member.get("name") or "",
                      "started": bool(member.get("name")) and bool(urls),
                      "learner": bool(member.get("isLearner")), "client_urls": urls})
    return found, None


def statuses(text):
    """``etcdctl endpoint status --cluster -w json`` -> ([{endpoint, member_id, leader, version}], problem)."""
    doc, problem = _json(text, "etcdctl endpoint status")
    if problem:
        return [], problem
    found = []
    for entry in doc if isinstance(doc, list) else [doc]:
        status = entry.get("Status") or {}
        found.append({"endpoint": entry.get("Endpoint"), "member_id": (status.get("header") or {}).get("member_id"),
                      "leader": status.get("leader"), "version": status.get("version")})
    return found, None


def _label(member_id, listed):
    names = dict((m["id"], m["name"] or "unstarted %s" % m["id"]) for m in listed)
    return names.get(member_id, "unknown member %s" % member_id)


def membership_problems(listed, expected):
    """What is wrong with the member list (empty when nothing is)."""
    problems = []
    if expected and len(listed) != expected:
        problems.append("%d member(s) (%s), expected %d, one per control plane" % (
            len(listed), ", ".join(m["name"] or "unstarted" for m in listed) or "none", expected))
    unstarted = [str(m["id"]) for m in listed if not m["started"]]
    if unstarted:
        problems.append("member(s) %s not started" % ", ".join(unstarted))
    learners = [m["name"] or str(m["id"]) for m in listed if m["learner"]]
    if learners:
        problems.append("member(s) %s still learner(s), not voting" % ", ".join(learners))
    return problems


def leader_problems(listed, status):
    """One leader, named by every member that answered, and every member answered."""
    problems = []
    answered = set(s["member_id"] for s in status)
    silent = [m["name"] or str(m["id"]) for m in listed if m["id"] not in answered]
    if silent:
        problems.append("no status from %s" % ", ".join(silent))
    leaders = set(s["leader"] for s in status if s["leader"])
    if not leaders:
        problems.append("no leader")
    elif len(leaders) > 1:
        problems.append("members disagree on the leader (%s)" % ", ".join(sorted(_label(i, listed) for i in leaders)))
    elif not any(m["id"] in leaders for m in listed):
        problems.append("the leader %s is not a listed member" % leaders.pop())
    return problems


def read_value(text):
    """``etcdctl get KEY -w json`` -> the value (text) or None."""
    doc, problem = _json(text, "etcdctl get")
    if problem:
        return None
    kvs = doc.get("kvs") or []
    return base64.b64decode(kvs[0]["value"]).decode() if kvs else None


def leader_name(listed, status):
    leaders = set(s["leader"] for s in status if s["leader"])
    return _label(leaders.pop(), listed) if len(leaders) == 1 else None


class Etcd(object):
    """etcdctl in the node's etcd container; ``run(argv)`` returns (rc, stdout, stderr)."""

    def __init__(self, run):
        self._run = run

    def container(self):
        rc, out, err = self._run(FIND_CONTAINER)
        if rc != 0:
            return None, "crictl ps failed: %s" % (err or out).strip()[:300]
        ids = out.split()
        return (ids[0], None) if ids else (None, "no running etcd container on this node")

    def etcdctl(self, container, args):
        rc, out, err = self._run(["crictl", "exec", container] + ETCDCTL + list(args))
        return rc, out, (err or "").strip()


def check_once(etcd, expected, key, value, write=True):
    """One look: (report, problems). The write is a put, a get that must return it, a delete."""
    report = {"members": [], "leader": None, "write": None}
    container, problem = etcd.container()
    if problem:
        return report, [problem]
    rc, out, err = etcd.etcdctl(container, ["member", "list", "-w", "json"])
    if rc != 0:
        return report, ["etcdctl member list failed: %s" % (err or out)[:300]]
    listed, problem = members(out)
    report["members"] = listed
    if problem:
        return report, [problem]
    problems = membership_problems(listed, expected)
    rc, out, err = etcd.etcdctl(container, ["endpoint", "status", "--cluster", "-w", "json"])
    status, problem = statuses(out) if out.strip() else ([], None)
    if rc != 0 and not status:
        return report, problems + ["etcdctl endpoint status failed: %s" % (err or out)[:300]]
    problems += [problem] if problem else leader_problems(listed, status)
    report["leader"] = leader_name(listed, status)
    if problems or not write:
        return report, problems
    steps = [(["put", key, value], "put"), (["get", key, "-w", "json"], "get"), (["del", key], "delete")]
    for args, step in steps:
        rc, out, err = etcd.etcdctl(container, args)
        if rc != 0:
            return report, ["the %s of %s failed: %s" % (step, key, (err or out)[:300])]
        if step == "get" and read_value(out) != value:
            return report, ["%s read back %r after writing %r" % (key, read_value(out), value)]
    report["write"] = key
    return report, []


def wait_healthy(etcd, expected, key, value, timeout, delay, clock, sleep, write=True):
    """Look until healthy or ``timeout`` seconds passed: (report, problems, waited seconds)."""
    start = clock()
    while True:
        report, problems = check_once(etcd, expected, key, value, write)
        waited = clock() - start
        if not problems or waited + delay > timeout:
            return report, problems, waited
        sleep(delay)


def failure_message(node, step, expected, key, timeout, problems, write=True):
    """What was waited for (``step``: when, e.g. "after cp2's upgrade"), what was seen last, what to do."""
    wanted = "%s started voting member(s), one leader named by every member" % (expected or "all")
    if write:
        wanted += ", a put/get/delete of %s" % key
    return ("etcd seen from %s %s was not healthy after %ss: waited for %s; last seen: %s. The upgrade stopped "
            "here, before the next control plane; check `crictl logs` of the etcd containers and `etcdctl member "
            "list`, repair the member, then run the upgrade again (finished nodes are skipped)"
            % (node, step, timeout, wanted, "; ".join(problems)))

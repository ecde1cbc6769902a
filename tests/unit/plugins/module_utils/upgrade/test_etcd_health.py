from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import etcd_health

# etcdctl 3.6's JSON: IDs as numbers, an unstarted member without name and client URLs.
IDS = {"cp1": 1111, "cp2": 2222, "cp3": 3333}


def member_list(*names, unstarted=(), learners=()):
    members = []
    for name in names:
        member = {"ID": IDS[name], "name": name, "peerURLs": ["https://%s:2380" % name],
                  "clientURLs": ["https://%s:2379" % name]}
        if name in learners:
            member["isLearner"] = True
        members.append(member)
    members += [{"ID": 4444, "peerURLs": ["https://%s:2380" % name]} for name in unstarted]
    return json.dumps({"header": {"cluster_id": 99, "member_id": IDS[names[0]], "raft_term": 3}, "members": members})


def endpoint_status(leaders):
    """{member name: the leader it names}."""
    return json.dumps([{"Endpoint": "https://%s:2379" % name,
                        "Status": {"header": {"cluster_id": 99, "member_id": IDS[name], "revision": 10},
                                   "version": "3.6.16", "leader": IDS[leader] if leader else 0}}
                       for name, leader in leaders.items()])


def get_answer(value):
    kvs = [{"key": "eA==", "value": base64.b64encode(value.encode()).decode()}] if value is not None else []
    return json.dumps({"header": {}, "kvs": kvs, "count": len(kvs)})


class FakeNode(object):
    """crictl on a control plane: answers per etcdctl subcommand, records every call."""

    def __init__(self, members_text, status_text, container="abc123", stored=None, put_rc=0):
        self.members_text, self.status_text, self.container = members_text, status_text, container
        self.stored, self.put_rc, self.calls = stored, put_rc, []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:2] == ["crictl", "ps"]:
            return 0, (self.container or "") + "\n", ""
        args = argv[3 + len(etcd_health.ETCDCTL):]
        assert argv[:3] == ["crictl", "exec", self.container]
        if args[:2] == ["member", "list"]:
            return 0, self.members_text, ""
        if args[:2] == ["endpoint", "status"]:
            return 0, self.status_text, ""
        if args[0] == "put":
            if self.put_rc:
                return self.put_rc, "", "etcdserver: request timed out"
            self.stored = args[2] if self.stored is None else self.stored
            return 0, "OK\n", ""
        if args[0] == "get":
            return 0, get_answer(self.stored), ""
        if args[0] == "del":
            self.stored = None
            return 0, "1\n", ""
        raise AssertionError(argv)


HEALTHY = (member_list("cp1", "cp2", "cp3"), endpoint_status({"cp1": "cp2", "cp2": "cp2", "cp3": "cp2"}))


def test_healthy_three_members_leader_and_a_write_that_is_deleted():
    node = FakeNode(*HEALTHY)
    report, problems = etcd_health.check_once(etcd_health.Etcd(node), 3, "/dra.gpu/check/cp2", "v1")
    assert problems == []
    assert report["leader"] == "cp2" and report["write"] == "/dra.gpu/check/cp2"
    assert [m["name"] for m in report["members"]] == ["cp1", "cp2", "cp3"]
    assert node.stored is None  # deleted again
    verbs = [c[3 + len(etcd_health.ETCDCTL)] for c in node.calls if c[1] == "exec"]
    assert verbs == ["member", "endpoint", "put", "get", "del"]


def test_an_unstarted_member_and_a_missing_one_are_named():
    listed, problem = etcd_health.members(member_list("cp1", "cp2", unstarted=["x"]))
    assert problem is None
    problems = etcd_health.membership_problems(listed, 3)
    assert problems == ["member(s) 4444 not started"]
    listed, _p = etcd_health.members(member_list("cp1", "cp2"))
    assert etcd_health.membership_problems(listed, 3) == ["2 member(s) (cp1, cp2), expected 3, one per control plane"]
    assert etcd_health.membership_problems(listed, 0) == []


def test_a_learner_does_not_count_as_voting():
    listed, _p = etcd_health.members(member_list("cp1", "cp2", "cp3", learners=["cp3"]))
    assert etcd_health.membership_problems(listed, 3) == ["member(s) cp3 still learner(s), not voting"]


def test_leader_problems():
    listed, _p = etcd_health.members(member_list("cp1", "cp2", "cp3"))

    def problems(leaders):
        status, _p = etcd_health.statuses(endpoint_status(leaders))
        return etcd_health.leader_problems(listed, status)
    assert problems({"cp1": "cp1", "cp2": "cp1", "cp3": "cp1"}) == []
    assert problems({"cp1": None, "cp2": None, "cp3": None}) == ["no leader"]
    assert problems({"cp1": "cp1", "cp2": "cp1", "cp3": "cp3"}) == ["members disagree on the leader (cp1, cp3)"]
    assert problems({"cp1": "cp1", "cp2": "cp1"}) == ["no status from cp3"]


def test_no_container_and_garbage_are_problems_not_crashes():
    node = FakeNode(*HEALTHY, container=None)
    assert etcd_health.check_once(etcd_health.Etcd(node), 3, "/k", "v")[1] == ["no running etcd container on this node"]
    node = FakeNode("Error: context deadline exceeded", HEALTHY[1])
    _r, problems = etcd_health.check_once(etcd_health.Etcd(node), 3, "/k", "v")
    assert problems == ["etcdctl member list did not answer JSON (Error: context deadline exceeded)"]


def test_a_write_that_fails_or_reads_back_something_else():
    node = FakeNode(*HEALTHY, put_rc=1)
    _r, problems = etcd_health.check_once(etcd_health.Etcd(node), 3, "/k", "v")
    assert problems == ["the put of /k failed: etcdserver: request timed out"]
    node = FakeNode(*HEALTHY, stored="someone else's")
    _r, problems = etcd_health.check_once(etcd_health.Etcd(node), 3, "/k", "v")
    assert problems == ["/k read back \"someone else's\" after writing 'v'"]


def test_check_mode_reads_only():
    node = FakeNode(*HEALTHY)
    report, problems = etcd_health.check_once(etcd_health.Etcd(node), 3, "/k", "v", write=False)
    assert problems == [] and report["write"] is None
    assert not [c for c in node.calls if "put" in c]


def test_wait_rides_out_a_member_that_is_still_starting(clock):
    answers = [member_list("cp1", "cp2", unstarted=["cp3"]), member_list("cp1", "cp2", unstarted=["cp3"]),
               HEALTHY[0]]
    node = FakeNode(*HEALTHY)
    etcd = etcd_health.Etcd(node)
    original = etcd.etcdctl

    def etcdctl(container, args):
        if args[:2] == ["member", "list"]:
            return 0, answers.pop(0) if len(answers) > 1 else answers[0], ""
        return original(container, args)
    etcd.etcdctl = etcdctl
    report, problems, waited = etcd_health.wait_healthy(etcd, 3, "/k", "v", 60, 3, clock, clock.sleep)
    assert problems == [] and waited == 6 and report["leader"] == "cp2"


def test_wait_gives_up_at_the_timeout_and_says_what_it_waited_for(clock):
    node = FakeNode(member_list("cp1", "cp2"), endpoint_status({"cp1": "cp1", "cp2": "cp1"}))
    _r, problems, waited = etcd_health.wait_healthy(etcd_health.Etcd(node), 3, "/k", "v", 10, 3, clock, clock.sleep)
    assert problems and waited == 9
    message = etcd_health.failure_message("cp2", "after the upgrade of cp2", 3, "/k", 10, problems)
    assert message.startswith("etcd seen from cp2 after the upgrade of cp2 was not healthy after 10s: waited for 3 "
                              "started voting member(s), one leader named by every member, a put/get/delete of /k; "
                              "last seen: 2 member(s) (cp1, cp2), expected 3")
    assert "run the upgrade again" in message

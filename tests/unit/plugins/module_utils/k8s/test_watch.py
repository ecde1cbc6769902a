from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch


def obj(name, rv):
    return {"metadata": {"name": name, "resourceVersion": str(rv)}}


def test_returns_from_the_initial_list_when_already_satisfied():
    result, stats = watch.wait_until(lambda: ([obj("a", 1)], "1"), lambda rv, s: iter(()),
                                     lambda items: len(items) or None, 10, "a")
    assert result == 1 and stats["relists"] == 1


def test_relists_after_an_expired_watch_and_sees_what_it_missed():
    lists = [([], "1"), ([obj("a", 5)], "5")]
    watches = [[("ERROR", {"code": 410})]]
    result, stats = watch.wait_until(lambda: lists.pop(0), lambda rv, s: iter(watches.pop(0) if watches else []),
                                     lambda items: len(items) or None, 10, "a")
    assert result == 1 and stats["relists"] == 2


def test_reconnects_when_the_connection_drops(clock):

    def watcher(rv, seconds):
        if not hasattr(watcher, "failed"):
            watcher.failed = True
            raise ConnectionResetError("api server restarting")
        return iter([("ADDED", obj("a", 7))])

    result, stats = watch.wait_until(lambda: ([], "1"), watcher, lambda items: len(items) or None, 10, "a",
                                     clock=clock, sleep=clock.sleep)
    assert result == 1 and stats["reconnects"] == 1


def test_rides_out_forbidden_answers_of_a_restarted_api_server_but_not_for_ever(clock):
    answers = [watch.ApiException(status=403), watch.ApiException(status=403), ([obj("a", 3)], "3")]

    def lister():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    result, stats = watch.wait_until(lister, lambda rv, s: iter(()), lambda items: len(items) or None, 100, "a",
                                     clock=clock, sleep=clock.sleep)
    assert result == 1 and stats["reconnects"] == 2

    def always_forbidden():
        raise watch.ApiException(status=403)

    start = clock.now
    with pytest.raises(watch.ApiException):
        watch.wait_until(always_forbidden, lambda rv, s: iter(()), lambda items: None, 300, "a",
                         clock=clock, sleep=clock.sleep)
    assert watch.AUTH_SETTLE_SECONDS <= clock.now - start < watch.AUTH_SETTLE_SECONDS + 1


def test_deleted_events_remove_objects_and_bookmarks_are_ignored():
    events = [("ADDED", obj("a", 2)), ("BOOKMARK", obj("", 3)), ("DELETED", obj("a", 4)), ("ADDED", obj("b", 5)),
              ("ADDED", obj("c", 6))]
    seen = []

    def condition(items):
        seen.append(sorted(i["metadata"]["name"] for i in items))
        return len(items) == 2 or None

    watch.wait_until(lambda: ([], "1"), lambda rv, s: iter(events), condition, 10, "two")
    assert seen == [[], ["a"], [], ["b"], ["b", "c"]]


def test_times_out_with_what_it_last_saw(clock):

    def watcher(rv, seconds):
        clock.now += seconds
        return iter([])

    with pytest.raises(watch.WaitTimeout, match="timed out after 5s waiting for slices") as info:
        watch.wait_until(lambda: ([obj("a", 1)], "1"), watcher, lambda items: None, 5, "slices", clock=clock)
    assert [i["metadata"]["name"] for i in info.value.state] == ["a"]


def test_recheck_every_sees_what_another_thread_found_without_an_event(clock):
    windows, found = [], []

    def watcher(rv, seconds):
        windows.append(seconds)
        clock.now += seconds
        if len(windows) == 3:
            found.append("prepare failed")  # what a recorder thread would have seen meanwhile
        return iter([])

    result, _stats = watch.wait_until(lambda: ([], "1"), watcher, lambda items: found[0] if found else None, 300,
                                      "pods", clock=clock, recheck_every=5)
    assert result == "prepare failed" and windows == [5, 5, 5] and clock.now == 15
    windows[:] = []
    with pytest.raises(watch.WaitTimeout):
        watch.wait_until(lambda: ([], "1"), watcher, lambda items: None, 120, "pods", clock=clock)
    assert windows == [60, 60]


def test_an_error_the_condition_raises_ends_the_wait_at_once(clock):
    class Failed(watch.ConditionFailed):
        pass

    def condition(items):
        if items:
            raise Failed("the MIG manager reports failed")
        return None

    with pytest.raises(Failed):
        watch.wait_until(lambda: ([], "1"), lambda rv, s: iter([("ADDED", obj("a", 2))]), condition, 300, "a",
                         clock=clock, sleep=clock.sleep)
    assert clock.now == 0


def test_other_errors_of_a_condition_are_retried_like_a_dropped_connection(clock):
    calls = []

    def condition(items):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("the condition read the API while it restarted")
        return True

    result, stats = watch.wait_until(lambda: ([], "1"), lambda rv, s: iter(()), condition, 30, "a",
                                     clock=clock, sleep=clock.sleep)
    assert result is True and stats["reconnects"] == 1

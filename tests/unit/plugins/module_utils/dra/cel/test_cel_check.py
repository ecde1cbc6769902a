from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

import celpy
import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel_check

ENV = celpy.Environment()


def parse(expression):
    return ENV.compile(expression)


def verdict(expression):
    return cel_check.judge(parse(expression))


# Kubernetes' "expensive" case, seven nested all() over ten numbers: 85555551, far over the limit.
EXPENSIVE = "".join("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(%s, " % v for v in ("x", "y", "z", "z2", "z3", "z4", "z5")) \
    + "int('1'.find('[0-9]*')) < 100" + ")" * 7


def test_kubernetes_expensive_case_is_refused_on_its_estimate_in_well_under_a_second():
    started = time.monotonic()
    answer = verdict(EXPENSIVE)
    assert time.monotonic() - started < 1.0
    assert answer.kind == cel_check.REFUSED and answer.cost == 85555551
    assert "estimated cost 85555551 exceeds the API server's limit of 1000000" in answer.reason


# Kubernetes' compile-error cases, and what the preview does with each.
@pytest.mark.parametrize("expression,kind,reason", [
    ("1", cel_check.REFUSED, "must evaluate to bool or the unknown type, not int"),
    # With the DRAConsumableCapacity gate off the server says "undefined field" for a new
    # selector; the preview cannot know the gate, so it evaluates the field as the slice has it.
    ("device.allowMultipleAllocations == false", None, None),
])
def test_kubernetes_compile_error_cases(expression, kind, reason):
    answer = verdict(expression)
    assert (answer and answer.kind) == kind
    assert reason is None or reason in answer.reason


# Refused as the API server refuses them (messages checked against Kubernetes 1.35's compiler).
@pytest.mark.parametrize("expression,reason", [
    ("device.driver", "not string"),
    ("1 + 2", "not int"),
    ("quantity('1')", "not kubernetes.Quantity"),
    ("device.capacity['x'].memory", "not kubernetes.Quantity"),
    ("device.attributes['x'].a.compareTo(semver('1.0.0'))", "not int"),
    ("device.attributes['x'].a.lowerAscii()", "not string"),
    ("device.attributes['a'].b.c", "not dyn"),
    ("dyn(true)", "not dyn"),
    ("isQuantity(['1'])", "found no matching overload for 'isQuantity' applied to '(list(string))'"),
    ("isSemver([1])", "found no matching overload for 'isSemver' applied to '(list(int))'"),
    ("quantity(1)", "found no matching overload for 'quantity' applied to '(int)'"),
    ("semver('1.0.0', 'yes').major() == 1", "'semver' applied to '(string, string)'"),
    ("quantity('1').compareTo(semver('1.0.0')) > 0",
     "'compareTo' applied to 'kubernetes.Quantity.(kubernetes.Semver)'"),
    ("device.driver.isGreaterThan(quantity('1'))", "'isGreaterThan' applied to 'string.(kubernetes.Quantity)'"),
    ("device.attributes['a'].b.isLessThan('abc')", "'isLessThan' applied to 'any.(string)'"),
    ("device.attributes['a'].b.isSemver()", "'isSemver' applied to 'any.()'"),
    ("quantity('24Gi').sign() == 1", "'sign' applied to 'kubernetes.Quantity.()'"),
    ("quantity('1').add(1.0).isInteger()", "'add' applied to 'kubernetes.Quantity.(double)'"),
    ("quantity('1') < quantity('2')", "'_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"),
    ("quantity('1') + quantity('2') == quantity('3')", "'_+_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"),
    ("1 == 1.0", "'_==_' applied to '(int, double)'"),
    ("device.driver == 1", "'_==_' applied to '(string, int)'"),
    ("1 in ['a']", "'@in' applied to '(int, list(string))'"),
    ("device.attributes[1].x", "'_[_]' applied to '(map(string, map(string, any)), int)'"),
    ("device.driver.foo == 'x'", "type 'string' does not support field selection"),
    ("device.attributes['a'].b.exists(x, true)", "type 'any' cannot be range of a comprehension"),
    ("[1].all(x, x)", "expected type 'bool' but found 'int'"),
    ("!1", "'!_' applied to '(int)'"),
    ("true ? 1 : 'a'", "'_?_:_' applied to '(bool, int, string)'"),
    ("int(true) > 0", "'int' applied to '(bool)'"),
    ("startsWith('a', 'b')", "'startsWith' applied to '(string, string)'"),
])
def test_type_errors_are_refused_with_cel_go_wording(expression, reason):
    answer = verdict(expression)
    assert answer.kind == cel_check.REFUSED and reason in answer.reason


@pytest.mark.parametrize("expression,cost", [
    # Kubernetes prices == of two quantities at 1 but != by their (unknown) length: refused.
    ("device.capacity['gpu.nvidia.com'].memory != quantity('0')", 1844674407370955269),
    ("device.attributes.all(d, device.attributes.all(e, device.attributes.all(f, d + e != f + d)))", 1513667),
    ("device.attributes.all(d, device.attributes[d].all(k, device.attributes.exists(e, "
     "device.attributes[e].exists(j, j == k))))", 10787075),
])
def test_over_the_cost_limit_is_refused_with_kubernetes_figure(expression, cost):
    answer = verdict(expression)
    assert answer.kind == cel_check.REFUSED and answer.cost == cost


@pytest.mark.parametrize("expression,cost,why", [
    ("device.attributes.all(d, device.attributes.all(e, device.attributes.all(f, d + e != f + 'x')))", 1087683,
     "within 10%"),
    ("device.attributes.all(d, device.attributes.all(e, device.attributes.all(f, d + e != f && d != 'x')))", 923843,
     "within 10%"),
    ("device.attributes.all(d, device.attributes[d].all(k, device.attributes.all(e, "
     "device.attributes[e][k].reverse().size() > 0)))", 399619, "leaves out the function reverse()"),
])
def test_a_cost_the_preview_cannot_judge_is_deferred(expression, cost, why):
    answer = verdict(expression)
    assert answer.kind == cel_check.DEFERRED and answer.cost == cost and why in answer.reason
    assert "--dry-run=server" in answer.fix


@pytest.mark.parametrize("expression", [
    "device.attributes['gpu.nvidia.com'].productName.reverse() == 'x'",
    "sets.contains(['a'], [device.driver])",
    "device.attributes['a'].all(k, v, v == 'a')",
    "device.attributes['a'].b + device.attributes['a'].c > 2",
])
def test_what_is_not_modelled_is_never_refused(expression):
    answer = verdict(expression)
    assert answer is None or answer.kind == cel_check.DEFERRED


def test_an_unknown_device_field_is_deferred():
    answer = verdict("device.vendor == 'nvidia'")
    assert answer.kind == cel_check.DEFERRED and "device.vendor" in answer.reason


def test_the_length_limit_is_on_utf8_bytes():
    assert cel_check.length_verdict("x" * 10240) is None
    assert cel_check.length_verdict("\u00e9" * 5120) is None
    answer = cel_check.length_verdict("\u00e9" * 5121)
    assert answer.kind == cel_check.REFUSED and "10242 bytes" in answer.reason and "TooLong" in answer.reason

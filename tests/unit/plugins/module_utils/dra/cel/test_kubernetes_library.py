from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.kubernetes_library import (
    KubernetesQuantity, normalized_semver_text)

GPU = {"name": "gpu-0", "attributes": {"driverVersion": {"version": "580.126.20"}},
       "capacity": {"memory": {"value": "24Gi"}}}


def match(expression, device=None, driver="gpu.nvidia.com"):
    return cel.Selectors([expression]).match(driver, device or GPU)


# (text, valid as written, valid with normalize=true, the version normalize gives); the answers
# are those of Kubernetes' semver library (blang/semver parse, with its normalize rules).
SEMVER_CASES = [
    ("1.2.3", True, True, "1.2.3"),
    ("v1.2.3", False, True, "1.2.3"),
    ("1.2", False, True, "1.2.0"),
    ("1", False, True, "1.0.0"),
    ("v1", False, True, "1.0.0"),
    ("1.0", False, True, "1.0.0"),
    ("01.02.03", False, True, "1.2.3"),
    ("v01.02.03", False, True, "1.2.3"),
    ("00.00.00", False, True, "0.0.0"),
    ("1.02", False, True, "1.2.0"),
    ("010", False, True, "10.0.0"),
    ("1.2.00", False, True, "1.2.0"),
    ("1.2.03-alpha", False, True, "1.2.3-alpha"),
    ("1.2.0-alpha", True, True, "1.2.0-alpha"),
    ("1.2.3-alpha", True, True, "1.2.3-alpha"),
    ("1.2.3+build", True, True, "1.2.3+build"),
    ("1.2.3-0a", True, True, "1.2.3-0a"),
    ("1.2-alpha", False, False, None),
    ("1-rc1", False, False, None),
    ("1.2+build", False, False, None),
    ("vv1.2.3", False, False, None),
    ("V1.2.3", False, False, None),
    ("v", False, False, None),
    ("", False, False, None),
    (" 1.2.3", False, False, None),
    ("1.2.3.4", False, False, None),
    ("1..3", False, False, None),
    ("1.2.x", False, False, None),
    ("1.2.3-", False, False, None),
    ("1.2.3-01", False, False, None),
    ("1.2.3-00", False, False, None),
]


@pytest.mark.parametrize("text,strict,normalized,version", SEMVER_CASES)
def test_is_semver_with_and_without_normalize(text, strict, normalized, version):
    assert match("isSemver('%s')" % text) == (strict, None)
    assert match("isSemver('%s', false)" % text) == (strict, None)
    assert match("isSemver('%s', true)" % text) == (normalized, None)


@pytest.mark.parametrize("text,strict,normalized,version", [c for c in SEMVER_CASES if c[2]])
def test_semver_normalize_gives_the_kubernetes_version(text, strict, normalized, version):
    assert match("semver('%s', true) == semver('%s')" % (text, version)) == (True, None)
    major, minor, patch = (int(p) for p in version.split("-")[0].split("+")[0].split("."))
    assert match("semver('%s', true).major() == %d && semver('%s', true).minor() == %d && "
                 "semver('%s', true).patch() == %d" % (text, major, text, minor, text, patch)) == (True, None)


@pytest.mark.parametrize("text", [c[0] for c in SEMVER_CASES if not c[1]])
def test_semver_without_normalize_is_a_runtime_error_on_loose_versions(text):
    matched, error = match("semver('%s') == semver('1.0.0')" % text)
    assert matched is False and "semantic version" in error


def test_semver_normalize_refusal_names_the_input():
    matched, error = match("semver('1.2-alpha', true).major() == 1")
    assert matched is False and "'1.2-alpha'" in error and "normalized" in error


def test_semver_normalize_compares_like_a_device_version():
    assert match("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('v565', true))") == (True, None)


def test_semver_normalize_argument_must_be_a_bool():
    with pytest.raises(cel.Invalid, match=r"no matching overload for 'semver' applied to '\(string, int\)'"):
        match("semver('1.2', 1) == semver('1.2.0')")
    with pytest.raises(cel.Invalid, match=r"no matching overload for 'isSemver' applied to '\(string, string\)'"):
        match("isSemver('1.2', 'yes')")


def test_normalized_semver_text():
    assert normalized_semver_text("v01.002") == "1.2.0"
    assert normalized_semver_text("1.2.0-rc.1") == "1.2.0-rc.1"


# (quantity, whether Kubernetes' isInteger() is true, asInteger()): Kubernetes answers from the
# form its parser keeps: an int64 at a scale >= 0 only, never the arbitrary-precision decimal
# it falls back to for 19 or more digits or large binary suffixes.
QUANTITY_INTEGER_CASES = [
    ("1k", True, 1000),
    ("1e3", True, 1000),
    ("1E3", True, 1000),
    ("00001k", True, 1000),
    ("1.k", True, 1000),
    ("0", True, 0),
    ("000", True, 0),
    ("-5", True, -5),
    ("+1", True, 1),
    ("1Ki", True, 1024),
    ("24Gi", True, 25769803776),
    ("4864Mi", True, 5100273664),
    ("16384Gi", True, 17592186044416),
    ("1Ti", True, 1099511627776),
    ("9E", True, 9000000000000000000),
    ("1e18", True, 1000000000000000000),
    ("922337203685477580", True, 922337203685477580),
    ("123456789012345678", True, 123456789012345678),
    ("1.5", False, None),
    ("1.0", False, None),
    ("0.0", False, None),
    (".5", False, None),
    ("1000m", False, None),
    ("1n", False, None),
    ("1e-9", False, None),
    ("1e-10", False, None),
    ("1.5Ki", False, None),
    ("0.5Ki", False, None),
    ("9223372036854775808", False, None),
    ("9223372036854775807", False, None),
    ("-9223372036854775808", False, None),
    ("1234567890123456789", False, None),
    ("10E", False, None),
    ("1e19", False, None),
    ("999999999999999999k", False, None),
    ("9223372036854775807m", False, None),
    ("163840Gi", False, None),
    ("1Pi", False, None),
    ("1Ei", False, None),
    ("100Ei", False, None),
]


@pytest.mark.parametrize("text,is_integer,value", QUANTITY_INTEGER_CASES)
def test_quantity_is_integer_and_as_integer_as_kubernetes(text, is_integer, value):
    assert match("quantity('%s').isInteger()" % text) == (is_integer, None)
    if is_integer:
        assert match("quantity('%s').asInteger() == %d" % (text, value)) == (True, None)
    else:
        matched, error = match("quantity('%s').asInteger() > 0" % text)
        assert matched is False and "cannot convert value to integer" in error


@pytest.mark.parametrize("expression,is_integer", [
    ("quantity('24Gi').add(quantity('8Gi'))", True),
    ("quantity('24Gi').sub(quantity('8Gi'))", True),
    ("quantity('0').add(quantity('1k'))", True),
    ("quantity('5').add(quantity('0'))", True),
    ("quantity('1k').add(20)", True),
    ("quantity('1k').sub(-20)", True),
    ("quantity('1.5').add(quantity('0.5'))", False),
    ("quantity('1.5').sub(quantity('1.5'))", False),
    ("quantity('1k').add(quantity('500m'))", False),
    ("quantity('1Ei').sub(quantity('1Ei'))", False),
    ("quantity('9223372036854775807e0').add(1)", False),
    ("quantity('9E').add(quantity('1E'))", False),
])
def test_quantity_arithmetic_keeps_the_kubernetes_form(expression, is_integer):
    assert match("%s.isInteger()" % expression) == (is_integer, None)


def test_device_capacity_is_integer():
    assert match("device.capacity['gpu.nvidia.com'].memory.isInteger()") == (True, None)
    assert match("device.capacity['gpu.nvidia.com'].memory.isInteger()",
                 {"name": "big", "capacity": {"memory": {"value": "1Ei"}}}) == (False, None)


def test_kubernetes_quantity_keeps_the_int64_form_of_its_text():
    assert KubernetesQuantity("24Gi").int64_form == (25769803776, 0)
    assert KubernetesQuantity("1.5").int64_form == (15, -1)
    assert KubernetesQuantity("1Ei").int64_form is None
    assert KubernetesQuantity("1k").as_int64() == 1000 and KubernetesQuantity("1000m").as_int64() is None


def test_a_computed_quantity_takes_the_form_of_its_operands():
    total = KubernetesQuantity.computed(5, (5, 0))
    assert total == KubernetesQuantity("5") and total.as_int64() == 5
    assert KubernetesQuantity.computed(5, None).as_int64() is None

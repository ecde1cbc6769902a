from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import cel

GPU = {"name": "gpu-0", "attributes": {
    "type": {"string": "gpu"}, "productName": {"string": "NVIDIA A10"},
    "driverVersion": {"version": "580.126.20"}, "cudaComputeCapability": {"version": "8.6.0"},
    "resource.kubernetes.io/pciBusID": {"string": "0000:10:00.0"},
    "resource.kubernetes.io/numaNode": {"int": 0}}, "capacity": {"memory": {"value": "24Gi"}}}
MIG = {"name": "gpu-0-mig-1g.5gb-0-0", "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.5gb"}},
       "capacity": {"memory": {"value": "4864Mi"}}}


def match(expression, device=None, driver="gpu.nvidia.com"):
    return cel.Selectors([expression]).match(driver, device or GPU)


@pytest.mark.parametrize("expression,expected", [
    ("device.driver == 'gpu.nvidia.com'", True),
    ("device.attributes['gpu.nvidia.com'].type == 'gpu'", True),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0", True),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", False),
    ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('23Gi'))", True),
    ("device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('24Gi'))", False),
    ("device.capacity['gpu.nvidia.com'].memory == quantity('24576Mi')", True),
    ("device.capacity['gpu.nvidia.com'].memory.add(quantity('8Gi')) == quantity('32Gi')", True),
    ("device.capacity['gpu.nvidia.com'].memory.sub(quantity('8Gi')).asInteger() == 17179869184", True),
    ("isQuantity('16Gi') && !isQuantity('16GB')", True),
    ("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('565.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) < 0", True),
    ("device.attributes['gpu.nvidia.com'].driverVersion.major() == 580", True),
    ("isSemver('1.2.3') && !isSemver('1.2')", True),
    ("device.attributes['resource.kubernetes.io'].numaNode == 0", True),
    ("device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:')", True),
    ("device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('a10')", True),
    ("has(device.attributes['nvidia.com'].type)", False),
    ("device.allowMultipleAllocations", False),
])
def test_kubernetes_cel_environment(expression, expected):
    assert match(expression) == (expected, None)


def test_unknown_domain_is_an_empty_map_so_the_seed_selector_matches_nothing():
    seed = 'device.driver == "nvidia.com" && device.attributes["nvidia.com"].type == "gpu"'
    assert match(seed) == (False, None)


def test_unknown_attribute_is_a_runtime_error_not_a_match():
    matched, error = match("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'")
    assert matched is False and "profile" in error
    assert match("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", MIG) == (True, None)


def test_all_selectors_must_hold():
    selectors = cel.Selectors(["device.driver == 'gpu.nvidia.com'",
                               "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0"])
    assert selectors.match("gpu.nvidia.com", GPU) == (True, None)
    assert selectors.match("gpu.nvidia.com", MIG) == (False, None)


def test_unknown_functions_are_not_guessed():
    with pytest.raises(cel.Unsupported, match="reverse"):
        match("device.attributes['gpu.nvidia.com'].productName.reverse() == 'x'")


def test_unparsable_expressions_are_reported():
    with pytest.raises(cel.Unsupported, match="cannot parse"):
        cel.Selectors(["device.driver == "])


def test_non_boolean_results_do_not_match():
    matched, error = match("device.driver")
    assert matched is False and "not a bool" in error

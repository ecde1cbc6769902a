from __future__ import absolute_import, division, print_function

__metaclass__ = type

import celpy
import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel_check
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.expression_checker import Checker, CompileError

ENV = celpy.Environment()


def parse(expression):
    return ENV.compile(expression)


def estimate(expression):
    return Checker().visit(parse(expression)).cost


def verdict(expression):
    return cel_check.judge(parse(expression))


# The cost cases of Kubernetes' own DRA compiler tests (k8s.io/dynamic-resource-allocation
# v0.35.4, cel/compile_test.go): each selector and the worst-case cost the API server
# estimates for it, which this estimator reproduces exactly.
KUBERNETES_COSTS = [
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ('"no-such-domain" in device.attributes', 3),
    ('device.driver == ""', 2),
    ('device.driver == "dra.example.com"', 4),
    ('device.attributes["dra.example.com"].name', 4),
    ('device.attributes["dra.example.com"]["name"]', 4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('device.attributes["dra.example.com"].name > 0', 5),
    ('device.attributes["dra.example.com"].name == "fish"', 5),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', 6),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
    ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ('"name" in device.capacity["dra.example.com"] && '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ('!("name" in device.capacity["dra.example.com"]) || '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    (" && ".join(['device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
                  'device.attributes["dra.example.com"].bool', 'device.attributes["dra.example.com"].int > 0',
                  'device.attributes["dra.example.com"].string == "fish"',
                  'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1"))',
                  'device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki"))',
                  'device.attributes["dra.example.com"]["bool"]', 'device.attributes["dra.example.com"]["int"] > 0',
                  'device.attributes["dra.example.com"]["string"] == "fish"',
                  'device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))']), 52),
    ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
     'device.attributes["dra.example.com"].c', 12),
    ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ('device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    ('device.attributes["dra.example.com"].services.split("example").size() >= 2', 19),
    ('device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
    ('device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ('device.capacity["dra.example.com"].exists_one(x, x == "memory")', 133),
    ("device.allowMultipleAllocations == true", 3),
    ("device.allowMultipleAllocations == false", 3),
    # The interrupt test's selector (compile_test.go TestInterrupt).
    ('device.attributes["dra.example.com"].map(key, device.attributes["dra.example.com"][key] * 20)'
     '.filter(e, e > 50).exists(e, e == 60)', 1274),
]


@pytest.mark.parametrize("expression,cost", KUBERNETES_COSTS)
def test_the_cost_is_the_one_kubernetes_estimates(expression, cost):
    assert estimate(expression) == cost
    assert verdict(expression) is None


@pytest.mark.parametrize("expression,cost", [
    ("device.capacity['gpu.nvidia.com'].memory == quantity('0')", 6),
    ("device.attributes.all(d, device.attributes[d].all(k, device.attributes[d][k] == 'x'))", 10499),
    ("device.attributes.all(d, device.attributes.all(e, device.attributes.all(f, d + e != f)))", 858307),
    ("device.attributes.exists(d, device.attributes[d].exists(k, "
     "string(device.attributes[d][k]).matches('^[a-z]+$')))", 32035),
    ("device.attributes['gpu.nvidia.com'].productName.split(' ').exists(w, w == 'A10')", 402),
    ("sign(quantity('24Gi')) == 1", 3),
    ("true ? quantity('1') : device.attributes['a'].b", 4),
    ("quantity('1') == null", 2),
])
def test_what_kubernetes_accepts_is_previewed(expression, cost):
    assert verdict(expression) is None and estimate(expression) == cost


def test_string_literal_sizes_count_characters_as_kubernetes_does():
    escaped = "\\u00e9" * 11
    assert estimate("device.driver == '%s'" % escaped) == 4  # 11 characters
    assert estimate("device.driver == r'%s'" % escaped) == 9  # 66, of which the 63 of a driver name count
    assert estimate("device.driver == '%s'" % ("\u00e9" * 12)) == 4


def test_a_certain_type_error_is_a_compile_error_naming_the_function():
    with pytest.raises(CompileError, match=r"'isQuantity' applied to '\(list\(string\)\)'") as raised:
        Checker().visit(parse("isQuantity(['1'])"))
    assert raised.value.function == "isQuantity"


def test_what_the_walk_does_not_model_is_listed_not_refused():
    checker = Checker()
    checker.visit(parse("device.attributes['a'].b.reverse() == 'x'"))
    assert checker.unmodelled == ["the function reverse()"]

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from decimal import Decimal

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.quantity import (
    Quantity, QuantityError, human_bytes, parse_quantity, to_bytes)
from ansible_collections.dra.gpu.plugins.module_utils.semver import Semver, SemverError, is_semver


@pytest.mark.parametrize("text,value", [
    ("24Gi", 24 * 2 ** 30), ("4864Mi", 4864 * 2 ** 20), ("1k", 1000), ("500m", Decimal("0.5")),
    ("2", 2), ("1.5Gi", Decimal("1.5") * 2 ** 30), ("1e3", 1000), ("+3M", 3000000),
])
def test_parse_quantity(text, value):
    assert parse_quantity(text) == Decimal(value)


@pytest.mark.parametrize("text", ["", "Gi", "16GB", "1.2.3", "abc"])
def test_parse_quantity_refuses_garbage(text):
    with pytest.raises(QuantityError, match="not a Kubernetes quantity"):
        parse_quantity(text)


def test_quantities_compare_by_value():
    assert Quantity("16Gi") == Quantity("16384Mi")
    assert Quantity("24Gi").compare(Quantity("16Gi")) == 1
    assert Quantity("4864Mi").compare(Quantity("16Gi")) == -1
    assert hash(Quantity("1Gi")) == hash(Quantity("1024Mi"))


def test_bytes_round_trip():
    assert to_bytes("24Gi") == 24 * 2 ** 30
    assert human_bytes(6 * 24 * 2 ** 30) == "144Gi"
    assert human_bytes(4864 * 2 ** 20) == "4864Mi"
    assert human_bytes(0) == "0"


def test_semver_ordering_follows_the_spec():
    assert Semver("580.126.20").compare(Semver("565.0.0")) == 1
    assert Semver("1.0.0-alpha").compare(Semver("1.0.0")) == -1
    assert Semver("1.0.0-alpha.1").compare(Semver("1.0.0-alpha.beta")) == -1
    assert Semver("1.2.3") == Semver("1.2.3+build")
    assert (Semver("8.6.0").major, Semver("8.6.0").minor, Semver("8.6.0").patch) == (8, 6, 0)


def test_semver_refuses_non_versions():
    assert not is_semver("580.126")
    with pytest.raises(SemverError):
        Semver("v1.2.3")

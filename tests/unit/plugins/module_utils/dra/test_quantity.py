from __future__ import absolute_import, division, print_function

__metaclass__ = type

from decimal import Decimal

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import Quantity, QuantityError, human_bytes, parse_quantity, to_bytes


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


@pytest.mark.parametrize("text,value", [
    ("-1", -1), (".5", Decimal("0.5")), ("2e-3", Decimal("0.002")), ("1E3", 1000), ("3n", Decimal("3e-9")),
    ("7u", Decimal("7e-6")), ("1Ti", 2 ** 40), ("1Ei", 2 ** 60), ("1G", 10 ** 9), (" 16Gi ", 16 * 2 ** 30),
])
def test_parse_quantity_knows_every_suffix_sign_and_exponent(text, value):
    assert parse_quantity(text) == Decimal(value)


def test_capital_e_alone_is_the_exa_suffix_not_an_exponent():
    assert parse_quantity("1E") == Decimal(10) ** 18
    with pytest.raises(QuantityError):
        parse_quantity("1e")


@pytest.mark.parametrize("text", ["1e3Gi", "1 Gi", "Mi1", "1gi", "--1"])
def test_an_exponent_and_a_suffix_do_not_mix_and_suffixes_are_case_sensitive(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_numbers_pass_through_exactly():
    assert parse_quantity(3) == Decimal(3)
    assert parse_quantity(Decimal("0.25")) == Decimal("0.25")


def test_the_error_is_a_value_error_and_quotes_the_input():
    with pytest.raises(ValueError) as err:
        parse_quantity("16GB")
    assert "'16GB'" in str(err.value) and "16Gi" in str(err.value)


def test_quantities_compare_by_value():
    assert Quantity("16Gi") == Quantity("16384Mi")
    assert Quantity("24Gi").compare(Quantity("16Gi")) == 1
    assert Quantity("4864Mi").compare(Quantity("16Gi")) == -1
    assert hash(Quantity("1Gi")) == hash(Quantity("1024Mi"))


def test_a_quantity_keeps_its_text_and_equals_only_quantities():
    q = Quantity("1024Mi")
    assert str(q) == "1024Mi" and repr(q) == "Quantity('1024Mi')"
    assert q.compare(Quantity("1Gi")) == 0
    # Both operators are defined: != must agree with ==.
    assert q != Quantity("1025Mi") and (q != Quantity("1Gi")) is False
    assert q != "1024Mi" and q != 1024 * 2 ** 20


def test_bytes_round_trip():
    assert to_bytes("24Gi") == 24 * 2 ** 30
    assert human_bytes(6 * 24 * 2 ** 30) == "144Gi"
    assert human_bytes(4864 * 2 ** 20) == "4864Mi"
    assert human_bytes(0) == "0"


def test_to_bytes_drops_fractions_of_a_byte():
    assert to_bytes("1.5") == 1 and to_bytes("500m") == 0 and to_bytes("1.5Ki") == 1536


@pytest.mark.parametrize("value,text", [
    (1536, "1536"), (2048, "2Ki"), (1000, "1000"), (2 ** 60, "1Ei"), (3 * 2 ** 50, "3Pi"), (1, "1"),
    ("1024", "1Ki"),
])
def test_human_bytes_uses_the_largest_binary_unit_that_divides_exactly(value, text):
    assert human_bytes(value) == text

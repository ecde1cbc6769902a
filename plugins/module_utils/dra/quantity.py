# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes resource quantities ("24Gi", "4864Mi", "500m") as exact numbers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
}
_QUANTITY_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")


class QuantityError(ValueError):
    pass


def parse_quantity(text):
    """Return the exact value of a Kubernetes quantity string as a Decimal."""
    if isinstance(text, (int, Decimal)):
        return Decimal(text)
    match = _QUANTITY_RE.match(str(text).strip())
    if not match:
        raise QuantityError("%r is not a Kubernetes quantity (examples: 16Gi, 4864Mi, 500m, 2)" % (text,))
    number, exponent, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        raise QuantityError("%r is not a Kubernetes quantity" % (text,))
    if exponent:
        return value * (Decimal(10) ** int(exponent[1:]))
    return value * _SUFFIXES[suffix or ""]


class Quantity:
    """A quantity that compares by value, as Kubernetes' CEL quantity type does
    (``quantity('16Gi') == quantity('16384Mi')`` is true)."""

    __slots__ = ("text", "value")

    def __init__(self, text):
        self.text = str(text)
        self.value = parse_quantity(text)

    def compare(self, other):
        return (self.value > other.value) - (self.value < other.value)

    def __eq__(self, other):
        return isinstance(other, Quantity) and self.value == other.value

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return "Quantity(%r)" % self.text

    def __str__(self):
        return self.text


def to_bytes(text):
    """Whole bytes of a memory quantity, for summaries."""
    return int(parse_quantity(text))


def human_bytes(value):
    """The largest binary unit that keeps the number whole, like Kubernetes prints memory."""
    value = int(value)
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIXES[suffix])
        if value and value % unit == 0:
            return "%d%s" % (value // unit, suffix)
    return str(value)

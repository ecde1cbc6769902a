# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes' CEL libraries for DRA selectors, as functions cel-python calls: quantities
(``quantity()``, ``isQuantity()``, ``compareTo``, ``add``, ``asInteger()`` ...), semantic
versions (``semver()``, ``semver(s, true)``, ``major()`` ...) and ``lowerAscii``/``upperAscii``.

A quantity is held as Kubernetes' resource.Quantity holds it (``KubernetesQuantity``): its
value, and the int64 form its parser keeps, from which ``isInteger()`` and ``asInteger()``
answer. A wrong argument gives a CEL evaluation error, never a Python exception.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    from celpy import celtypes
    from celpy.evaluation import CELEvalError
    HAS_CELPY = True
except ImportError:  # pragma: no cover - cel.py reports the missing library
    HAS_CELPY = False

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.semver import Semver, SemverError
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import Quantity, QuantityError, parse_quantity

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _fail(message):
    return CELEvalError(message)


# Power-of-ten exponent of each decimal suffix, and power-of-two exponent of each binary one,
# as Kubernetes' quantity parser reads them.
_DECIMAL_SUFFIX_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_QUANTITY_PARTS = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(.*)$")


def _fits_int64(number):
    return INT64_MIN <= number <= INT64_MAX


def _int64_form(text):
    """How Kubernetes' ParseQuantity holds an (already valid) quantity: (unscaled, scale), the
    value being unscaled * 10**scale, when it takes its int64 fast path, else None (an
    arbitrary-precision decimal).

    ``isInteger()``/``asInteger()`` answer from this form, not from the value alone: a quantity
    kept as a decimal is never an integer ("9223372036854775807", "1Ei"), and neither is one
    with a negative scale ("1000m", "1.0"). Mirrored so that the preview says what the
    scheduler will."""
    sign, whole, fraction, suffix = _QUANTITY_PARTS.match(text).groups()
    whole = whole.lstrip("0") or "0"
    fraction = fraction or ""
    if suffix in _BINARY_SUFFIX_EXPONENTS:
        if fraction:
            return None
        power_of_two = _BINARY_SUFFIX_EXPONENTS[suffix]
        # The parser's own estimate of the decimal digits a binary suffix uses up.
        spare_digits = 15 - len(whole) - power_of_two * 3 // 10 - 1
        multiplier, scale = 2 ** power_of_two, 0
    else:
        if suffix[:1] in ("e", "E") and len(suffix) > 1:
            scale = int(suffix[1:])
        else:
            scale = _DECIMAL_SUFFIX_EXPONENTS[suffix]
        spare_digits = 18 - len(whole) - len(fraction)
        multiplier = 1
    if spare_digits < 0:
        return None
    scale -= len(fraction)
    if scale < -9:
        return None
    unscaled = int(whole + fraction) * multiplier
    if not _fits_int64(unscaled):
        return None
    return (-unscaled if sign == "-" else unscaled, scale)


def _scaled_up(unscaled, scale):
    """unscaled * 10**scale (scale >= 0), or None where that leaves int64."""
    number = unscaled * 10 ** scale
    return number if _fits_int64(number) else None


def _int64_sum(left, right):
    """The int64 form of a sum as Kubernetes computes it (same scale, or the larger scale
    brought down to the smaller), None where it falls back to a decimal."""
    if left is None or right is None:
        return None
    (left_unscaled, left_scale), (right_unscaled, right_scale) = left, right
    if right_unscaled == 0:
        return left
    if left_unscaled == 0:
        return right
    scale = min(left_scale, right_scale)
    left_unscaled = _scaled_up(left_unscaled, left_scale - scale)
    right_unscaled = _scaled_up(right_unscaled, right_scale - scale)
    if left_unscaled is None or right_unscaled is None or not _fits_int64(left_unscaled + right_unscaled):
        return None
    return (left_unscaled + right_unscaled, scale)


class KubernetesQuantity(Quantity):
    """A quantity plus the form Kubernetes holds it in (see ``_int64_form``)."""

    __slots__ = ("int64_form",)

    def __init__(self, text):
        super(KubernetesQuantity, self).__init__(text)
        self.int64_form = _int64_form(self.text.strip())

    @classmethod
    def computed(cls, value, int64_form):
        """The result of arithmetic: its form follows from the operands, not from its text."""
        quantity = cls(str(value))
        quantity.int64_form = int64_form
        return quantity

    def as_int64(self):
        """The value as Kubernetes' AsInt64 gives it, or None where that fails."""
        if self.int64_form is None:
            return None
        unscaled, scale = self.int64_form
        if scale < 0:
            return None
        return _scaled_up(unscaled, scale)


def _quantity(text):
    try:
        return KubernetesQuantity(str(text))
    except QuantityError as exc:
        return _fail(str(exc))


def _is_quantity(text):
    try:
        parse_quantity(str(text))
        return celtypes.BoolType(True)
    except QuantityError:
        return celtypes.BoolType(False)


def _without_leading_zeros(part):
    """One dot-separated part with its leading zeros dropped, keeping a "0" where nothing or a
    non-digit would be left ("00" -> "0", "0-rc" -> "0-rc", "03-rc" -> "3-rc")."""
    if len(part) <= 1:
        return part
    stripped = part.lstrip("0")
    if not stripped or stripped[0] not in "0123456789":
        return "0" + stripped
    return stripped


def normalized_semver_text(text):
    """``text`` as Kubernetes' ``semver(text, true)`` rewrites it before the strict parse: one
    leading "v" dropped, leading zeros dropped from each part, a missing minor or patch
    filled with 0. A short version with a pre-release or build suffix is refused, since
    filling in the patch would put it in the wrong place. No whitespace is trimmed."""
    if text.startswith("v"):
        text = text[1:]
    parts = [_without_leading_zeros(part) for part in text.split(".", 2)]
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("%r: a version without patch cannot carry a pre-release or build suffix" % (text,))
        parts.extend(["0"] * (3 - len(parts)))
    return ".".join(parts)


def _parse_semver(text, normalize):
    if not normalize:
        return Semver(text)
    try:
        return Semver(normalized_semver_text(text))
    except SemverError as exc:
        raise SemverError("%r is not a semantic version even when normalized (%s)" % (text, exc))


def _semver_normalize_flag(normalize):
    """The optional second argument: Kubernetes declares it a bool, anything else is no overload."""
    return normalize is None or isinstance(normalize, celtypes.BoolType)


def _semver(text, normalize=None):
    if not _semver_normalize_flag(normalize):
        return _fail("no such overload: semver(string, %s)" % type(normalize).__name__)
    try:
        return _parse_semver(str(text), normalize)
    except SemverError as exc:
        return _fail(str(exc))


def _is_semver(text, normalize=None):
    if not _semver_normalize_flag(normalize):
        return _fail("no such overload: isSemver(string, %s)" % type(normalize).__name__)
    try:
        _parse_semver(str(text), normalize)
        return celtypes.BoolType(True)
    except SemverError:
        return celtypes.BoolType(False)


def _compare(left, right):
    if isinstance(left, Quantity) and isinstance(right, Quantity):
        return celtypes.IntType(left.compare(right))
    if isinstance(left, Semver) and isinstance(right, Semver):
        return celtypes.IntType(left.compare(right))
    return _fail("compareTo needs two quantities or two semvers, got %s and %s"
                 % (type(left).__name__, type(right).__name__))


def _greater(left, right):
    result = _compare(left, right)
    return result if isinstance(result, CELEvalError) else celtypes.BoolType(int(result) > 0)


def _less(left, right):
    result = _compare(left, right)
    return result if isinstance(result, CELEvalError) else celtypes.BoolType(int(result) < 0)


def _as_quantity(value):
    """A quantity operand; an int is one at scale 0, as Kubernetes' NewQuantity makes it."""
    if isinstance(value, KubernetesQuantity):
        return value
    if isinstance(value, (int, celtypes.IntType)) and not isinstance(value, celtypes.BoolType):
        return KubernetesQuantity.computed(int(value), (int(value), 0))
    raise TypeError(value)


def _add(left, right):
    try:
        left, right = _as_quantity(left), _as_quantity(right)
    except TypeError:
        return _fail("add needs quantities or integers")
    return KubernetesQuantity.computed(left.value + right.value, _int64_sum(left.int64_form, right.int64_form))


def _sub(left, right):
    try:
        left, right = _as_quantity(left), _as_quantity(right)
    except TypeError:
        return _fail("sub needs quantities or integers")
    negated = None if right.int64_form is None else (-right.int64_form[0], right.int64_form[1])
    return KubernetesQuantity.computed(left.value - right.value, _int64_sum(left.int64_form, negated))


def _as_integer(quantity):
    number = quantity.as_int64()
    if number is None:
        # Kubernetes' wording; it errors rather than truncating or wrapping.
        return _fail("cannot convert value to integer")
    return celtypes.IntType(number)


def _version_part(part):
    def getter(value):
        if isinstance(value, Semver):
            return celtypes.IntType(getattr(value, part))
        return _fail("%s() needs a semver" % part)
    return getter


def _quantity_method(name, fn):
    def method(value):
        if isinstance(value, KubernetesQuantity):
            return fn(value)
        return _fail("%s() needs a quantity" % name)
    return method


FUNCTIONS = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _compare,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "add": _add,
    "sub": _sub,
    "major": _version_part("major"),
    "minor": _version_part("minor"),
    "patch": _version_part("patch"),
    "sign": _quantity_method("sign", lambda q: celtypes.IntType((q.value > 0) - (q.value < 0))),
    "isInteger": _quantity_method("isInteger", lambda q: celtypes.BoolType(q.as_int64() is not None)),
    "asInteger": _quantity_method("asInteger", _as_integer),
    "asApproximateFloat": _quantity_method("asApproximateFloat", lambda q: celtypes.DoubleType(float(q.value))),
    "lowerAscii": lambda s: celtypes.StringType(str(s).lower()),
    "upperAscii": lambda s: celtypes.StringType(str(s).upper()),
}

# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local preview of DRA device selectors (CEL), to see which live devices a class matches.

Kubernetes evaluates selectors with cel-go plus its own libraries; here cel-python does the
evaluation and this module adds what Kubernetes adds: the ``device`` variable (driver,
attributes and capacity by domain), the quantity library (``quantity()``, ``compareTo`` ...)
and the semver library (``semver()``, ``semver(s, true)``, ``major()`` ...). An unknown
attribute domain is an empty map, as in Kubernetes; ``device.allowMultipleAllocations`` is
the slice's field (absent: false).

Before anything runs, each expression goes through what the API server checks when it
compiles one (cel_check: types, length, estimated cost): what the server would refuse is
refused here too (``Invalid``), never previewed as "matches nothing". The server stays the
authority: callers validate with a server-side dry run, and where this preview cannot judge
(a cost close to the limit, a function it does not know) it says so (``Unsupported``)
instead of guessing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import re

try:
    import celpy
    from celpy import celtypes
    from celpy.evaluation import CELEvalError
    HAS_CELPY = True
    CELPY_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported by the module
    HAS_CELPY = False
    CELPY_IMPORT_ERROR = exc

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel_check
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import Quantity, QuantityError
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.semver import Semver, SemverError
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import parse_quantity

STANDARD_DOMAIN = "resource.kubernetes.io"

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

# cel-python logs every failed evaluation at ERROR level; a preview expects failures.
logging.getLogger("celpy").setLevel(logging.CRITICAL)
logging.getLogger("Evaluator").setLevel(logging.CRITICAL)
logging.getLogger("NameContainer").setLevel(logging.CRITICAL)


class Unsupported(Exception):
    """The expression needs something the local preview cannot evaluate."""


class Invalid(Unsupported):
    """The API server would refuse the expression (compile error, not a condition, too long,
    too costly). A subclass of Unsupported, so that a caller that does not preview it fails
    or defers rather than reporting "matches nothing"."""

    def __init__(self, expression, verdict):
        self.expression, self.verdict = expression, verdict
        super(Invalid, self).__init__(self.sentence("the selector"))

    def sentence(self, name):
        """The refusal for the input called ``name``: the expression, what is wrong, the fix."""
        verdict = self.verdict
        if verdict.gives:  # said as a runtime non-bool result was, so that either reads the same
            return ("%s %r gives %s, not true or false, so the API server refuses it (%s); a selector must be a "
                    "condition: compare the value, e.g. %s == %s"
                    % (name, self.expression, verdict.gives, verdict.reason, self.expression,
                       "'...'" if verdict.gives == "a string" else "..."))
        return "%s %r would be refused by the API server: %s; %s" % (name, self.expression, verdict.reason,
                                                                     verdict.fix)


def _refusal(expression, verdict):
    """The exception for a cel_check verdict."""
    if verdict.kind == cel_check.REFUSED:
        return Invalid(expression, verdict)
    return Unsupported("%r cannot be previewed locally: %s; %s" % (expression, verdict.reason, verdict.fix))


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


def _typed_attribute(value):
    if "string" in value:
        return celtypes.StringType(value["string"])
    if "int" in value:
        return celtypes.IntType(value["int"])
    if "bool" in value:
        return celtypes.BoolType(value["bool"])
    if "version" in value:
        return Semver(value["version"])
    return None


def split_name(name, driver):
    """Attribute and capacity names: bare ones belong to the driver's domain."""
    if "/" in name:
        domain, _sep, short = name.rpartition("/")
        return domain, short
    return driver, name


if HAS_CELPY:
    class _DomainMap(celtypes.MapType):
        """``device.attributes[domain]``: a missing domain is an empty map, as in Kubernetes."""

        def __getitem__(self, key):
            try:
                return super(_DomainMap, self).__getitem__(key)
            except KeyError:
                return celtypes.MapType({})


def _by_domain(groups):
    return _DomainMap(dict((celtypes.StringType(d), celtypes.MapType(v)) for d, v in groups.items()))


def device_activation(driver, device):
    """The ``device`` CEL variable for one raw ResourceSlice device entry."""
    attributes, capacity = {}, {}
    for name, value in (device.get("attributes") or {}).items():
        domain, short = split_name(name, driver)
        typed = _typed_attribute(value)
        if typed is not None:
            attributes.setdefault(domain, {})[celtypes.StringType(short)] = typed
    for name, value in (device.get("capacity") or {}).items():
        domain, short = split_name(name, driver)
        capacity.setdefault(domain, {})[celtypes.StringType(short)] = KubernetesQuantity((value or {}).get("value", "0"))
    return {"device": celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(driver),
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(bool(device.get("allowMultipleAllocations"))),
        celtypes.StringType("attributes"): _by_domain(attributes),
        celtypes.StringType("capacity"): _by_domain(capacity),
    })}


def _unsupported_reason(message):
    text = str(message).split(" (in activation", maxsplit=1)[0]
    for marker in ("unbound function", "no such overload", "not supported", "undeclared reference"):
        if marker in text and "no such key" not in text:
            return text
    return None


# What lets an expression read an attribute it does not name: iterating a map (macros, size,
# the ``in`` operator) or indexing it with something other than a string literal.
_READS_UNNAMED = re.compile(r"\.\s*(exists|exists_one|all|filter|map|size)\s*\(|\bsize\s*\(|\bin\b|\[\s*[^'\"\s]")


class Selectors:
    """Compiled selectors; ``match`` answers for one device: (matched, runtime_error).

    ``match_cached`` gives the same answer, evaluated once per device as the expressions see it:
    a fleet's GPUs differ mostly in attributes no class names (uuid, pciBusID), and cel-python
    takes milliseconds per evaluation (over 8,000 devices and two classes, 69 of a report's 73 s).
    """

    def __init__(self, expressions):
        if not HAS_CELPY:
            raise Unsupported("the cel-python library is not installed (pip install cel-python)")
        self.expressions = list(expressions)
        text = " ".join(self.expressions)
        # None: every attribute may matter, so a device is its own key.
        self._named_in = None if _READS_UNNAMED.search(text) else text
        self._answers = {}
        self._env = celpy.Environment()
        self._programs = []
        for expression in self.expressions:
            verdict = cel_check.length_verdict(expression)
            if verdict:
                raise _refusal(expression, verdict)
            try:
                ast = self._env.compile(expression)
            except Exception as exc:  # noqa: BLE001 - celpy raises several parse error types
                raise Unsupported("cannot parse %r locally: %s" % (expression, _first_line(exc)))
            verdict = cel_check.judge(ast)
            if verdict:
                raise _refusal(expression, verdict)
            self._programs.append((expression, self._env.program(ast, functions=FUNCTIONS)))

    def non_bool(self, driver, device):
        """(expression, result) for the first expression that gives a value other than a bool on
        ``device`` (an evaluation error is not counted: it may be the device's), else None."""
        activation = device_activation(driver, device)
        for expression, program in self._programs:
            try:
                result = program.evaluate(activation)
            except Exception:  # noqa: BLE001 - errors are match()'s business
                continue
            if not isinstance(result, (celtypes.BoolType, CELEvalError)):
                return expression, result
        return None

    def _key(self, driver, device):
        """What of ``device`` the expressions can read: the driver, allowMultipleAllocations and
        every attribute and capacity whose short name appears in their text (all of them when
        they iterate)."""
        def seen(entries):
            return tuple(sorted((name, repr(value)) for name, value in (entries or {}).items()
                                if self._named_in is None or split_name(name, driver)[1] in self._named_in))
        return (driver, bool(device.get("allowMultipleAllocations")), seen(device.get("attributes")),
                seen(device.get("capacity")))

    def match_cached(self, driver, device):
        key = self._key(driver, device)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self.match(driver, device)
        return answer

    def match(self, driver, device):
        activation = device_activation(driver, device)
        for expression, program in self._programs:
            try:
                result = program.evaluate(activation)
            except CELEvalError as exc:
                result = exc
            except Exception as exc:  # noqa: BLE001 - cel-python may raise plain Python errors
                raise Unsupported("cannot evaluate %r locally: %s" % (expression, _first_line(exc)))
            if isinstance(result, CELEvalError):
                reason = _unsupported_reason(result.args[0] if result.args else result)
                if reason:
                    raise Unsupported("cannot evaluate %r locally: %s" % (expression, reason))
                return False, "%s: %s" % (expression, result.args[0] if result.args else result)
            if not isinstance(result, celtypes.BoolType):
                return False, "%s: result is %s, not a bool" % (expression, type(result).__name__)
            if not bool(result):
                return False, None
        return True, None


CEL_TYPE_NAMES = {"StringType": "a string", "IntType": "an int", "UintType": "an uint", "DoubleType": "a double",
                  "ListType": "a list", "MapType": "a map", "BytesType": "bytes", "NullType": "null",
                  "Quantity": "a quantity", "KubernetesQuantity": "a quantity", "Semver": "a semver",
                  "_DomainMap": "a map"}


def type_name(value):
    name = type(value).__name__
    return CEL_TYPE_NAMES.get(name, name)


def empty_device(driver):
    """A device with no attributes and no capacity, to find expressions that are never a bool."""
    return driver, {"name": "(any device)", "attributes": {}, "capacity": {}}


def non_bool_problem(named_expressions, driver, slices):
    """A sentence for the first selector that gives a value other than a bool - on a device
    without attributes or on a published device of ``driver`` - else None.

    ``named_expressions`` are (input name, expression) pairs, e.g. ("selectors[0]", "...").
    Kubernetes refuses such selectors; where a wait evaluates them itself they would match
    nothing until its timeout. A selector the API server would refuse (``Invalid``: not a
    condition, a type error, too long, too costly) is a problem too; expressions the preview
    cannot read are left to the API server."""
    devices = [empty_device(driver or "")]
    for item in slices or []:
        spec = item.get("spec") or {}
        devices.extend((spec.get("driver"), d) for d in spec.get("devices") or [])
    for name, expression in named_expressions:
        try:
            compiled = Selectors([expression])
        except Invalid as exc:
            return exc.sentence(name)
        except Unsupported:
            continue
        for device_driver, device in devices:
            try:
                found = compiled.non_bool(device_driver, device)
            except Unsupported:
                break
            if found:
                value = found[1]
                return ("%s %r gives %s (%s) on device %s, not true or false; a selector must be a condition: "
                        "compare the value, e.g. %s == %s" % (name, expression, type_name(value), value,
                                                              device.get("name"), expression,
                                                              "'...'" if type_name(value) == "a string" else "..."))
    return None


def _first_line(exc):
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local preview of DRA device selectors (CEL), to see which live devices a class matches.

Kubernetes evaluates selectors with cel-go plus its own libraries; here cel-python does the
evaluation and this module adds what Kubernetes adds: the ``device`` variable (driver,
attributes and capacity by domain, allowMultipleAllocations), the quantity library
(``quantity()``, ``compareTo`` ...) and the semver library (``semver()``, ``major()`` ...).
An unknown attribute domain is an empty map, as in Kubernetes. The API server stays the
authority on validity (type checks, cost limits): callers validate with a server-side dry
run and use this only to preview. Where an expression uses something this preview does
not know, it says so instead of guessing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging

try:
    import celpy
    from celpy import celtypes
    from celpy.evaluation import CELEvalError
    HAS_CELPY = True
    CELPY_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported by the module
    HAS_CELPY = False
    CELPY_IMPORT_ERROR = exc

from ansible_collections.dra.gpu.plugins.module_utils.quantity import Quantity, QuantityError
from ansible_collections.dra.gpu.plugins.module_utils.semver import Semver, SemverError, is_semver
from ansible_collections.dra.gpu.plugins.module_utils.quantity import parse_quantity

STANDARD_DOMAIN = "resource.kubernetes.io"

# cel-python logs every failed evaluation at ERROR level; a preview expects failures.
logging.getLogger("celpy").setLevel(logging.CRITICAL)
logging.getLogger("Evaluator").setLevel(logging.CRITICAL)
logging.getLogger("NameContainer").setLevel(logging.CRITICAL)


class Unsupported(Exception):
    """The expression needs something the local preview cannot evaluate."""


def _fail(message):
    return CELEvalError(message)


def _quantity(text):
    try:
        return Quantity(str(text))
    except QuantityError as exc:
        return _fail(str(exc))


def _is_quantity(text):
    try:
        parse_quantity(str(text))
        return celtypes.BoolType(True)
    except QuantityError:
        return celtypes.BoolType(False)


def _semver(text):
    try:
        return Semver(str(text))
    except SemverError as exc:
        return _fail(str(exc))


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
    if isinstance(value, Quantity):
        return value
    if isinstance(value, (int, celtypes.IntType)):
        return Quantity(str(int(value)))
    raise TypeError(value)


def _add(left, right):
    try:
        return Quantity(str(_as_quantity(left).value + _as_quantity(right).value))
    except (TypeError, QuantityError):
        return _fail("add needs quantities or integers")


def _sub(left, right):
    try:
        return Quantity(str(_as_quantity(left).value - _as_quantity(right).value))
    except (TypeError, QuantityError):
        return _fail("sub needs quantities or integers")


def _version_part(part):
    def getter(value):
        if isinstance(value, Semver):
            return celtypes.IntType(getattr(value, part))
        return _fail("%s() needs a semver" % part)
    return getter


def _quantity_method(name, fn):
    def method(value):
        if isinstance(value, Quantity):
            return fn(value)
        return _fail("%s() needs a quantity" % name)
    return method


FUNCTIONS = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": lambda text: celtypes.BoolType(is_semver(str(text))),
    "compareTo": _compare,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "add": _add,
    "sub": _sub,
    "major": _version_part("major"),
    "minor": _version_part("minor"),
    "patch": _version_part("patch"),
    "sign": _quantity_method("sign", lambda q: celtypes.IntType((q.value > 0) - (q.value < 0))),
    "isInteger": _quantity_method("isInteger", lambda q: celtypes.BoolType(q.value == q.value.to_integral_value())),
    "asInteger": _quantity_method("asInteger", lambda q: celtypes.IntType(int(q.value))),
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
        capacity.setdefault(domain, {})[celtypes.StringType(short)] = Quantity((value or {}).get("value", "0"))
    return {"device": celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(driver),
        celtypes.StringType("attributes"): _by_domain(attributes),
        celtypes.StringType("capacity"): _by_domain(capacity),
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(bool(device.get("allowMultipleAllocations"))),
    })}


def _unsupported_reason(message):
    text = str(message).split(" (in activation", maxsplit=1)[0]
    for marker in ("unbound function", "no such overload", "not supported", "undeclared reference"):
        if marker in text and "no such key" not in text:
            return text
    return None


class Selectors:
    """Compiled selectors; ``match`` answers for one device: (matched, runtime_error)."""

    def __init__(self, expressions):
        if not HAS_CELPY:
            raise Unsupported("the cel-python library is not installed (pip install cel-python)")
        self.expressions = list(expressions)
        self._env = celpy.Environment()
        self._programs = []
        for expression in self.expressions:
            try:
                ast = self._env.compile(expression)
            except Exception as exc:  # noqa: BLE001 - celpy raises several parse error types
                raise Unsupported("cannot parse %r locally: %s" % (expression, _first_line(exc)))
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
                  "Quantity": "a quantity", "Semver": "a semver", "_DomainMap": "a map"}


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
    nothing until its timeout. Expressions the preview cannot read are left to the API server."""
    devices = [empty_device(driver or "")]
    for item in slices or []:
        spec = item.get("spec") or {}
        devices.extend((spec.get("driver"), d) for d in spec.get("devices") or [])
    for name, expression in named_expressions:
        try:
            compiled = Selectors([expression])
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

# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local preview of DRA device selectors (CEL), to see which live devices a class matches.

Kubernetes evaluates selectors with cel-go plus its own libraries; here cel-python does the
evaluation and this module adds what Kubernetes adds: the ``device`` variable (driver,
attributes and capacity by domain) and the quantity and semver libraries (kubernetes_library).
An unknown attribute domain is an empty map, as in Kubernetes; ``device.allowMultipleAllocations``
is the slice's field (absent: false).

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
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.kubernetes_library import FUNCTIONS, KubernetesQuantity
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.semver import Semver

STANDARD_DOMAIN = "resource.kubernetes.io"

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


# The ``device`` variable, from a raw ResourceSlice device entry, typed as Kubernetes declares it.
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

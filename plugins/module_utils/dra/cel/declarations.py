# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CEL types of a DRA device selector and what Kubernetes declares for them: the ``device``
variable's fields and size bounds, each library function's overloads, the result types of
other known functions, and what cel-go's cost estimator charges for a call.

The expression checker reads these tables; they mirror Kubernetes 1.35 (k8s.io/dynamic-resource-
allocation/cel, apiserver/pkg/cel/library) and cel-go's checker (checker/cost.go).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

MAX_UINT64 = 2 ** 64 - 1  # cel-go's "unknown" size and its saturated cost


class CelType(tuple):
    """A CEL type: its kind ("int", "list", "quantity" ...) and the element types of a list or map."""

    __slots__ = ()
    NAMES = {"quantity": "kubernetes.Quantity", "semver": "kubernetes.Semver", "device": "kubernetes.DRADevice",
             "unknown": "dyn"}

    def __new__(cls, kind, *params):
        return tuple.__new__(cls, (kind,) + params)

    kind = property(lambda self: self[0])
    params = property(lambda self: self[1:])
    # cel-go's dyn, its any (an attribute value), or unknown here: each fits anything.
    vague = property(lambda self: self[0] in ("dyn", "any", "unknown"))

    def __str__(self):
        if self.params:
            return "%s(%s)" % (self.kind, ", ".join(str(p) for p in self.params))
        return self.NAMES.get(self.kind, self.kind)


UNKNOWN = CelType("unknown")  # not modelled here; cel-go may know better, so it is never refused
DYN, ANY, BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL, TYPE = (CelType(k) for k in (
    "dyn", "any", "bool", "int", "uint", "double", "string", "bytes", "null", "type"))
QUANTITY, SEMVER, DEVICE, TIMESTAMP, DURATION = (CelType(k) for k in (
    "quantity", "semver", "device", "timestamp", "duration"))
LIST, MAP = CelType("list", UNKNOWN), CelType("map", UNKNOWN, UNKNOWN)
DEVICE_FIELDS = {"driver": STRING, "allowMultipleAllocations": BOOL,
                 "attributes": CelType("map", STRING, CelType("map", STRING, ANY)),
                 "capacity": CelType("map", STRING, CelType("map", STRING, QUANTITY))}
NUMBERS = ("int", "uint", "double")
OBJECTS = ("quantity", "semver", "device")
SCALARS = ("bool", "int", "uint", "double", "timestamp", "duration")  # cel-go's fixed size 1


def fits(actual, wanted):
    """Whether a value of type ``actual`` may be passed where ``wanted`` is declared."""
    if actual.vague or wanted.vague:
        return True
    if actual.kind != wanted.kind:
        return actual.kind == "null" and wanted.kind in OBJECTS
    return all(fits(a, w) for a, w in zip(actual.params, wanted.params))


def join_types(left, right):
    """The type of a value that is either, None where cel-go finds no common type."""
    if left.vague or right.vague:  # as cel-go joins them: dyn wins over any, any over the rest
        return [t for t in (UNKNOWN, DYN, ANY) if t in (left, right)][0]
    if fits(left, right) and fits(right, left):
        return right if left.kind == "null" else left
    return None


def vague_result(*types):
    """What cel-go makes of an operation on vague operands: ``dyn``, unless one is unknown here."""
    return UNKNOWN if UNKNOWN in types else DYN


# Kubernetes' declared maximum sizes of what ``device`` holds (the DRA compiler's size
# estimator): (size, key, element, fields). Attribute values share one bound whatever their name.
_ATTRIBUTE_VALUE = (64, None, None, None)
_DEVICE_SIZES = (0, None, None, {
    "driver": (63, None, None, None), "allowMultipleAllocations": (1, None, None, None),
    "attributes": (32, (63, None, None, None), (32, (32, None, None, None), _ATTRIBUTE_VALUE, None), None),
    "capacity": (32, (63, None, None, None), (32, (32, None, None, None), (0, None, None, None), None), None)})


def declared_size(path):
    """The bound Kubernetes declares for what ``path`` (a field path from ``device``) reaches, else None."""
    node = _DEVICE_SIZES if path and path[0] == "device" else None
    for step in (path or ())[1:]:
        if step in ("@items", "@values"):
            node = node[2]
        elif step == "@keys":
            node = node[1]
        elif node[3] and step in node[3]:
            node = node[3][step]
        else:
            node = _ATTRIBUTE_VALUE if node[2] is _ATTRIBUTE_VALUE else None
        if node is None:
            return None
    return node[0] if node else None


def saturated_sum(*numbers):  # cel-go's sums and products of costs and sizes saturate instead of overflowing
    return min(sum(numbers), MAX_UINT64)


def saturated_product(left, right):
    return min(left * right, MAX_UINT64)


def by_cost_factor(number, factor):
    """cel-go's MultiplyByCostFactor: in floating point, rounded up, saturating at 2**64 - 1."""
    number = float(number)
    if number > 0 and number > float(MAX_UINT64) / factor:
        return MAX_UINT64
    product = math.ceil(number * factor)
    return MAX_UINT64 if product >= 2.0 ** 64 else int(product)


# Functions whose every overload Kubernetes 1.35 declares is listed: (receiver forms, global
# forms); another receiver, argument or form is a compile error. ``sign`` is global only.
_Q, _S, _T = (QUANTITY,), (SEMVER,), (STRING,)
OVERLOADS = {
    "quantity": ([], [(_T, QUANTITY)]), "isQuantity": ([], [(_T, BOOL)]), "sign": ([], [(_Q, INT)]),
    "semver": ([], [(_T, SEMVER), ((STRING, BOOL), SEMVER)]), "isSemver": ([], [(_T, BOOL), ((STRING, BOOL), BOOL)]),
    "compareTo": ([(QUANTITY, _Q, INT), (SEMVER, _S, INT)], []),
    "isGreaterThan": ([(QUANTITY, _Q, BOOL), (SEMVER, _S, BOOL)], []),
    "isLessThan": ([(QUANTITY, _Q, BOOL), (SEMVER, _S, BOOL)], []),
    "add": ([(QUANTITY, _Q, QUANTITY), (QUANTITY, (INT,), QUANTITY)], []),
    "sub": ([(QUANTITY, _Q, QUANTITY), (QUANTITY, (INT,), QUANTITY)], []),
    "isInteger": ([(QUANTITY, (), BOOL)], []), "asInteger": ([(QUANTITY, (), INT)], []),
    "asApproximateFloat": ([(QUANTITY, (), DOUBLE)], []),
    "major": ([(SEMVER, (), INT)], []), "minor": ([(SEMVER, (), INT)], []), "patch": ([(SEMVER, (), INT)], []),
    "startsWith": ([(STRING, _T, BOOL)], []), "endsWith": ([(STRING, _T, BOOL)], []),
    "contains": ([(STRING, _T, BOOL)], []), "matches": ([(STRING, _T, BOOL)], [((STRING, STRING), BOOL)]),
    "lowerAscii": ([(STRING, (), STRING)], []), "upperAscii": ([(STRING, (), STRING)], []),
    "size": ([(t, (), INT) for t in (STRING, BYTES, LIST, MAP)], [((t,), INT) for t in (STRING, BYTES, LIST, MAP)]),
}
# Conversions: the result, and the argument kinds some overload takes.
CONVERSIONS = {"int": (INT, NUMBERS + ("string", "timestamp", "duration")), "uint": (UINT, NUMBERS + ("string",)),
               "double": (DOUBLE, NUMBERS + ("string",)), "bool": (BOOL, ("bool", "string")),
               "string": (STRING, NUMBERS + ("string", "bytes", "bool", "timestamp", "duration", "type")),
               "bytes": (BYTES, ("bytes", "string")), "timestamp": (TIMESTAMP, ("timestamp", "string", "int")),
               "duration": (DURATION, ("duration", "string", "int")), "type": (TYPE, None)}
# Other functions whose result type is known, whatever their receiver (cel-go's string
# extension and Kubernetes' regex library).
OPEN_RESULTS = {"split": CelType("list", STRING), "findAll": CelType("list", STRING), "find": STRING,
                "substring": STRING, "trim": STRING, "charAt": STRING, "indexOf": INT, "lastIndexOf": INT}
# Cost (not counting receiver and arguments) and result size of a call, as Kubernetes' and
# cel-go's estimators give them; any other known call costs 1.
CALL_COSTS = {
    "quantity": lambda t, a: (by_cost_factor(a[0].sized, 0.1), None),
    "startsWith": lambda t, a: (by_cost_factor(a[0].sized, 0.1), None),
    "contains": lambda t, a: (saturated_product(by_cost_factor(t.sized, 0.1), by_cost_factor(a[0].sized, 0.1)), None),
    "matches": lambda t, a: (saturated_product(by_cost_factor(saturated_sum(t.sized, 1), 0.1),
                                               by_cost_factor(a[0].sized, 0.25)), None),
    "find": lambda t, a: (saturated_product(by_cost_factor(saturated_sum(t.sized, 1), 0.1),
                                            by_cost_factor(a[0].sized, 0.25)), t.size),
    "lowerAscii": lambda t, a: (by_cost_factor(t.sized, 0.1), t.size),
    "indexOf": lambda t, a: (by_cost_factor(t.sized, 0.1), None),
    "split": lambda t, a: (by_cost_factor(t.sized, 0.2), t.size),
}
for _alias, _same in (("isQuantity", "quantity"), ("semver", "quantity"), ("isSemver", "quantity"),
                      ("endsWith", "startsWith"), ("upperAscii", "lowerAscii"), ("substring", "lowerAscii"),
                      ("trim", "lowerAscii"), ("findAll", "find"), ("lastIndexOf", "indexOf")):
    CALL_COSTS[_alias] = CALL_COSTS[_same]
GLOBAL_PRICED = ("quantity", "isQuantity", "semver", "isSemver")  # cel-go prices matches() only as a method
ONE_COST = set(OVERLOADS) | set(OPEN_RESULTS) | set(CONVERSIONS) | set(
    "getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear getMonth getHours getMilliseconds getMinutes "
    "getSeconds".split())
MACROS = ("all", "exists", "exists_one", "existsOne", "map", "filter")
TYPE_NAMES = ("bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type", "dyn")


def signatures(name):
    """Each overload Kubernetes declares for function ``name``, as a refusal names them."""
    members, functions = OVERLOADS[name]
    return ["%s.%s(%s)" % (receiver, name, ", ".join(str(p) for p in params)) for receiver, params, _r in members] + [
        "%s(%s)" % (name, ", ".join(str(p) for p in params)) for params, _r in functions]

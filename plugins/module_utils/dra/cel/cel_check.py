# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the API server decides about a DRA device selector before anything runs: its type
check and its cost estimate, over cel-python's parsed expression (a lark tree).

Kubernetes compiles a selector with cel-go in the DRA environment (k8s.io/dynamic-resource-
allocation/cel, compile.go) and refuses it when it does not type-check, when its type is neither
bool nor the unknown type, when it is over 10Ki bytes (TooLong) or when cel-go's estimated
worst-case cost exceeds 1,000,000 (Forbidden). This module mirrors those answers, so that the
preview refuses what the server refuses instead of answering false for it:

* types are inferred bottom-up for the declared ``device`` (attribute values are cel-go's
  ``any``, capacities are quantities), the quantity and semver libraries and CEL's
  operators and macros; only a type error that is certain is reported, and whatever is
  not modelled is unknown, which fits anything;
* the cost follows cel-go's checker estimator (checker/cost.go), Kubernetes' library
  estimator (apiserver/pkg/cel/library/cost.go) and the DRA size bounds (32 attributes per
  device, 63-character domains, 32-character names, 64-character values). Where the
  estimate rests on something not modelled, or lies within 10% of the limit, the verdict
  is to defer to the server's dry run rather than to guess.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import math
import re

MAX_EXPRESSION_BYTES = 10 * 1024
COST_LIMIT = 1000000
MAX_UINT64 = 2 ** 64 - 1  # cel-go's "unknown" size and its saturated cost

REFUSED, DEFERRED = "refused", "deferred"
DRY_RUN = "check it with a server-side dry run (kubectl apply --dry-run=server)"


class Verdict:
    """REFUSED (the API server would refuse it) or DEFERRED (only the server can say), why, and the
    fix; ``gives`` names the result of an expression that is not a condition ("a string")."""

    def __init__(self, kind, reason, fix, gives=None, cost=None):
        self.kind, self.reason, self.fix, self.gives, self.cost = kind, reason, fix, gives, cost


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
PHRASES = {"string": "a string", "int": "an int", "uint": "an uint", "double": "a double", "bytes": "bytes",
           "quantity": "a quantity", "semver": "a semver", "list": "a list", "map": "a map", "null": "null",
           "dyn": "a value of no declared type (dyn)"}
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


def _join(left, right):
    """The type of a value that is either, None where cel-go finds no common type."""
    if left.vague or right.vague:  # as cel-go joins them: dyn wins over any, any over the rest
        return [t for t in (UNKNOWN, DYN, ANY) if t in (left, right)][0]
    if fits(left, right) and fits(right, left):
        return right if left.kind == "null" else left
    return None


def _vague_result(*types):
    """What cel-go makes of an operation on vague operands: ``dyn``, unless one is unknown here."""
    return UNKNOWN if UNKNOWN in types else DYN


# Kubernetes' declared maximum sizes of what ``device`` holds (the DRA compiler's size
# estimator): (size, key, element, fields). Attribute values share one bound whatever their name.
_ATTRIBUTE_VALUE = (64, None, None, None)
_DEVICE_SIZES = (0, None, None, {
    "driver": (63, None, None, None), "allowMultipleAllocations": (1, None, None, None),
    "attributes": (32, (63, None, None, None), (32, (32, None, None, None), _ATTRIBUTE_VALUE, None), None),
    "capacity": (32, (63, None, None, None), (32, (32, None, None, None), (0, None, None, None), None), None)})


def _declared_size(path):
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


def _add(*numbers):  # cel-go's sums and products of costs and sizes saturate instead of overflowing
    return min(sum(numbers), MAX_UINT64)


def _times(left, right):
    return min(left * right, MAX_UINT64)


def _by_factor(number, factor):
    """cel-go's MultiplyByCostFactor: in floating point, rounded up, saturating at 2**64 - 1."""
    number = float(number)
    if number > 0 and number > float(MAX_UINT64) / factor:
        return MAX_UINT64
    product = math.ceil(number * factor)
    return MAX_UINT64 if product >= 2.0 ** 64 else int(product)


class _Node:
    """One checked sub-expression: its type, worst-case cost, size (None: unknown), field path
    from ``device`` (None: not reachable) and the largest element of a literal container."""

    __slots__ = ("type", "cost", "size", "path", "entry")

    def __init__(self, type_, cost, size=None, path=None, entry=None):
        self.type, self.cost, self.size, self.path, self.entry = type_, cost, size, path, entry

    @property
    def sized(self):
        return MAX_UINT64 if self.size is None else self.size


def _sized(type_, cost, path=None, size=None, entry=None):
    """A node whose size cel-go looks up as it does: its own, the declared bound, the scalar 1."""
    if size is None:
        size = _declared_size(path)
    if size is None and type_.kind in SCALARS:
        size = 1
    return _Node(type_, cost, size, path, entry)


class _CompileError(Exception):
    def __init__(self, message, function=None):
        super(_CompileError, self).__init__(message)
        self.function = function


def _no_overload(name, args, target=None):
    listed = "(%s)" % ", ".join(str(a.type) for a in args)
    return _CompileError("found no matching overload for '%s' applied to '%s'"
                         % (name, listed if target is None else "%s.%s" % (target.type, listed)), name)


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
    "quantity": lambda t, a: (_by_factor(a[0].sized, 0.1), None),
    "startsWith": lambda t, a: (_by_factor(a[0].sized, 0.1), None),
    "contains": lambda t, a: (_times(_by_factor(t.sized, 0.1), _by_factor(a[0].sized, 0.1)), None),
    "matches": lambda t, a: (_times(_by_factor(_add(t.sized, 1), 0.1), _by_factor(a[0].sized, 0.25)), None),
    "find": lambda t, a: (_times(_by_factor(_add(t.sized, 1), 0.1), _by_factor(a[0].sized, 0.25)), t.size),
    "lowerAscii": lambda t, a: (_by_factor(t.sized, 0.1), t.size),
    "indexOf": lambda t, a: (_by_factor(t.sized, 0.1), None),
    "split": lambda t, a: (_by_factor(t.sized, 0.2), t.size),
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
_ESCAPE = re.compile(r"\\(?:[0-3][0-7]{2}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_PASS_THROUGH = ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                 "member", "primary")


def _subtrees(tree):
    return [c for c in tree.children if c is not None]


def _leaf(tree, levels=_PASS_THROUGH):
    """What a sub-expression is once the grammar's one-child levels are passed (by default not
    parentheses: cel-go reads !!x and !(!x) differently)."""
    while getattr(tree, "data", None) in levels and len(_subtrees(tree)) == 1:
        tree = _subtrees(tree)[0]
    return tree


def _simple_name(tree):
    """The identifier an argument is, e.g. the ``d`` of ``exists(d, ...)``; else None."""
    leaf = _leaf(tree)
    return str(leaf.children[0]) if getattr(leaf, "data", None) == "ident" else None


def _arguments(tree):
    lists = [c for c in _subtrees(tree) if getattr(c, "data", None) == "exprlist"]
    return _subtrees(lists[0]) if lists else []


def _string_length(token):
    """Characters of a string literal (bytes of a bytes literal), an escape counting as one."""
    text = str(token).lstrip("bB")
    quoted = text.lstrip("rR")
    width = 3 if quoted[:3] in ('"""', "'" * 3) else 1
    body = quoted[width:-width]
    return len(body if text[:1] in "rR" else _ESCAPE.sub("x", body))


@contextlib.contextmanager
def _scope(scopes, bound):
    """Comprehension and bind variables, visible while their body is checked."""
    for name, node in bound.items():
        scopes.setdefault(name, []).append(node)
    yield
    for name in bound:
        scopes[name].pop()


class Checker:
    """One walk over the tree: types bottom-up, cel-go's cost alongside."""

    def __init__(self):
        self.scopes = {}
        self.unmodelled = []  # why the cost may differ from the API server's
        self.unknown_fields = []

    def visit(self, tree):
        kind = getattr(tree, "data", None)
        children = _subtrees(tree)
        if kind in _PASS_THROUGH + ("paren_expr",) and len(children) == 1:
            return self.visit(children[0])
        handler = getattr(self, "_" + str(kind), None)
        if handler is None:
            self.unmodelled.append(str(kind))
            return _Node(UNKNOWN, 1)
        return handler(tree, children)

    # ----- operators -----------------------------------------------------------------

    def _expr(self, _tree, children):
        condition, yes, no = (self.visit(c) for c in children)
        self._want_bool("_?_:_", [condition, yes, no], condition)
        joined = _join(yes.type, no.type)
        if joined is None:
            raise _no_overload("_?_:_", [condition, yes, no])
        entry = None if yes.entry is None or no.entry is None else max(yes.entry, no.entry)
        return _Node(joined, _add(condition.cost, max(yes.cost, no.cost)), max(yes.sized, no.sized), None, entry)

    def _want_bool(self, name, nodes, *operands):
        if any(not fits(o.type, BOOL) for o in operands):
            raise _no_overload(name, nodes)

    def _conditionalor(self, tree, children):
        left, right = self.visit(children[0]), self.visit(children[1])
        self._want_bool("_||_" if tree.data == "conditionalor" else "_&&_", [left, right], left, right)
        return _sized(BOOL, _add(left.cost, right.cost))  # && and || cost their operands only

    _conditionaland = _conditionalor

    def _binary(self, children):
        operator = children[0].data.split("_", 1)[1]
        return operator, self.visit(_subtrees(children[0])[0]), self.visit(children[1])

    def _relation(self, _tree, children):
        operator, left, right = self._binary(children)
        nodes, cost = [left, right], _add(left.cost, right.cost)
        if operator == "in":
            container = right.type
            if container.kind in ("list", "map"):
                ok, own = fits(left.type, container.params[0]), right.sized if container.kind == "list" else 1
            else:
                ok, own = container.vague, max(right.sized, 1)
            if not ok:
                raise _no_overload("@in", nodes)
            return _sized(BOOL, _add(cost, own))
        symbol = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[operator]
        # Comparing texts walks the shorter one; Kubernetes prices == (not !=) of two quantities at 1.
        text_cost = _by_factor(min(left.sized, right.sized), 0.1)
        if operator in ("eq", "ne"):
            if not (fits(left.type, right.type) or fits(right.type, left.type)):
                raise _no_overload("_%s_" % symbol, nodes)
            same_object = left.type == right.type and left.type.kind in ("quantity", "semver")
            return _sized(BOOL, _add(cost, 1 if operator == "eq" and same_object else text_cost))
        kinds = set(t.kind for t in (left.type, right.type) if not t.vague)
        ordered = ("string", "bytes", "bool", "timestamp", "duration", "null")  # each with its own kind only
        if not (kinds <= set(NUMBERS) or len(kinds) <= 1 and kinds <= set(ordered)):
            raise _no_overload("_%s_" % symbol, nodes)
        own = text_cost if kinds and kinds <= {"string", "bytes"} else 1 if kinds else max(1, text_cost)
        return _sized(BOOL, _add(cost, own))

    def _addition(self, _tree, children):
        operator, left, right = self._binary(children)
        allowed = {"add": NUMBERS + ("string", "bytes", "list", "timestamp", "duration"),
                   "sub": NUMBERS + ("timestamp", "duration"), "mul": NUMBERS, "div": NUMBERS,
                   "mod": ("int", "uint")}[operator]
        definite = [t for t in (left.type, right.type) if not t.vague]
        times = [t for t in definite if t.kind in ("timestamp", "duration")]
        if any(t.kind not in allowed for t in definite) or (
                len(definite) == 2 and not times and _join(definite[0], definite[1]) is None):
            symbol = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%"}[operator]
            raise _no_overload("_%s_" % symbol, [left, right])
        cost = _add(left.cost, right.cost)
        result = UNKNOWN if times else definite[0] if definite else _vague_result(left.type, right.type)
        if len(definite) == 2 and result.kind == "list":
            result = CelType("list", _join(left.type.params[0], right.type.params[0]))
        if operator != "add" or times or (definite and result.kind in NUMBERS + ("list",)):
            entry = None if left.entry is None or right.entry is None else max(left.entry, right.entry)
            size = _add(left.sized, right.sized) if result.kind == "list" else None
            return _sized(result, _add(cost, 1), size=size, entry=entry)
        size = _add(left.sized, right.sized)  # joining texts walks the result
        own = _by_factor(size, 0.1)
        return _sized(result, _add(cost, own if definite else max(1, own)), size=size)

    _multiplication = _addition

    def _unary(self, _tree, children):
        operator, operand_tree, count = children[0].data, children[1], 1
        # cel-go drops a double negation written !!x or --x (not !(!x)).
        while getattr(operand_tree, "data", None) == "unary" and _subtrees(operand_tree)[0].data == operator:
            count, operand_tree = count + 1, _subtrees(operand_tree)[1]
        leaf = _leaf(operand_tree)
        if operator == "unary_neg" and getattr(leaf, "data", None) == "literal" and str(leaf.children[0])[:1] == "-":
            count += 1  # cel-python reads "--1" as -(-1), cel-go as two negations of 1
        operand = self.visit(operand_tree)
        if count % 2 == 0:
            return operand
        if operator == "unary_not":
            self._want_bool("!_", [operand], operand)
            return _sized(BOOL, _add(operand.cost, 1))
        if not operand.type.vague and operand.type.kind not in ("int", "double", "duration"):
            raise _no_overload("-_", [operand])
        result = _vague_result(operand.type) if operand.type.vague else operand.type
        return _sized(result, _add(operand.cost, 1))

    # ----- names, fields, literals ---------------------------------------------------

    def _ident(self, tree, _children):
        name = str(tree.children[0])
        if self.scopes.get(name):
            var = self.scopes[name][-1]
            node = _sized(var.type, 1, var.path, entry=var.entry)
            if node.size is None:
                node.size = var.size
            return node
        if name == "device":
            return _Node(DEVICE, 1, 0, ("device",))
        if name not in TYPE_NAMES:
            self.unmodelled.append("the name %r" % name)
        return _Node(TYPE if name in TYPE_NAMES else UNKNOWN, 1)

    def _select(self, operand, name):
        target = operand.type
        path = operand.path + (name,) if operand.path else None
        if target.kind == "device":
            if name not in DEVICE_FIELDS:
                self.unknown_fields.append(name)
            return _sized(DEVICE_FIELDS.get(name, UNKNOWN), 1, path)
        if target.kind == "map":
            return _sized(target.params[1], 1, path)
        if target.vague:  # cel-go charges a select only on a map or an object
            return _sized(_vague_result(target), 0, path)
        raise _CompileError("type '%s' does not support field selection" % (target,))

    def _member_dot(self, _tree, children):
        operand = self.visit(children[0])
        node = self._select(operand, str(children[1]))
        node.cost = _add(node.cost, operand.cost)
        return node

    def _member_index(self, _tree, children):
        operand, key = self.visit(children[0]), self.visit(children[1])
        container, cost = operand.type, _add(operand.cost, key.cost, 1)
        if container.kind == "list" and fits(key.type, INT):
            return _sized(container.params[0], cost, operand.path and operand.path + ("@items",), operand.entry)
        if container.kind == "map" and fits(key.type, container.params[0]):
            return _sized(container.params[1], cost, operand.path and operand.path + ("@values",), operand.entry)
        if container.vague or container.kind == "null":  # cel-go accepts null[0]
            self.unmodelled.append("indexing a value of unknown type")
            return _sized(_vague_result(container), cost)
        raise _no_overload("_[_]", [operand, key])

    def _literal(self, tree, _children):
        token = tree.children[0]
        if token.type in ("STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"):
            return _Node(BYTES if token.type == "BYTES_LIT" else STRING, 0, _string_length(token))
        kinds = {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "BOOL_LIT": BOOL, "NULL_LIT": NULL}
        return _Node(kinds[token.type], 0, 1)

    def _aggregate(self, nodes, what):
        joined = None
        for node in nodes:
            if joined is None:
                joined = node.type
            elif not (joined.vague and node.type.vague or fits(node.type, joined) and fits(joined, node.type)):
                raise _CompileError("expected type '%s' but found '%s' in a %s literal" % (joined, node.type, what))
        return joined or UNKNOWN

    def _list_lit(self, tree, _children):
        items = [self.visit(c) for c in _arguments(tree)]
        return _Node(CelType("list", self._aggregate(items, "list")), _add(10, *[i.cost for i in items]),
                     len(items), None, max([i.sized for i in items] or [0]))

    def _map_lit(self, _tree, children):
        parts = [self.visit(c) for c in (_subtrees(children[0]) if children else [])]
        keys, values = parts[0::2], parts[1::2]
        return _Node(CelType("map", self._aggregate(keys, "map"), self._aggregate(values, "map")),
                     _add(30, *[p.cost for p in parts]), len(keys), None, max([v.sized for v in values] or [0]))

    def _member_object(self, _tree, _children):
        self.unmodelled.append("a message literal")
        return _Node(UNKNOWN, 40)

    # ----- calls and macros ----------------------------------------------------------

    def _ident_arg(self, tree, children):
        name, args = str(children[0]), _arguments(tree)
        inner = _leaf(args[0], _PASS_THROUGH + ("paren_expr",)) if len(args) == 1 else None
        if name == "has" and getattr(inner, "data", None) == "member_dot":
            operand = self.visit(_subtrees(inner)[0])
            self._select(operand, str(_subtrees(inner)[1]))
            return _sized(BOOL, operand.cost)  # Kubernetes prices a presence test at 0
        nodes = [self.visit(a) for a in args]
        if name == "dyn" and len(nodes) == 1:
            return _Node(DYN, _add(nodes[0].cost, 1), nodes[0].size, None, nodes[0].entry)
        if name in CONVERSIONS and len(nodes) == 1:
            return self._conversion(name, nodes[0])
        return self._call(name, None, nodes)

    def _conversion(self, name, node):
        result, takes = CONVERSIONS[name]
        if takes and not node.type.vague and node.type.kind not in takes:
            raise _no_overload(name, [node])
        own, size = 1, None
        if name in ("string", "bytes") and (node.type.vague or node.type.kind in ("string", "bytes")) \
                and node.type.kind != name:  # string <-> bytes walks the text; identity costs 1
            own = _by_factor(node.sized, 0.1) if not node.type.vague else max(1, _by_factor(node.sized, 0.1))
            size = node.size if node.size is None or name == "string" else _times(node.size, 4)
        return _sized(result, _add(own, node.cost), size=size)

    def _call(self, name, target, nodes):
        result = self._resolve(name, target, nodes) if name in OVERLOADS else OPEN_RESULTS.get(name, UNKNOWN)
        own, size = 1, None
        if name in CALL_COSTS and (target is not None or name in GLOBAL_PRICED):
            try:
                own, size = CALL_COSTS[name](target, nodes)
            except IndexError:  # fewer arguments than the overload the estimator prices
                self.unmodelled.append("%s() with %d arguments" % (name, len(nodes)))
        elif name not in ONE_COST or name in ("indexOf", "lastIndexOf") and target.type.kind == "list":
            self.unmodelled.append("the function %s()" % name)
        receiver_cost = target.cost if target is not None else 0
        return _sized(result, _add(receiver_cost, own, *[n.cost for n in nodes]), size=size)

    def _resolve(self, name, target, nodes):
        members, functions = OVERLOADS[name]
        if target is None:
            candidates = functions
        elif target.type == UNKNOWN and members:
            # Arguments are not checked: the receiver may be a namespace (sets.contains(a, b)).
            results = set(result for _receiver, _params, result in members)
            return results.pop() if len(results) == 1 else UNKNOWN
        else:
            candidates = [(params, result) for receiver, params, result in members if fits(target.type, receiver)]
        for params, result in candidates:
            if len(params) == len(nodes) and all(fits(n.type, p) for n, p in zip(nodes, params)):
                return result
        raise _no_overload(name, nodes, target)

    def _member_dot_arg(self, tree, children):
        name, args = str(children[1]), _arguments(tree)
        names = [_simple_name(a) for a in args]
        if name in MACROS and len(args) in (2, 3) and names[0] and (len(args) == 2 or names[1] or name == "map"):
            return self._comprehension(name, children[0], args, names)
        if name == "bind" and _simple_name(children[0]) == "cel" and len(args) == 3 and names[0]:
            init = self.visit(args[1])
            with _scope(self.scopes, {names[0]: init}):
                result = self.visit(args[2])
            return _Node(result.type, _add(10, init.cost, result.cost), result.size, None, result.entry)
        return self._call(name, self.visit(children[0]), [self.visit(a) for a in args])

    def _comprehension(self, name, range_tree, args, names):
        over = self.visit(range_tree)
        kind = over.type.kind
        if kind not in ("list", "map", "dyn", "unknown"):
            raise _CompileError("expression of type '%s' cannot be range of a comprehension (must be list, map, "
                                "or dynamic)" % (over.type,))
        if kind == "map" and over.entry is not None:
            self.unmodelled.append("a comprehension over a map literal")
        two_variables = len(args) == 3 and name != "map"
        if two_variables:
            self.unmodelled.append("the two-variable %s()" % name)
        params = over.type.params or (over.type, over.type)
        step = ("@indices",) if two_variables and kind == "list" else ("@items",) if kind == "list" else ("@keys",)
        first = _Node(INT if step == ("@indices",) else params[0], 0, over.entry if kind == "list" else None,
                      over.path and over.path + step)
        bound = {names[0]: first}
        if two_variables:
            bound[names[1]] = _Node(params[-1], 0, over.entry, over.path and over.path + (
                "@items" if kind == "list" else "@values",))
        with _scope(self.scopes, bound):
            parts = [self.visit(a) for a in args[1 + two_variables:]]
        for predicate in parts[:len(parts) - (name == "map")]:
            if not fits(predicate.type, BOOL):
                raise _CompileError("expected type 'bool' but found '%s' in %s()" % (predicate.type, name))
        # Per element: the loop condition plus the step, as cel-go expands each macro.
        init, result, result_type = 0, 1, BOOL
        if name == "all":
            per_element = 3 + parts[-1].cost
        elif name == "exists":
            per_element = 4 + parts[-1].cost
        elif name in ("exists_one", "existsOne"):
            result, per_element = 2, 2 + parts[-1].cost
        elif name == "filter":
            init, per_element, result_type = 10, 13 + parts[0].cost, CelType("list", first.type)
        else:
            init, result_type = 10, CelType("list", parts[-1].type)
            per_element = _add(12, *[p.cost for p in parts])
        elements = over.sized
        cost = _add(over.cost, init, result, _times(elements, per_element))
        if result_type.kind == "list":
            entry = parts[-1].sized if name == "map" else _sized(first.type, 0, first.path, first.size).sized
            return _Node(result_type, cost, elements, None, entry)
        return _Node(result_type, cost, 1)


def _signatures(name):
    members, functions = OVERLOADS[name]
    return ["%s.%s(%s)" % (receiver, name, ", ".join(str(p) for p in params)) for receiver, params, _r in members] + [
        "%s(%s)" % (name, ", ".join(str(p) for p in params)) for params, _r in functions]


def length_verdict(expression):
    """TooLong, as the API server says it before compiling: the limit is on UTF-8 bytes."""
    size = len(expression.encode("utf-8"))
    if size > MAX_EXPRESSION_BYTES:
        return Verdict(REFUSED, "it is %d bytes long, over the API server's limit of %d (TooLong)"
                       % (size, MAX_EXPRESSION_BYTES), "shorten it, e.g. split it into several selectors "
                       "(a device must satisfy all of them)")
    return None


def judge(tree):
    """None where the API server would accept the parsed expression, so the preview may
    evaluate it; else a Verdict."""
    checker = Checker()
    try:
        node = checker.visit(tree)
    except RuntimeError:  # RecursionError: nested too deeply to walk
        return Verdict(DEFERRED, "it is nested too deeply for this preview to check", DRY_RUN)
    except _CompileError as exc:
        if exc.function in OVERLOADS:
            fix = "Kubernetes declares it as %s" % " or ".join(_signatures(exc.function))
        else:
            fix = ("give it operands of one type: compare an attribute with a value of its own type, a quantity "
                   "with isGreaterThan/isLessThan/compareTo or ==, a version with semver('1.2.3')")
        return Verdict(REFUSED, "%s (a compile error)" % exc, fix)
    if not fits(node.type, BOOL) or node.type == DYN:
        return Verdict(REFUSED, "it must evaluate to bool or the unknown type, not %s" % (node.type,),
                       "a selector must be a condition: compare the value, e.g. ... == ... or "
                       "x.isGreaterThan(quantity('16Gi'))", gives=PHRASES.get(node.type.kind, "a %s" % (node.type,)))
    if checker.unknown_fields:
        return Verdict(DEFERRED, "it selects device.%s, which this preview does not know (it knows driver, "
                       "attributes, capacity, allowMultipleAllocations)" % checker.unknown_fields[0], DRY_RUN)
    return _cost_verdict(node.cost, checker.unmodelled)


def _cost_verdict(cost, unmodelled):
    if not unmodelled and cost > COST_LIMIT * 1.1:
        return Verdict(REFUSED, "its estimated cost %d exceeds the API server's limit of %d (Forbidden: too "
                       "complex, exceeds cost limit)" % (cost, COST_LIMIT),
                       "make it cheaper: name attributes directly (device.attributes['domain'].name) instead "
                       "of iterating over device.attributes or device.capacity, nest fewer macros "
                       "(all/exists/map/filter), compare quantities with == or isGreaterThan, not !=", cost=cost)
    if not unmodelled and cost > COST_LIMIT * 0.9:
        return Verdict(DEFERRED, "its estimated cost %d is within 10%% of the API server's limit of %d, too close "
                       "for this preview to judge" % (cost, COST_LIMIT), DRY_RUN, cost=cost)
    if unmodelled and cost > COST_LIMIT // 10:
        return Verdict(DEFERRED, "this preview cannot judge its cost: its estimate %d (limit %d) leaves out %s"
                       % (cost, COST_LIMIT, unmodelled[0]), DRY_RUN, cost=cost)
    return None

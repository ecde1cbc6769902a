# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One walk over a parsed DRA device selector, as cel-go's checker makes it when the API server
compiles one: each sub-expression's type, bottom-up, and its worst-case cost alongside.

Only a type error that is certain is raised (``CompileError``); whatever is not modelled is
unknown, which fits anything, and is listed in ``Checker.unmodelled`` so that the verdict can
say the cost estimate rests on it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.declarations import (
    BOOL, BYTES, CALL_COSTS, CONVERSIONS, DEVICE, DEVICE_FIELDS, DOUBLE, DYN, GLOBAL_PRICED, INT, MACROS, MAX_UINT64,
    NULL, NUMBERS, ONE_COST, OPEN_RESULTS, OVERLOADS, SCALARS, STRING, TYPE, TYPE_NAMES, UINT, UNKNOWN,
    CelType, by_cost_factor, declared_size, fits, join_types, saturated_product, saturated_sum, vague_result)
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.parse_tree import (
    PASS_THROUGH, arguments, simple_name, string_length, subtrees, unwrap)


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
        size = declared_size(path)
    if size is None and type_.kind in SCALARS:
        size = 1
    return _Node(type_, cost, size, path, entry)


class CompileError(Exception):
    """What cel-go would refuse to compile; ``function`` names the call whose overloads failed."""

    def __init__(self, message, function=None):
        super(CompileError, self).__init__(message)
        self.function = function


def _no_overload(name, args, target=None):
    listed = "(%s)" % ", ".join(str(a.type) for a in args)
    return CompileError("found no matching overload for '%s' applied to '%s'"
                        % (name, listed if target is None else "%s.%s" % (target.type, listed)), name)


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
        children = subtrees(tree)
        if kind in PASS_THROUGH + ("paren_expr",) and len(children) == 1:
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
        joined = join_types(yes.type, no.type)
        if joined is None:
            raise _no_overload("_?_:_", [condition, yes, no])
        entry = None if yes.entry is None or no.entry is None else max(yes.entry, no.entry)
        return _Node(joined, saturated_sum(condition.cost, max(yes.cost, no.cost)), max(yes.sized, no.sized), None,
                     entry)

    def _want_bool(self, name, nodes, *operands):
        if any(not fits(o.type, BOOL) for o in operands):
            raise _no_overload(name, nodes)

    def _conditionalor(self, tree, children):
        left, right = self.visit(children[0]), self.visit(children[1])
        self._want_bool("_||_" if tree.data == "conditionalor" else "_&&_", [left, right], left, right)
        return _sized(BOOL, saturated_sum(left.cost, right.cost))  # && and || cost their operands only

    _conditionaland = _conditionalor

    def _binary(self, children):
        operator = children[0].data.split("_", 1)[1]
        return operator, self.visit(subtrees(children[0])[0]), self.visit(children[1])

    def _relation(self, _tree, children):
        operator, left, right = self._binary(children)
        nodes, cost = [left, right], saturated_sum(left.cost, right.cost)
        if operator == "in":
            container = right.type
            if container.kind in ("list", "map"):
                ok, own = fits(left.type, container.params[0]), right.sized if container.kind == "list" else 1
            else:
                ok, own = container.vague, max(right.sized, 1)
            if not ok:
                raise _no_overload("@in", nodes)
            return _sized(BOOL, saturated_sum(cost, own))
        symbol = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[operator]
        # Comparing texts walks the shorter one; Kubernetes prices == (not !=) of two quantities at 1.
        text_cost = by_cost_factor(min(left.sized, right.sized), 0.1)
        if operator in ("eq", "ne"):
            if not (fits(left.type, right.type) or fits(right.type, left.type)):
                raise _no_overload("_%s_" % symbol, nodes)
            same_object = left.type == right.type and left.type.kind in ("quantity", "semver")
            return _sized(BOOL, saturated_sum(cost, 1 if operator == "eq" and same_object else text_cost))
        kinds = set(t.kind for t in (left.type, right.type) if not t.vague)
        ordered = ("string", "bytes", "bool", "timestamp", "duration", "null")  # each with its own kind only
        if not (kinds <= set(NUMBERS) or len(kinds) <= 1 and kinds <= set(ordered)):
            raise _no_overload("_%s_" % symbol, nodes)
        own = text_cost if kinds and kinds <= {"string", "bytes"} else 1 if kinds else max(1, text_cost)
        return _sized(BOOL, saturated_sum(cost, own))

    def _addition(self, _tree, children):
        operator, left, right = self._binary(children)
        allowed = {"add": NUMBERS + ("string", "bytes", "list", "timestamp", "duration"),
                   "sub": NUMBERS + ("timestamp", "duration"), "mul": NUMBERS, "div": NUMBERS,
                   "mod": ("int", "uint")}[operator]
        definite = [t for t in (left.type, right.type) if not t.vague]
        times = [t for t in definite if t.kind in ("timestamp", "duration")]
        if any(t.kind not in allowed for t in definite) or (
                len(definite) == 2 and not times and join_types(definite[0], definite[1]) is None):
            symbol = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%"}[operator]
            raise _no_overload("_%s_" % symbol, [left, right])
        cost = saturated_sum(left.cost, right.cost)
        result = UNKNOWN if times else definite[0] if definite else vague_result(left.type, right.type)
        if len(definite) == 2 and result.kind == "list":
            result = CelType("list", join_types(left.type.params[0], right.type.params[0]))
        if operator != "add" or times or (definite and result.kind in NUMBERS + ("list",)):
            entry = None if left.entry is None or right.entry is None else max(left.entry, right.entry)
            size = saturated_sum(left.sized, right.sized) if result.kind == "list" else None
            return _sized(result, saturated_sum(cost, 1), size=size, entry=entry)
        size = saturated_sum(left.sized, right.sized)  # joining texts walks the result
        own = by_cost_factor(size, 0.1)
        return _sized(result, saturated_sum(cost, own if definite else max(1, own)), size=size)

    _multiplication = _addition

    def _unary(self, _tree, children):
        operator, operand_tree, count = children[0].data, children[1], 1
        # cel-go drops a double negation written !!x or --x (not !(!x)).
        while getattr(operand_tree, "data", None) == "unary" and subtrees(operand_tree)[0].data == operator:
            count, operand_tree = count + 1, subtrees(operand_tree)[1]
        leaf = unwrap(operand_tree)
        if operator == "unary_neg" and getattr(leaf, "data", None) == "literal" and str(leaf.children[0])[:1] == "-":
            count += 1  # cel-python reads "--1" as -(-1), cel-go as two negations of 1
        operand = self.visit(operand_tree)
        if count % 2 == 0:
            return operand
        if operator == "unary_not":
            self._want_bool("!_", [operand], operand)
            return _sized(BOOL, saturated_sum(operand.cost, 1))
        if not operand.type.vague and operand.type.kind not in ("int", "double", "duration"):
            raise _no_overload("-_", [operand])
        result = vague_result(operand.type) if operand.type.vague else operand.type
        return _sized(result, saturated_sum(operand.cost, 1))

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
            return _sized(vague_result(target), 0, path)
        raise CompileError("type '%s' does not support field selection" % (target,))

    def _member_dot(self, _tree, children):
        operand = self.visit(children[0])
        node = self._select(operand, str(children[1]))
        node.cost = saturated_sum(node.cost, operand.cost)
        return node

    def _member_index(self, _tree, children):
        operand, key = self.visit(children[0]), self.visit(children[1])
        container, cost = operand.type, saturated_sum(operand.cost, key.cost, 1)
        if container.kind == "list" and fits(key.type, INT):
            return _sized(container.params[0], cost, operand.path and operand.path + ("@items",), operand.entry)
        if container.kind == "map" and fits(key.type, container.params[0]):
            return _sized(container.params[1], cost, operand.path and operand.path + ("@values",), operand.entry)
        if container.vague or container.kind == "null":  # cel-go accepts null[0]
            self.unmodelled.append("indexing a value of unknown type")
            return _sized(vague_result(container), cost)
        raise _no_overload("_[_]", [operand, key])

    def _literal(self, tree, _children):
        token = tree.children[0]
        if token.type in ("STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"):
            return _Node(BYTES if token.type == "BYTES_LIT" else STRING, 0, string_length(token))
        kinds = {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "BOOL_LIT": BOOL, "NULL_LIT": NULL}
        return _Node(kinds[token.type], 0, 1)

    def _aggregate(self, nodes, what):
        joined = None
        for node in nodes:
            if joined is None:
                joined = node.type
            elif not (joined.vague and node.type.vague or fits(node.type, joined) and fits(joined, node.type)):
                raise CompileError("expected type '%s' but found '%s' in a %s literal" % (joined, node.type, what))
        return joined or UNKNOWN

    def _list_lit(self, tree, _children):
        items = [self.visit(c) for c in arguments(tree)]
        return _Node(CelType("list", self._aggregate(items, "list")), saturated_sum(10, *[i.cost for i in items]),
                     len(items), None, max([i.sized for i in items] or [0]))

    def _map_lit(self, _tree, children):
        parts = [self.visit(c) for c in (subtrees(children[0]) if children else [])]
        keys, values = parts[0::2], parts[1::2]
        return _Node(CelType("map", self._aggregate(keys, "map"), self._aggregate(values, "map")),
                     saturated_sum(30, *[p.cost for p in parts]), len(keys), None, max([v.sized for v in values] or [0]))

    def _member_object(self, _tree, _children):
        self.unmodelled.append("a message literal")
        return _Node(UNKNOWN, 40)

    # ----- calls and macros ----------------------------------------------------------

    def _ident_arg(self, tree, children):
        name, args = str(children[0]), arguments(tree)
        inner = unwrap(args[0], PASS_THROUGH + ("paren_expr",)) if len(args) == 1 else None
        if name == "has" and getattr(inner, "data", None) == "member_dot":
            operand = self.visit(subtrees(inner)[0])
            self._select(operand, str(subtrees(inner)[1]))
            return _sized(BOOL, operand.cost)  # Kubernetes prices a presence test at 0
        nodes = [self.visit(a) for a in args]
        if name == "dyn" and len(nodes) == 1:
            return _Node(DYN, saturated_sum(nodes[0].cost, 1), nodes[0].size, None, nodes[0].entry)
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
            own = by_cost_factor(node.sized, 0.1) if not node.type.vague else max(1, by_cost_factor(node.sized, 0.1))
            size = node.size if node.size is None or name == "string" else saturated_product(node.size, 4)
        return _sized(result, saturated_sum(own, node.cost), size=size)

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
        return _sized(result, saturated_sum(receiver_cost, own, *[n.cost for n in nodes]), size=size)

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
        name, args = str(children[1]), arguments(tree)
        names = [simple_name(a) for a in args]
        if name in MACROS and len(args) in (2, 3) and names[0] and (len(args) == 2 or names[1] or name == "map"):
            return self._comprehension(name, children[0], args, names)
        if name == "bind" and simple_name(children[0]) == "cel" and len(args) == 3 and names[0]:
            init = self.visit(args[1])
            with _scope(self.scopes, {names[0]: init}):
                result = self.visit(args[2])
            return _Node(result.type, saturated_sum(10, init.cost, result.cost), result.size, None, result.entry)
        return self._call(name, self.visit(children[0]), [self.visit(a) for a in args])

    def _comprehension(self, name, range_tree, args, names):
        over = self.visit(range_tree)
        kind = over.type.kind
        if kind not in ("list", "map", "dyn", "unknown"):
            raise CompileError("expression of type '%s' cannot be range of a comprehension (must be list, map, "
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
                raise CompileError("expected type 'bool' but found '%s' in %s()" % (predicate.type, name))
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
            per_element = saturated_sum(12, *[p.cost for p in parts])
        elements = over.sized
        cost = saturated_sum(over.cost, init, result, saturated_product(elements, per_element))
        if result_type.kind == "list":
            entry = parts[-1].sized if name == "map" else _sized(first.type, 0, first.path, first.size).sized
            return _Node(result_type, cost, elements, None, entry)
        return _Node(result_type, cost, 1)

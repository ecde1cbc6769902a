# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the API server decides about a DRA device selector before anything runs: a Verdict
(refused, or deferred to the server's dry run) or None, from its length, type and cost.

Kubernetes compiles a selector with cel-go in the DRA environment (k8s.io/dynamic-resource-
allocation/cel, compile.go) and refuses it when it does not type-check, when its type is neither
bool nor the unknown type, when it is over 10Ki bytes (TooLong) or when cel-go's estimated
worst-case cost exceeds 1,000,000 (Forbidden). This module mirrors those answers, so that the
preview refuses what the server refuses instead of answering false for it:

* types are inferred bottom-up for the declared ``device`` (attribute values are cel-go's
  ``any``, capacities are quantities), the quantity and semver libraries and CEL's
  operators and macros (expression_checker, over the tables of declarations); only a type
  error that is certain is reported, and whatever is not modelled is unknown, which fits
  anything;
* the cost follows cel-go's checker estimator (checker/cost.go), Kubernetes' library
  estimator (apiserver/pkg/cel/library/cost.go) and the DRA size bounds (32 attributes per
  device, 63-character domains, 32-character names, 64-character values). Where the
  estimate rests on something not modelled, or lies within 10% of the limit, the verdict
  is to defer to the server's dry run rather than to guess.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.declarations import BOOL, DYN, OVERLOADS, fits, signatures
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.expression_checker import Checker, CompileError

MAX_EXPRESSION_BYTES = 10 * 1024
COST_LIMIT = 1000000

REFUSED, DEFERRED = "refused", "deferred"
DRY_RUN = "check it with a server-side dry run (kubectl apply --dry-run=server)"


class Verdict:
    """REFUSED (the API server would refuse it) or DEFERRED (only the server can say), why, and the
    fix; ``gives`` names the result of an expression that is not a condition ("a string")."""

    def __init__(self, kind, reason, fix, gives=None, cost=None):
        self.kind, self.reason, self.fix, self.gives, self.cost = kind, reason, fix, gives, cost


# How a refusal names the type of an expression that is not a condition.
PHRASES = {"string": "a string", "int": "an int", "uint": "an uint", "double": "a double", "bytes": "bytes",
           "quantity": "a quantity", "semver": "a semver", "list": "a list", "map": "a map", "null": "null",
           "dyn": "a value of no declared type (dyn)"}


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
    except CompileError as exc:
        if exc.function in OVERLOADS:
            fix = "Kubernetes declares it as %s" % " or ".join(signatures(exc.function))
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

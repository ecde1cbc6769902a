# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading cel-python's parsed expression (a lark tree): the sub-expression behind the grammar's
one-child levels, a call's arguments, a macro's variable name, a string literal's length."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_ESCAPE = re.compile(r"\\(?:[0-3][0-7]{2}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
# Grammar levels that hold a single sub-expression when no operator is written at that level.
PASS_THROUGH = ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                "member", "primary")


def subtrees(tree):
    return [c for c in tree.children if c is not None]


def unwrap(tree, levels=PASS_THROUGH):
    """What a sub-expression is once the grammar's one-child levels are passed (by default not
    parentheses: cel-go reads !!x and !(!x) differently)."""
    while getattr(tree, "data", None) in levels and len(subtrees(tree)) == 1:
        tree = subtrees(tree)[0]
    return tree


def simple_name(tree):
    """The identifier an argument is, e.g. the ``d`` of ``exists(d, ...)``; else None."""
    leaf = unwrap(tree)
    return str(leaf.children[0]) if getattr(leaf, "data", None) == "ident" else None


def arguments(tree):
    lists = [c for c in subtrees(tree) if getattr(c, "data", None) == "exprlist"]
    return subtrees(lists[0]) if lists else []


def string_length(token):
    """Characters of a string literal (bytes of a bytes literal), an escape counting as one."""
    text = str(token).lstrip("bB")
    quoted = text.lstrip("rR")
    width = 3 if quoted[:3] in ('"""', "'" * 3) else 1
    body = quoted[width:-width]
    return len(body if text[:1] in "rR" else _ESCAPE.sub("x", body))

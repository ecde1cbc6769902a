from __future__ import absolute_import, division, print_function

__metaclass__ = type

import celpy

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.parse_tree import (
    arguments, simple_name, string_length, subtrees, unwrap)

ENV = celpy.Environment()


def test_unwrap_passes_the_one_child_levels_to_what_is_written():
    assert unwrap(ENV.compile("x")).data == "ident"
    assert unwrap(ENV.compile("(x)")).data == "paren_expr"  # parentheses are kept by default


def test_a_macro_call_gives_its_arguments_and_variable_name():
    call = unwrap(ENV.compile("[1].exists(x, x > 0)"))
    assert call.data == "member_dot_arg"
    args = arguments(call)
    assert len(args) == 2 and simple_name(args[0]) == "x" and simple_name(args[1]) is None
    assert str(subtrees(call)[1]) == "exists"


def test_string_length_counts_an_escape_as_one_character():
    assert string_length("'\\u00e9\\n'") == 2
    assert string_length("r'\\u00e9'") == 6
    assert string_length('"""abc"""') == 3
    assert string_length("b'\\x00'") == 1

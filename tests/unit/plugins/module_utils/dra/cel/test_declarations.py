from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.declarations import (
    ANY, DYN, INT, MAX_UINT64, NULL, QUANTITY, SEMVER, STRING, CelType, by_cost_factor, declared_size, fits,
    join_types, saturated_product, saturated_sum, signatures)


def test_types_print_as_cel_go_names_them():
    assert str(CelType("map", STRING, CelType("list", INT))) == "map(string, list(int))"
    assert str(QUANTITY) == "kubernetes.Quantity" and str(CelType("unknown")) == "dyn"


def test_vague_types_fit_anything_and_null_fits_an_object_only():
    assert fits(ANY, INT) and fits(STRING, DYN)
    assert fits(NULL, SEMVER) and not fits(NULL, STRING)
    assert not fits(CelType("list", INT), CelType("list", STRING))


def test_join_types_finds_the_common_type_as_cel_go_does():
    assert join_types(INT, INT) == INT
    assert join_types(INT, STRING) is None
    assert join_types(ANY, DYN) == DYN


def test_costs_and_sizes_saturate_instead_of_overflowing():
    assert saturated_sum(MAX_UINT64, 1) == MAX_UINT64
    assert saturated_product(2 ** 40, 2 ** 40) == MAX_UINT64
    assert by_cost_factor(63, 0.1) == 7  # rounded up


def test_declared_sizes_are_the_dra_bounds():
    assert declared_size(("device", "driver")) == 63
    assert declared_size(("device", "attributes", "@keys")) == 63
    assert declared_size(("device", "attributes", "@values", "@values")) == 64
    assert declared_size(("device", "attributes", "@values", "anyName")) == 64
    assert declared_size(None) is None


def test_signatures_list_every_declared_overload():
    assert signatures("semver") == ["semver(string)", "semver(string, bool)"]
    assert signatures("compareTo") == ["kubernetes.Quantity.compareTo(kubernetes.Quantity)",
                                       "kubernetes.Semver.compareTo(kubernetes.Semver)"]

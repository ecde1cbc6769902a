from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel.semver import Semver, SemverError, is_semver


def test_semver_ordering_follows_the_spec():
    assert Semver("580.126.20").compare(Semver("565.0.0")) == 1
    assert Semver("1.0.0-alpha").compare(Semver("1.0.0")) == -1
    assert Semver("1.0.0-alpha.1").compare(Semver("1.0.0-alpha.beta")) == -1
    assert Semver("1.2.3") == Semver("1.2.3+build")
    assert (Semver("8.6.0").major, Semver("8.6.0").minor, Semver("8.6.0").patch) == (8, 6, 0)


def test_semver_refuses_non_versions():
    assert not is_semver("580.126")
    with pytest.raises(SemverError):
        Semver("v1.2.3")


def test_the_precedence_example_of_the_spec_sorts_in_its_order():
    # semver.org, item 11: the one chain that exercises every rule
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0"]
    assert sorted(reversed(chain), key=lambda text: Semver(text).key()) == chain


def test_numbers_compare_as_numbers_not_text():
    assert Semver("1.10.0").compare(Semver("1.9.0")) == 1
    assert Semver("1.0.10").compare(Semver("1.0.9")) == 1
    assert Semver("1.0.0-alpha.10").compare(Semver("1.0.0-alpha.2")) == 1


def test_numeric_prerelease_parts_rank_below_alphanumeric_ones():
    assert Semver("1.0.0-1").compare(Semver("1.0.0-alpha")) == -1
    assert Semver("1.0.0-0a").compare(Semver("1.0.0-1")) == 1


def test_build_metadata_is_ignored_for_equality_and_hashing():
    assert Semver("1.2.3+a") == Semver("1.2.3+b")
    assert hash(Semver("1.2.3+a")) == hash(Semver("1.2.3"))
    assert Semver("1.2.3-rc.1") != Semver("1.2.3")
    assert Semver("1.2.3") != "1.2.3"


def test_the_parts_and_the_text_are_kept():
    version = Semver("1.2.3-rc.1+build.5")
    assert (version.major, version.minor, version.patch, version.prerelease) == (1, 2, 3, "rc.1")
    assert str(version) == "1.2.3-rc.1+build.5" and repr(version) == "Semver('1.2.3-rc.1+build.5')"
    assert Semver("1.2.3").prerelease is None


@pytest.mark.parametrize("text", ["1.2.3", "0.0.0", "1.2.3-rc.1", "1.2.3-x-y.7", "1.2.3+build.5", "10.20.30-0"])
def test_is_semver_accepts_full_versions(text):
    assert is_semver(text)


@pytest.mark.parametrize("text", ["01.2.3", "1.02.3", "1.2.03", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2", "v1.2.3",
                                  "1.2.3.4", "1.2.3-rc..1", ""])
def test_is_semver_refuses_leading_zeros_empty_parts_and_prefixes(text):
    assert not is_semver(text)


def test_the_error_quotes_the_text_and_gives_an_example():
    with pytest.raises(ValueError) as err:
        Semver("1.2")
    assert "'1.2' is not a semantic version (example: 1.2.3)" == str(err.value)

"""Lab settings read from the environment."""

import pytest

from labctl.apiserver import config


def test_without_dra_only_on_1_34(monkeypatch):
    monkeypatch.setenv("LAB_WITHOUT_DRA", "1")
    assert config._without_dra("1.34.4") is True
    with pytest.raises(config.ConfigError, match="LAB_K8S_VERSION=1.34.x"):
        config._without_dra("1.35.4")
    monkeypatch.setenv("LAB_WITHOUT_DRA", "")
    assert config._without_dra("1.35.4") is False

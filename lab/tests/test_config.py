"""Lab settings read from the environment."""

import dataclasses

import pytest

from labctl.apiserver import config


def test_without_dra_only_on_1_34(monkeypatch):
    monkeypatch.setenv("LAB_WITHOUT_DRA", "1")
    assert config._without_dra("1.34.4") is True
    with pytest.raises(config.ConfigError, match="LAB_K8S_VERSION=1.34.x"):
        config._without_dra("1.35.4")
    monkeypatch.setenv("LAB_WITHOUT_DRA", "")
    assert config._without_dra("1.35.4") is False


def test_feature_gates_reach_the_control_plane_in_one_flag(monkeypatch, tmp_path):
    from labctl.apiserver import cluster
    monkeypatch.setenv("LAB_FEATURE_GATES", "DRAPartitionableDevices=false,DRAConsumableCapacity=true")
    monkeypatch.setenv("LAB_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("LAB_K8S_VERSION", "1.37.2")
    cfg = config.load()
    assert cluster._gate_flags(cfg, apiserver=True) == [
        "--feature-gates=DRAPartitionableDevices=false,DRAConsumableCapacity=true"]
    without = dataclasses.replace(cfg, without_dra=True)
    assert cluster._gate_flags(without, apiserver=True) == [
        "--feature-gates=DynamicResourceAllocation=false,DRAPartitionableDevices=false,DRAConsumableCapacity=true",
        "--runtime-config=resource.k8s.io/v1=false"]
    monkeypatch.setenv("LAB_FEATURE_GATES", "")
    assert cluster._gate_flags(config.load()) == []


@pytest.mark.parametrize("value", ["DRAConsumableCapacity", "DRAConsumableCapacity=on", "dra=true", "A=true,,B=false"])
def test_feature_gates_are_checked(monkeypatch, value):
    monkeypatch.setenv("LAB_FEATURE_GATES", value)
    with pytest.raises(config.ConfigError, match="LAB_FEATURE_GATES must be Name=true or Name=false"):
        config._feature_gates()

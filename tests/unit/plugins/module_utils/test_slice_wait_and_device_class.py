from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import device_class as dc
from ansible_collections.dra.gpu.plugins.module_utils.slice_wait import Goal


def devices(*nodes):
    return [{"node": n} for n in nodes]


def test_goal_total():
    assert Goal(min_devices=3).shortfall(devices("a", "b")) == ["2 of 3 devices published"]
    assert Goal(min_devices=2).shortfall(devices("a", "b")) == []


def test_goal_per_node_names_the_nodes_short_of_devices():
    goal = Goal(min_devices_per_node=2, nodes=["a", "b", "c"])
    assert goal.shortfall(devices("a", "a", "b")) == ["nodes short of devices: b (1 of 2), c (0 of 2)"]
    assert Goal(min_devices_per_node=1, nodes=["a"]).shortfall(devices("a")) == []


def test_desired_object_and_comparison():
    body = dc.desired_object("c", ["true"], labels={"a": "b"})
    assert body["spec"] == {"selectors": [{"cel": {"expression": "true"}}]}
    live = dict(body, metadata={"name": "c", "labels": {"a": "b"}, "resourceVersion": "9", "uid": "u"})
    assert dc.comparable(live) == dc.comparable(body)
    assert dc.merge_labels({"metadata": {"labels": {"x": "1"}}}, {"a": "b"}) == {"x": "1", "a": "b"}


def test_bad_input_is_refused_before_the_api_is_called():
    with pytest.raises(dc.DeviceClassError, match="selectors\\[0\\]"):
        dc.validate_input([" "], None)
    with pytest.raises(dc.DeviceClassError, match="config\\[0\\] must look like"):
        dc.validate_input(["true"], [{"driver": "x"}])


def slice_of(driver):
    return {"metadata": {"name": "s"}, "spec": {"driver": driver, "nodeName": "n",
                                                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                                                "devices": [{"name": "gpu-0", "attributes": {
                                                    "productName": {"string": "NVIDIA A10"}},
                                                    "capacity": {"memory": {"value": "24Gi"}}}]}}


def test_no_match_explanation_points_at_the_real_driver_name():
    lines = dc.explain_no_match(['device.driver == "nvidia.com"'], [slice_of("gpu.nvidia.com")])
    assert "the driver here is gpu.nvidia.com" in lines[0]
    assert "device.attributes['gpu.nvidia.com'].productName (e.g. 'NVIDIA A10')" in lines[1]
    assert "device.capacity['gpu.nvidia.com'].memory (e.g. 24Gi)" in lines[1]


def test_no_match_explanation_without_any_slice():
    assert "no ResourceSlice is published" in dc.explain_no_match(["true"], [])[0]


def test_preview_lists_matches_and_runtime_errors():
    result = dc.preview(["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'"],
                        [slice_of("gpu.nvidia.com"), dict(slice_of("other.io"),
                                                          spec=dict(slice_of("other.io")["spec"], driver="other.io"))])
    assert result["evaluated"] and result["devices_considered"] == 2
    assert [d["driver"] for d in result["matched_devices"]] == ["gpu.nvidia.com"]
    assert result["runtime_errors"] and result["runtime_errors"][0]["device"].startswith("other.io/")


def test_preview_says_when_it_cannot_evaluate():
    result = dc.preview(["device.driver.reverse() == 'x'"], [slice_of("gpu.nvidia.com")])
    assert result["evaluated"] is False and "reverse" in result["reason"] and result["matched_devices"] is None

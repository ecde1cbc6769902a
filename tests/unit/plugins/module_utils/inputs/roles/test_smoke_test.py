from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import smoke_test
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke


# ----- problems -------------------------------------------------------------------------------

def test_smoke_test_role_and_module_checks():
    values = {"smoke_test_count": 0, "smoke_test_pods": -1, "smoke_test_timeout": 300, "smoke_test_slice_timeout": 0,
              "smoke_test_namespace": "dra-gpu-smoke-test", "smoke_test_device_class": "gpu.nvidia.com",
              "smoke_test_selectors": [], "smoke_test_node_selector": {},
              "smoke_test_first_available": [{"name": "a", "count": 0}, {"name": "a"}],
              "smoke_test_expect": {"min_memory": "lots"}, "smoke_test_wait_node_selector": "x=y"}
    text = " | ".join(smoke_test.problems(values, []))
    for words in ("smoke_test_count is 0", "smoke_test_pods is -1", "smoke_test_slice_timeout is 0",
                  "smoke_test_first_available[0].count is 0", "smoke_test_first_available names a more than once",
                  "smoke_test_expect.min_memory is 'lots'"):
        assert words in text
    module = smoke.input_problems({"count": 1, "pods": 1, "timeout": 0, "namespace": "ns",
                                   "device_class": "gpu.nvidia.com"})
    assert module == ["timeout is 0; it must be at least 1 (seconds to wait)"]


# ----- cluster_problem ------------------------------------------------------------------------

class NodeKube:
    """node_names(selector): the nodes a selector matches; None asks for every node."""

    def __init__(self, matches, every=("cp", "w1"), error=None):
        self.matches, self.every, self.error = matches, list(every), error
        self.asked = []

    def node_names(self, selector):
        self.asked.append(selector)
        if self.error is not None:
            raise self.error
        return self.every if selector is None else self.matches.get(selector, [])


def forbidden():
    exc = ApiException(status=403)
    exc.body = '{"message": "nodes is forbidden"}'
    return exc


def test_without_node_selectors_the_cluster_is_not_asked():
    kube = NodeKube({})
    assert smoke_test.cluster_problem(kube, {"smoke_test_node_selector": {}, "smoke_test_wait_node_selector": ""}) is None
    assert kube.asked == []


def test_selectors_that_match_nodes_pass():
    kube = NodeKube({"gpu=true,pool=a": ["w1"], "nvidia.com/gpu.present=true": ["w1"]})
    values = {"smoke_test_node_selector": {"pool": "a", "gpu": True},
              "smoke_test_wait_node_selector": "nvidia.com/gpu.present=true"}
    assert smoke_test.cluster_problem(kube, values) is None
    # the probe's selector as key=value text, sorted, booleans as Kubernetes writes them
    assert kube.asked == ["gpu=true,pool=a", "nvidia.com/gpu.present=true"]


def test_a_probe_node_selector_that_matches_nothing_says_what_would_happen_and_how_to_look():
    message = smoke_test.cluster_problem(NodeKube({}), {"smoke_test_node_selector": {"pool": "training"}})
    assert message == ("smoke_test: smoke_test_node_selector pool=training matches no node (nodes: cp, w1), so the "
                       "probe could never be scheduled; nothing was changed. Correct smoke_test_node_selector "
                       "(`kubectl get nodes -l 'pool=training'`)")


def test_a_wait_selector_that_matches_nothing_is_named_with_its_consequence():
    message = smoke_test.cluster_problem(NodeKube({}, every=()), {"smoke_test_wait_node_selector": "gpu=yes"})
    assert "smoke_test_wait_node_selector gpu=yes matches no node (nodes: none)" in message
    assert "the wait for their ResourceSlices could only time out" in message


def test_the_probe_selector_is_reported_first():
    message = smoke_test.cluster_problem(NodeKube({}), {"smoke_test_node_selector": {"a": "b"},
                                                        "smoke_test_wait_node_selector": "c=d"})
    assert message.startswith("smoke_test: smoke_test_node_selector a=b")


def test_a_refused_read_names_the_variable_and_the_servers_message():
    message = smoke_test.cluster_problem(NodeKube({}, error=forbidden()), {"smoke_test_wait_node_selector": "gpu=true"})
    assert message == "could not read the nodes for smoke_test_wait_node_selector: nodes is forbidden"

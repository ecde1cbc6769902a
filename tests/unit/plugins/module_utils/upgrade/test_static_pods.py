from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import static_pods

GREP = """/etc/kubernetes/manifests/kube-apiserver.yaml:    image: registry.k8s.io/kube-apiserver:v1.35.4
/etc/kubernetes/manifests/kube-controller-manager.yaml:    image: registry.k8s.io/kube-controller-manager:v1.35.4
/etc/kubernetes/manifests/kube-scheduler.yaml:    image: "registry.k8s.io/kube-scheduler:v1.35.4"
"""


def test_versions_per_component():
    assert static_pods.versions(GREP) == {"kube-apiserver": "1.35.4", "kube-controller-manager": "1.35.4",
                                          "kube-scheduler": "1.35.4"}


def test_all_three_at_the_version():
    assert static_pods.at_version(GREP, "1.35.4") and static_pods.at_version(GREP, "v1.35.4")
    assert not static_pods.at_version(GREP, "1.36.3")


def test_one_behind_or_missing_is_not_done():
    # kubeadm writes the scheduler's manifest last: killed before it, the node is not done.
    behind = GREP.replace("kube-scheduler:v1.35.4", "kube-scheduler:v1.34.4")
    assert not static_pods.at_version(behind, "1.35.4")
    assert not static_pods.at_version("\n".join(GREP.splitlines()[:2]), "1.35.4")
    assert not static_pods.at_version("", "1.35.4")


def test_private_registry_port_and_digest():
    grep = GREP.replace("registry.k8s.io", "mirror.example:5000/k8s")
    assert static_pods.at_version(grep, "1.35.4")
    pinned = grep.replace("kube-apiserver:v1.35.4", "kube-apiserver:v1.35.4@sha256:abc")
    assert static_pods.versions(pinned)["kube-apiserver"] == "1.35.4"

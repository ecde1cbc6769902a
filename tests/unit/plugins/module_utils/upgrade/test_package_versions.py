from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import package_versions as pv

# As pkgs.k8s.io's per-minor apt index lays it out: cri-tools comes first with its own Version,
# which an unanchored "Package: kubeadm ... Version:" search once picked up.
APT_INDEX = """Package: cri-tools
Version: 1.35.0-1.1
Architecture: amd64

Package: kubeadm
Version: 1.35.3-1.1
Architecture: amd64
Depends: cri-tools (>= 1.30.0)

Package: kubeadm
Architecture: amd64
Version: 1.35.4-1.1

Package: kubelet
Version: 1.35.5-1.1
"""

DNF_LIST = """Available Packages
kubeadm.x86_64                1.35.3-150500.1.1                 k8s-1.35
kubeadm.x86_64                1.35.4-150500.1.1                 k8s-1.35
kubectl.x86_64                1.35.5-150500.1.1                 k8s-1.35
"""


def test_only_kubeadms_own_paragraphs_count_in_an_apt_index():
    assert pv.from_apt_index(APT_INDEX) == ["1.35.3", "1.35.4"]


def test_dnf_lines_of_other_packages_and_headers_are_ignored():
    assert pv.from_dnf_list(DNF_LIST) == ["1.35.3", "1.35.4"]


def test_offered_merges_both_sorted_and_reports_unanswered_reads():
    apt = {"results": [
        {"item": {"minor": "1.35"}, "status": 200, "content": APT_INDEX},
        {"item": {"minor": "1.36"}, "status": 404, "url": "https://x/v1.36/deb/Packages"},
        {"item": {"minor": "1.37"}, "status": -1, "url": "https://x/v1.37/deb/Packages", "msg": "timed out"},
        {"item": {"minor": "1.38"}, "skipped": True},
    ]}
    dnf = {"results": [{"item": {"minor": "1.36"}, "stdout": "kubeadm.x86_64  1.36.10-150500.1.1  k8s-1.36\n"},
                       {"item": {"minor": "1.35"}, "skipped": True}]}
    read = pv.offered(apt, dnf)
    assert read["versions"] == ["1.35.3", "1.35.4", "1.36.10"]  # numeric order, not text order
    assert read["unread"] == [{"url": "https://x/v1.37/deb/Packages", "msg": "timed out",
                               "text": "https://x/v1.37/deb/Packages: timed out"}]


def test_nothing_registered_offers_nothing():
    assert pv.offered({}, {}) == {"versions": [], "unread": []}
    assert pv.offered(None) == {"versions": [], "unread": []}


def test_pre_releases_in_a_repository_are_never_offered():
    """pkgs.k8s.io spells a pre-release 1.38.0~beta.0 (Debian and rpm sort ~ first): never a target,
    so `latest` cannot pick one."""
    apt = "Package: kubeadm\nVersion: 1.38.0~beta.0-1.1\n\nPackage: kubeadm\nVersion: 1.37.2-1.1\n"
    assert pv.from_apt_index(apt) == ["1.37.2"]
    dnf = "kubeadm.x86_64  1.38.0~rc.1-150500.1.1  k8s-1.38\nkubeadm.x86_64  1.37.2-150500.1.1  k8s-1.37\n"
    assert pv.from_dnf_list(dnf) == ["1.37.2"]

"""The apt mirror's pure parts: what goes in each package, and the Release file's hashes."""

import gzip
import hashlib

from labctl.nodes import mirror


def test_each_package_installs_what_the_upstream_one_does(tmp_path):
    assert set(mirror._files_of("kubectl", str(tmp_path))) == {"usr/bin/kubectl"}
    assert set(mirror._files_of("kubelet", str(tmp_path))) == {"usr/bin/kubelet", "usr/lib/systemd/system/kubelet.service"}
    kubeadm = mirror._files_of("kubeadm", str(tmp_path))
    drop_in = kubeadm["usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"]
    assert "KUBELET_KUBEADM_ARGS" in drop_in[0] and drop_in[1] == 0o644
    assert kubeadm["usr/bin/kubeadm"] == (str(tmp_path / "kubeadm"), 0o755)


def test_release_lists_the_hashes_apt_checks(tmp_path):
    (tmp_path / "Packages").write_text("Package: kubeadm\nVersion: 1.35.4-1.1\n")
    with gzip.open(tmp_path / "Packages.gz", "wt") as handle:
        handle.write("Package: kubeadm\nVersion: 1.35.4-1.1\n")
    release = mirror._release(str(tmp_path), "1.35")
    data = (tmp_path / "Packages").read_bytes()
    assert " %s %d Packages\n" % (hashlib.sha256(data).hexdigest(), len(data)) in release
    assert "Suite: v1.35\n" in release and "\nSHA256:\n" in release and release.count("Packages.gz") == 2


def test_repositories_follow_pkgs_k8s_io_layout():
    assert mirror.repo_dir("/m", "1.35") == "/m/repo/core:/stable:/v1.35/deb"
    assert mirror.minor_of("1.34.4") == "1.34"

"""labctl.gobuild: the one `go build` of both labs, its flags and environment."""

import glob
import io
import os
import subprocess
import threading

import pytest

from labctl import gobuild

LABCTL = os.path.join(os.path.dirname(__file__), "..", "labctl")


class _Ran:
    def __init__(self, monkeypatch, returncode=0):
        self.calls = []
        self.returncode = returncode
        monkeypatch.setattr(subprocess, "run", self)

    def __call__(self, cmd, cwd=None, env=None, **_kwargs):
        self.calls.append((cmd, cwd, env))
        return subprocess.CompletedProcess(cmd, self.returncode)


def _log(tmp_path):
    log = io.StringIO()
    log.name = str(tmp_path / "build.log")
    return log


def test_go_build_is_trimmed_stripped_and_without_cgo(monkeypatch, tmp_path):
    ran = _Ran(monkeypatch)
    log = _log(tmp_path)
    gobuild.go_build("/src", ["./cmd/a", "./cmd/b"], "/out/", log, ldflags="-X main.v=1", tags="netgo")
    cmd, cwd, env = ran.calls[0]
    assert cmd == ["go", "build", "-trimpath", "-o", "/out/", "-ldflags", "-s -w -X main.v=1", "-tags", "netgo",
                   "./cmd/a", "./cmd/b"]
    assert cwd == "/src" and env["CGO_ENABLED"] == "0" and env["GOTOOLCHAIN"]
    assert log.getvalue().startswith("$ go build -trimpath")


def test_go_build_with_cgo_links_statically(monkeypatch, tmp_path):
    ran = _Ran(monkeypatch)
    gobuild.go_build("/src", ["example.com/runc"], "/out/runc", _log(tmp_path), cgo=True)
    cmd, _cwd, env = ran.calls[0]
    assert cmd[cmd.index("-ldflags") + 1] == "-s -w -extldflags -static"
    assert env["CGO_ENABLED"] == "1"


def test_a_failed_build_names_the_log(monkeypatch, tmp_path):
    _Ran(monkeypatch, returncode=1)
    with pytest.raises(gobuild.BuildError, match="build.log"):
        gobuild.go_build("/src", ["./cmd/a"], "/out/a", _log(tmp_path))


def test_build_module_names_a_single_binary_and_skips_what_is_built(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path))
    built = []
    monkeypatch.setattr(gobuild, "prepare_wrapper", lambda workdir, gomod, packages, log: None)

    def fake_build(cwd, packages, output, log, **flags):
        built.append((packages, output))
        path = os.path.join(output, "x") if output.endswith("/") else output
        with open(path, "w") as handle:
            handle.write("binary")
        os.chmod(path, 0o755)

    monkeypatch.setattr(gobuild, "go_build", fake_build)
    bindir = gobuild.build_module("etcd", "3.6.16", "go.etcd.io/etcd/server/v3", ["go.etcd.io/etcd/server/v3"],
                                  ["etcd"], _log(tmp_path))
    assert built[0][1].endswith("etcd-v3.6.16/bin.tmp/etcd")
    assert os.access(os.path.join(bindir, "etcd"), os.X_OK)
    gobuild.build_module("etcd", "3.6.16", "go.etcd.io/etcd/server/v3", ["go.etcd.io/etcd/server/v3"], ["etcd"],
                         _log(tmp_path))
    assert len(built) == 1


def test_no_other_module_runs_go_build():
    """Both labs compile through gobuild.go_build, so flags and environment cannot drift apart."""
    spelled = []
    for path in glob.glob(os.path.join(LABCTL, "**", "*.py"), recursive=True):
        with open(path) as handle:
            if '"go", "build"' in handle.read():
                spelled.append(os.path.basename(path))
    assert spelled == ["gobuild.py"]


def test_a_build_waits_for_another_of_the_same_binaries_and_reuses_them(monkeypatch, tmp_path):
    """Two labs starting at once (a test's lab beside `lab.py build`) once removed each other's output."""
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gobuild, "prepare_wrapper", lambda workdir, gomod, packages, log: None)
    built = []
    monkeypatch.setattr(gobuild, "go_build", lambda *args, **kwargs: built.append(args))
    bindir = str(tmp_path / "helm-v3.22.0" / "bin")
    log = _log(tmp_path)
    result = {}
    with gobuild.build_lock(bindir, log):
        worker = threading.Thread(target=lambda: result.update(bindir=gobuild.build_module(
            "helm", "3.22.0", "helm.sh/helm/v3", ["helm.sh/helm/v3/cmd/helm"], ["helm"], _log(tmp_path))))
        worker.start()
        worker.join(0.5)
        assert worker.is_alive()  # waiting for the build that holds the lock
        os.makedirs(bindir)
        with open(os.path.join(bindir, "helm"), "w") as handle:
            handle.write("binary")
        os.chmod(os.path.join(bindir, "helm"), 0o755)
    worker.join(10)
    assert result["bindir"] == bindir and built == []

"""NVIDIA's gpu-kubelet-plugin and mock NVML built from git checkouts into a cache keyed by commit
(nothing of theirs enters the repository). Offline: their committed vendor/ directories."""

import os
import shutil
import subprocess
import tempfile

from labctl import gobuild

GO_ENV = {"GOFLAGS": "-mod=vendor", "GOTOOLCHAIN": "local", "GOPROXY": "off"}


# One error type for the lab's builds and these (gobuild runs the go commands of both).
BuildError = gobuild.BuildError


def commit_of(repo, ref):
    try:
        return subprocess.run(["git", "-C", repo, "rev-parse", "--verify", ref + "^{commit}"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as exc:
        raise BuildError("%s has no commit %r: %s" % (repo, ref, exc.stderr.strip())) from exc


def export(repo, commit, into):
    archive = subprocess.Popen(["git", "-C", repo, "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", into], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise BuildError("git archive %s in %s failed" % (commit, repo))


def run_logged(argv, cwd, log):
    with open(log, "a") as handle:
        code = subprocess.run(argv, cwd=cwd, env=dict(os.environ, **GO_ENV), stdout=handle,
                              stderr=subprocess.STDOUT, check=False).returncode
    if code:
        raise BuildError("%s failed in %s (exit %d); see %s" % (" ".join(argv), cwd, code, log))


def plugin(repo, ref, cache):
    """Path of gpu-kubelet-plugin built at ``ref`` (cached under cache/plugin-<commit>)."""
    commit = commit_of(repo, ref)
    target = os.path.join(cache, "plugin-" + commit, "gpu-kubelet-plugin")
    if not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as src:
            export(repo, commit, src)
            gobuild.vendored_build(["-o", target + ".tmp", "./cmd/gpu-kubelet-plugin"], src, target + ".log")
        os.rename(target + ".tmp", target)
    return commit, target


def mock_nvml(repo, ref, cache):
    """(commit, libnvidia-ml.so path, libcuda.so path, directory of the mock's profiles) built at
    ``ref``: NVIDIA's mock NVML and mock CUDA (prepare fails without a libcuda.so in the root)."""
    commit = commit_of(repo, ref)
    out = os.path.join(cache, "mocknvml-" + commit)
    lib = os.path.join(out, "libnvidia-ml.so")
    cuda = os.path.join(out, "libcuda.so")
    if not os.path.exists(cuda):
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as src:
            export(repo, commit, src)
            gobuild.vendored_build(["-buildmode=c-shared", "-o", cuda + ".tmp", "./bridge"],
                                   os.path.join(src, "pkg", "gpu", "mockcuda"), os.path.join(out, "build-cuda.log"))
        os.rename(cuda + ".tmp", cuda)
    if not os.path.exists(lib):
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as src:
            export(repo, commit, src)
            mock = os.path.join(src, "pkg", "gpu", "mocknvml")
            run_logged(["make", "NO_PADDING=1"], mock, os.path.join(out, "build.log"))
            built = [n for n in os.listdir(mock) if n.startswith("libnvidia-ml.so.") and n[-1].isdigit()]
            if not built:
                raise BuildError("the mock NVML build in %s made no libnvidia-ml.so.<version>" % mock)
            for name in os.listdir(os.path.join(mock, "configs")):
                shutil.copy(os.path.join(mock, "configs", name), out)
            shutil.copy(os.path.join(mock, built[0]), lib + ".tmp")
        os.rename(lib + ".tmp", lib)
    return commit, lib, cuda, out


def cdi_hook(cache, version="v1.19.1"):
    """nvidia-cdi-hook from the Go module proxy (go install), or None where it cannot be had."""
    target = os.path.join(cache, "nvidia-cdi-hook-" + version, "nvidia-cdi-hook")
    if not os.path.exists(target):
        gobin = os.path.dirname(target)
        os.makedirs(gobin, exist_ok=True)
        code = subprocess.run(["go", "install", "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-cdi-hook@" + version],
                              env=dict(os.environ, GOBIN=gobin, GOFLAGS="", GOTOOLCHAIN="local"),
                              capture_output=True, text=True, check=False)
        if code.returncode or not os.path.exists(target):
            return None
    return target

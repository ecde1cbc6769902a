"""The node lab's stand-in kubelet plugin (lab/go/labgpu): its Go unit tests, run with
the lab's Go settings, so `make units` fails when the plugin's sharing logic (NVIDIA's opaque
GpuConfig, the MPS pipe directory in the CDI spec) breaks, before any node is started."""

import os
import shutil
import subprocess

import pytest

from labctl import gobuild, paths

SOURCE = os.path.join(paths.REPO_ROOT, "lab", "go")


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed (the lab needs it to build anything)")
def test_labgpu_go_unit_tests_pass():
    proc = subprocess.run(["go", "test", "-count=1", "./labgpu/"], cwd=SOURCE, env=gobuild.go_env(),
                          capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

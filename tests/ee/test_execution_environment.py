"""dra.gpu in an execution environment (ansible-builder), checked without a container engine.

`ansible-builder create` renders docs/execution-environment/execution-environment.yml into a
build context; `ansible-builder introspect` is the very step the image build runs on the
installed collections to collect their Python and system requirements. Here it runs on dra.gpu
installed from the tarball `ansible-galaxy collection build` makes, as Galaxy would ship it.
"""

import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from bindep.depends import Depends

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_image  # noqa: E402 - tests/ee/check_image.py, the build's last step

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
EXAMPLE = ROOT / "docs" / "execution-environment" / "execution-environment.yml"

# ansible-builder leaves these out of a collection's Python requirements, since ansible-core
# brings them (its introspect.py EXCLUDE_REQUIREMENTS); requirements.txt lists them anyway for
# controllers installed with pip.
PROVIDED_BY_ANSIBLE_CORE = {"pyyaml"}


def run(*args, cwd=None):
    tool = shutil.which(args[0], path=str(BIN)) or args[0]
    proc = subprocess.run([tool, *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def dist_name(requirement):
    """'cel-python>=0.5.0  # from collection dra.gpu' -> 'cel-python'."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(text):
    return [line for line in (raw.split("#")[0].strip() for raw in text.splitlines()) if line]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """dra.gpu built into a tarball and installed from it (no Galaxy, no dependencies)."""
    tmp = tmp_path_factory.mktemp("ee")
    run("ansible-galaxy", "collection", "build", str(ROOT), "--output-path", str(tmp / "dist"))
    tarball = next((tmp / "dist").glob("dra-gpu-*.tar.gz"))
    # --force: a dra.gpu already on the configured paths (this checkout) would make it a no-op.
    run("ansible-galaxy", "collection", "install", str(tarball), "--no-deps", "--force", "-p", str(tmp / "collections"),
        cwd=tmp)
    return tmp / "collections"


@pytest.fixture(scope="module")
def introspected(installed):
    out = run("ansible-builder", "introspect", str(installed))
    return yaml.safe_load(out.split("---", 1)[1])


def third_party_imports():
    """Distributions that plugins/ imports, optional imports (try/except) included: the modules
    check_image.py (the build's last step) finds, each mapped to the distribution installing it."""
    by_module = importlib.metadata.packages_distributions()
    found = {}
    for top, where in sorted(check_image.third_party_imports(str(ROOT / "plugins")).items()):
        assert top in by_module, f"{where} imports {top}, which no installed distribution provides"
        for dist in by_module[top]:
            found.setdefault(dist_name(dist), where)
    return found


def test_requirements_txt_lists_every_library_the_plugins_import():
    listed = {dist_name(line) for line in requirement_lines((ROOT / "requirements.txt").read_text())}
    imported = third_party_imports()
    # The three the modules are built on; an empty scan must not pass.
    assert {"kubernetes", "cel-python", "pyyaml"} <= set(imported)
    missing = {dist: str(where) for dist, where in imported.items() if dist not in listed}
    assert not missing, f"imported in plugins/ but not in requirements.txt: {missing}"
    unused = listed - set(imported)
    assert not unused, f"requirements.txt lists libraries no plugin imports: {sorted(unused)}"


def test_collection_metadata_points_at_its_requirement_files(installed):
    coll = installed / "ansible_collections" / "dra" / "gpu"
    meta = yaml.safe_load((coll / "meta" / "execution-environment.yml").read_text())
    assert meta["version"] == 1
    assert meta["dependencies"] == {"python": "requirements.txt", "system": "bindep.txt"}
    for name in meta["dependencies"].values():
        assert (coll / name).is_file(), f"{name} is not in the built collection"


def test_builder_finds_the_python_requirements(introspected):
    from_us = [line for line in introspected["python"] if line.endswith("# from collection dra.gpu")]
    expected = {dist_name(line) for line in requirement_lines((ROOT / "requirements.txt").read_text())}
    assert {dist_name(line) for line in from_us} == expected - PROVIDED_BY_ANSIBLE_CORE
    assert "kubernetes" in {dist_name(line) for line in from_us}


def test_builder_finds_the_system_requirements(introspected):
    from_us = [line.split("#")[0].strip() for line in introspected["system"]
               if line.endswith("# from collection dra.gpu")]
    assert "openssh-clients [platform:rpm]" in from_us
    # bindep itself reads the file the same way for an RPM-based and a Debian-based image.
    depends = Depends((ROOT / "bindep.txt").read_text())
    assert [r[0] for r in depends.active_rules(["platform:rpm", "platform:redhat"])] == ["openssh-clients"]
    assert [r[0] for r in depends.active_rules(["platform:dpkg", "platform:debian"])] == ["openssh-client"]


def test_example_definition_renders_a_build_context(tmp_path):
    context = tmp_path / "context"
    # The file name would follow whichever container engine this machine has (docker: Dockerfile).
    run("ansible-builder", "create", "-f", str(EXAMPLE), "-c", str(context), "--output-filename", "Containerfile")
    containerfile = (context / "Containerfile").read_text()
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert {c["name"] for c in galaxy["collections"]} == {"dra.gpu", "kubernetes.core"}
    # The stages that install the collections and then what they declare (the requirement
    # files above): galaxy, introspection, bindep packages.
    assert re.search(r"ansible-galaxy collection install .*-r requirements.yml", containerfile)
    assert "introspect.py introspect --write-bindep=" in containerfile
    assert "/output/scripts/install-from-bindep" in containerfile
    # helm for kubernetes.core.helm: a pinned release, checked before it is unpacked.
    version = re.search(r"^ARG HELM_VERSION=(v3\.\d+\.\d+)$", containerfile, re.M)
    assert version, "no pinned helm version"
    sums = re.findall(r"^ARG HELM_SHA256_(AMD64|ARM64)=([0-9a-f]{64})$", containerfile, re.M)
    assert set(dict(sums)) == {"AMD64", "ARM64"}
    step = next(line for line in containerfile.splitlines() if "get.helm.sh" in line)
    assert step.index("sha256sum -c") < step.index("tar -xzf")
    assert "install -m 0755" in step and "/usr/local/bin/helm" in step
    # Installed in the final image, before it drops root.
    final = containerfile.split("FROM base AS final", 1)[1]
    assert final.index("get.helm.sh") < final.index("USER 1000")


# What `make ee` builds (tests/ee/build-image.sh): the example with this machine's stand-ins
# (tests/ee/definition.py) and the build's last step, tests/ee/check_image.py (imported above).
import definition  # noqa: E402


def test_the_built_definition_differs_from_the_example_only_in_its_stand_ins(tmp_path):
    example = yaml.safe_load(EXAMPLE.read_text())
    built = definition.derive(example, "localhost/base:x", "dra-gpu-1.0.0.tar.gz", "kubernetes.core", "helm")
    assert example == yaml.safe_load(EXAMPLE.read_text()), "derive changed the example"
    # The Python, ansible-core and ansible-runner lines are the example's.
    for key in ("ansible_core", "ansible_runner"):
        assert built["dependencies"][key] == example["dependencies"][key]
    assert built["images"]["base_image"]["name"] == "localhost/base:x"
    assert [c["name"] for c in built["dependencies"]["galaxy"]["collections"]] == [
        "/build/files/dist/dra-gpu-1.0.0.tar.gz", "/build/files/kubernetes.core"]
    (tmp_path / "files").mkdir()
    (tmp_path / "ee.yml").write_text(yaml.safe_dump(built))
    run("ansible-builder", "create", "-f", str(tmp_path / "ee.yml"), "-c", str(tmp_path / "context"),
        "--output-filename", "Containerfile")
    containerfile = (tmp_path / "context" / "Containerfile").read_text()
    final = containerfile.split("FROM base AS final", 1)[1]
    # The check runs in the final image, after the bindep packages and before /output goes.
    check = final.index("/output/check_image.py /usr/share/ansible/collections/ansible_collections/dra/gpu")
    assert final.index("install-from-bindep") < check < final.index("RUN rm -rf /output\n")
    assert 'ARG PKGMGR="/usr/bin/apt-get"' in containerfile and 'PKGMGR_PRESERVE_CACHE="always"' in containerfile


def test_the_build_check_finds_what_the_plugins_need():
    imports = check_image.third_party_imports(str(ROOT / "plugins"))
    assert {"kubernetes", "celpy", "yaml"} <= set(imports)
    assert imports["celpy"] == "plugins/module_utils/dra/cel/cel.py"
    assert {"ssh", "helm", "timeout"} <= set(check_image.commands(str(ROOT / "plugins")))


def test_the_build_check_names_what_is_missing(tmp_path, capsys, monkeypatch):
    plugins = tmp_path / "gpu" / "plugins" / "module_utils"
    plugins.mkdir(parents=True)
    (plugins / "x.py").write_text("try:\n    import dra_gpu_no_such_lib\nexcept ImportError:\n    pass\n"
                                  "import json\nfrom ansible.module_utils.basic import AnsibleModule\n"
                                  "def f(m):\n    return m.get_bin_path('dra-gpu-no-such-command')\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert check_image.main(str(tmp_path / "gpu")) == 1
    err = capsys.readouterr().err
    assert "Python module 'dra_gpu_no_such_lib' (imported by plugins/module_utils/x.py)" in err
    assert "requirements.txt" in err
    assert "command 'dra-gpu-no-such-command'" in err and "command 'ssh'" in err and "bindep.txt" in err
    assert "json" not in err and "'ansible'" not in err

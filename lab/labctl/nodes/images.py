"""Container images packed from local files, for a node lab with no registry to pull from.

An image here is one uncompressed layer of static binaries in the `docker save` archive
format, which `ctr images import` reads. kubeadm's static pods name their images
registry.k8s.io/<component>:<tag>; archives carry exactly those names, so once imported
the kubelet finds them present and never pulls (imagePullPolicy IfNotPresent).
"""

import hashlib
import io
import json
import os
import tarfile

PATH_ENV = "PATH=/usr/local/bin:/usr/bin:/bin"


def _layer(files):
    """An uncompressed tar layer: {path in image: local file}, each made executable."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        made = set()
        for dest in sorted(files):
            parts = dest.strip("/").split("/")
            for depth in range(1, len(parts)):
                directory = "/".join(parts[:depth])
                if directory not in made:
                    info = tarfile.TarInfo(directory)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    layer.addfile(info)
                    made.add(directory)
            with open(files[dest], "rb") as handle:
                data = handle.read()
            info = tarfile.TarInfo("/".join(parts))
            info.size, info.mode = len(data), 0o755
            layer.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def write_archive(path, refs, files, entrypoint=None, env=(PATH_ENV,)):
    """Write a `docker save` archive of one image known by every name in ``refs``."""
    layer = _layer(files)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": list(env), "Entrypoint": entrypoint, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "dra.gpu node lab (lab/labctl/nodes/images.py)"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    manifest = [{"Config": config_name, "RepoTags": list(refs), "Layers": ["layer.tar"]}]
    tmp = path + ".tmp"
    with tarfile.open(tmp, mode="w") as archive:
        for name, data in ((config_name, config_bytes), ("layer.tar", layer),
                           ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    os.replace(tmp, path)
    return path

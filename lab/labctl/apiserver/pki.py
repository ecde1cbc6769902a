"""Certificates, keys and tokens for one lab, generated once per state directory."""

import datetime
import ipaddress
import os
import secrets

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

# Identities that get a bearer token. Each control-plane component runs as the user
# Kubernetes' bootstrap RBAC expects, so the lab exercises real authorization.
TOKEN_USERS = {
    "admin": ("kubernetes-admin", ["system:masters"]),
    "scheduler": ("system:kube-scheduler", []),
    "controller-manager": ("system:kube-controller-manager", []),
    # The simulator stands in for kubelets and a DRA driver; it writes node and pod
    # status and ResourceSlices, which needs more than one node's rights.
    "simulator": ("dra-gpu-lab-simulator", ["system:masters"]),
    # Users whose rights come from RBAC alone, as kubeadm's admin.conf (group
    # kubeadm:cluster-admins) since 1.29: system:masters would skip the authorizer, and with
    # it the window after a restart in which RBAC refuses. The tests bind their groups.
    "upgrader": ("dra-gpu-lab-upgrader", ["dra-gpu-lab:cluster-admins"]),
    "node-reader": ("dra-gpu-lab-node-reader", ["dra-gpu-lab:node-readers"]),
    "nobody": ("dra-gpu-lab-nobody", []),
}


def _write(path, data, mode=0o600):
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert(subject_cn, issuer_name, public_key, signing_key, is_ca, sans=()):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject_cn)]))
               .issuer_name(issuer_name)
               .public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=365))
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True))
    if sans:
        names = []
        for san in sans:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(san)))
            except ValueError:
                names.append(x509.DNSName(san))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def ensure(pki_dir, advertise_address):
    """Create CA, serving certificate, service-account key and tokens unless present."""
    os.makedirs(pki_dir, mode=0o700, exist_ok=True)
    files = {name: os.path.join(pki_dir, name) for name in
             ("ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "sa.key", "tokens.csv")}
    if all(os.path.exists(p) for p in files.values()):
        _add_missing_tokens(files["tokens.csv"])
        return files
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dra-gpu-lab-ca")])
    ca_cert = _cert("dra-gpu-lab-ca", ca_name, ca_key.public_key(), ca_key, True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    sans = ["127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local", "10.96.0.1", advertise_address]
    server_cert = _cert("kube-apiserver", ca_name, server_key.public_key(), ca_key, False, sans)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write(files["ca.key"], _pem_key(ca_key))
    _write(files["ca.crt"], ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(files["apiserver.key"], _pem_key(server_key))
    _write(files["apiserver.crt"], server_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(files["sa.key"], _pem_key(sa_key))
    _write(files["tokens.csv"], b"")
    _add_missing_tokens(files["tokens.csv"])
    return files


def _add_missing_tokens(tokens_csv):
    """Give every identity of TOKEN_USERS a token; a lab made before one was added gets it too
    (the API server reads the file when it starts)."""
    with open(tokens_csv) as handle:
        known = {line.split(",")[1] for line in handle if line.strip()}
    lines = []
    for ident, (user, groups) in sorted(TOKEN_USERS.items()):
        if user in known:
            continue
        group_field = '"%s"' % ",".join(groups) if groups else ""
        lines.append("%s,%s,%s,%s" % (secrets.token_hex(24), user, "uid-%s" % ident, group_field))
    if lines:
        with open(tokens_csv, "a") as handle:
            handle.write("\n".join(lines) + "\n")


def tokens(tokens_csv):
    """Map identity (admin, scheduler, ...) to its bearer token."""
    by_user = {}
    with open(tokens_csv) as handle:
        for line in handle:
            token, user = line.split(",")[:2]
            by_user[user] = token
    return {ident: by_user[user] for ident, (user, _groups) in TOKEN_USERS.items()}

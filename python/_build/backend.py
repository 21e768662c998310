"""A PEP 517 build backend for the omnigraph package, with no dependencies.

Why: `pip install ./python` must work offline with Debian's pip, and a setuptools build
would have pip fetch setuptools into an isolated environment first.  The package is pure
Python, so a wheel is a zip of omnigraph/ plus the metadata files PEP 427 names.  At build
time the backend records where `make build` put the `omnigraph` binary (build/release/ beside
this directory), so an embedded graph works without it on PATH.
"""
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "omnigraph", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _metadata():
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {VERSION}\n"
        "Summary: Python client of OmniGraph-C: a versioned, typed property-graph database\n"
        "Requires-Python: >=3.9\n"
    )


def _files():
    out = []
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name != "_binary.py":
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    built = os.path.join(os.path.dirname(HERE), "build", "release", "omnigraph")
    found = built if os.access(built, os.X_OK) else None
    out.append((f"{NAME}/_binary.py",
                ("# Written by the build backend: the omnigraph binary found at build time.\n"
                 f"BUILT_BINARY = {found!r}\n").encode()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _write_wheel(directory, files):
    dist = f"{NAME}-{VERSION}.dist-info"
    files = list(files) + [
        (f"{dist}/METADATA", _metadata().encode()),
        (f"{dist}/WHEEL", f"Wheel-Version: 1.0\nGenerator: omnigraph-backend\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
    ]
    record = "".join(_record_line(p, d) for p, d in files) + f"{dist}/RECORD,,\n"
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            z.writestr(p, d)
        z.writestr(f"{dist}/RECORD", record)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (f"{NAME}.pth", (HERE + "\n").encode())
    return _write_wheel(wheel_directory, [pth])


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = f"{NAME}-{VERSION}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ("pyproject.toml", "_build/backend.py", f"{NAME}"):
            t.add(os.path.join(HERE, rel), arcname=f"{NAME}-{VERSION}/{rel}",
                  filter=lambda i: None if "__pycache__" in i.name or i.name.endswith("_binary.py") else i)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []

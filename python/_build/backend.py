"""A PEP 517 build backend for the omnigraph package, with no dependencies.

Why: `pip install ./python` must work offline with Debian's pip, and a setuptools build
would have pip fetch setuptools into an isolated environment first.  The package is Python
over ctypes, so a wheel is a zip of omnigraph/ plus the metadata files PEP 427 names.  At
build time the backend copies the C library `make build` made (build/release/libomnigraph.so
beside this directory, or $OMNIGRAPH_LIBRARY) into the package, so an embedded graph works
without a library on the loader's path; the wheel is then tagged for this platform.
$OMNIGRAPH_PY_BUNDLE=0 leaves it out (`make install` does: the package finds PREFIX/lib's).
"""
import base64
import hashlib
import os
import sysconfig
import zipfile

NAME, VERSION = "omnigraph", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PURE_TAG = "py3-none-any"


def _metadata():
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {VERSION}\n"
        "Summary: Python client of OmniGraph-C: a versioned, typed property-graph database\n"
        "Requires-Python: >=3.9\n"
    )


def _library():
    """The built libomnigraph.so to bundle, or None."""
    if os.environ.get("OMNIGRAPH_PY_BUNDLE", "1") == "0":
        return None
    env = os.environ.get("OMNIGRAPH_LIBRARY")
    lib = env if env else os.path.join(os.path.dirname(HERE), "build", "release", "libomnigraph.so")
    if os.path.isdir(lib):
        lib = os.path.join(lib, "libomnigraph.so")
    return os.path.realpath(lib) if os.path.isfile(lib) else None


def _files():
    out = []
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    lib = _library()
    if lib:
        with open(lib, "rb") as f:
            out.append((f"{NAME}/libomnigraph.so", f.read()))
    return out, bool(lib)


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _write_wheel(directory, files, native=False):
    dist = f"{NAME}-{VERSION}.dist-info"
    # a bundled library ties the wheel to this platform (py3-none-linux_x86_64)
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_") if native else PURE_TAG
    files = list(files) + [
        (f"{dist}/METADATA", _metadata().encode()),
        (f"{dist}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: omnigraph-backend\n"
                           f"Root-Is-Purelib: {'false' if native else 'true'}\nTag: {tag}\n").encode()),
    ]
    record = "".join(_record_line(p, d) for p, d in files) + f"{dist}/RECORD,,\n"
    name = f"{NAME}-{VERSION}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            z.writestr(p, d)
        z.writestr(f"{dist}/RECORD", record)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files, native = _files()
    return _write_wheel(wheel_directory, files, native)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (f"{NAME}.pth", (HERE + "\n").encode())
    return _write_wheel(wheel_directory, [pth])


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = f"{NAME}-{VERSION}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ("pyproject.toml", "_build/backend.py", f"{NAME}"):
            t.add(os.path.join(HERE, rel), arcname=f"{NAME}-{VERSION}/{rel}",
                  filter=lambda i: None if "__pycache__" in i.name or i.name.endswith(".so") else i)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []

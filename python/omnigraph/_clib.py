"""libomnigraph.so through ctypes: where the library is found, and the og_* calls declared.

Why ctypes: the package stays pure Python (no compiler, nothing from a package index at
install time), yet an embedded graph runs in this process, over the same C library the
`omnigraph` program links: no process per call, the same answers.  The declarations mirror
include/omnigraph.h; docs/c-api.md documents each call.

Where the library comes from, first found wins (docs/python.md "Install"):
  1. $OMNIGRAPH_LIBRARY: the library file, or the directory holding it (a build tree);
  2. libomnigraph.so inside this package (`pip install ./python` after `make build` copies it);
  3. PREFIX/lib beside the package `make install` put in PREFIX/lib/python3.X/dist-packages;
  4. the dynamic loader's search path (ldconfig, $LD_LIBRARY_PATH).
"""
import ctypes
import os
import threading

from ._errors import make_error

# Option structs passed to the library end in zeroed spare bytes, and structs it fills have
# room to spare: a field a newer library appends then reads as 0 (its default) or lands in
# the spare bytes, never past the end of what Python allocated.
_SPARE = ctypes.c_char * 512


class OpenOpts(ctypes.Structure):
    _fields_ = [("actor", ctypes.c_char_p), ("cache_bytes", ctypes.c_size_t), ("actor_via", ctypes.c_char_p),
                ("_spare", _SPARE)]


class ReadOpts(ctypes.Structure):
    _fields_ = [("branch", ctypes.c_char_p), ("commit", ctypes.c_char_p), ("_spare", _SPARE)]


class Receipt(ctypes.Structure):
    _fields_ = [("published", ctypes.c_int), ("commit", ctypes.c_char * 32), ("branch", ctypes.c_char * 256),
                ("attempts", ctypes.c_int), ("records", ctypes.c_uint64), ("inserted", ctypes.c_uint64),
                ("updated", ctypes.c_uint64), ("embed_touched", ctypes.c_int), ("affected_nodes", ctypes.c_uint64),
                ("affected_edges", ctypes.c_uint64), ("reclaimed_tables", ctypes.c_uint64),
                ("reclaimed_versions", ctypes.c_uint64), ("reclaimed_files", ctypes.c_uint64),
                ("reclaimed_bytes", ctypes.c_uint64), ("reclaim_status", ctypes.c_int),
                ("reclaim_error", ctypes.c_char * 512), ("index_files_built", ctypes.c_uint64),
                ("index_status", ctypes.c_int), ("deleted", ctypes.c_uint64), ("_spare", _SPARE)]


class BranchCreateOpts(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("from_branch", ctypes.c_char_p), ("from_commit", ctypes.c_char_p),
                ("message", ctypes.c_char_p)]


class LoadOpts(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("branch", ctypes.c_char_p), ("from_", ctypes.c_char_p),
                ("expected_head", ctypes.c_char_p), ("progress", ctypes.c_int), ("on_progress", ctypes.c_void_p),
                ("progress_ctx", ctypes.c_void_p), ("progress_every", ctypes.c_uint64), ("no_index", ctypes.c_int),
                ("_spare", _SPARE)]


class CsvFile(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char_p), ("path", ctypes.c_char_p)]


class MutateOpts(ctypes.Structure):
    _fields_ = [("branch", ctypes.c_char_p), ("from_", ctypes.c_char_p), ("expected_head", ctypes.c_char_p),
                ("_spare", _SPARE)]


class MergeOpts(ctypes.Structure):
    _fields_ = [("source", ctypes.c_char_p), ("target", ctypes.c_char_p), ("expected_head", ctypes.c_char_p),
                ("delete_branch", ctypes.c_int), ("_spare", _SPARE)]


class PollOpts(ctypes.Structure):
    _fields_ = [("branch", ctypes.c_char_p), ("cursor", ctypes.c_char_p), ("start", ctypes.c_char_p),
                ("page_token", ctypes.c_char_p), ("limit", ctypes.c_size_t),
                ("types", ctypes.POINTER(ctypes.c_char_p)), ("ntypes", ctypes.c_size_t), ("ops", ctypes.c_uint),
                ("kinds", ctypes.c_uint), ("_spare", _SPARE)]


# The Arrow C Data Interface (arrow.apache.org/docs/format/CDataInterface.html), as the header has it.
class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
                        ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
                        ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
                        ("dictionary", ctypes.POINTER(ArrowSchema)), ("release", ctypes.c_void_p),
                        ("private_data", ctypes.c_void_p)]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                       ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
                       ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                       ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
                       ("dictionary", ctypes.POINTER(ArrowArray)), ("release", ctypes.c_void_p),
                       ("private_data", ctypes.c_void_p)]


# the SONAME's version this package was written against (cmake/shared-library.cmake)
SOVERSION = "0.1"
FORMAT_JSON = 0
LOAD_MODES = {"overwrite": 1, "append": 2, "merge": 3}

_P = ctypes.POINTER
_vp, _cp, _sz, _int = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
_SIGNATURES = {
    "og_status_name": (_cp, [_int]),
    "og_error_message": (_cp, []),
    "og_free": (None, [_vp]),
    "og_db_init": (_int, [_P(_vp), _cp, _cp, _cp, _sz, _P(OpenOpts)]),
    "og_db_open": (_int, [_P(_vp), _cp, _P(OpenOpts)]),
    "og_db_close": (None, [_vp]),
    "og_db_query": (_int, [_P(_vp), _vp, _cp, _sz, _cp, _cp, _P(ReadOpts)]),
    "og_rows_render": (_int, [_P(_vp), _P(_sz), _vp, _int, _cp]),
    "og_rows_free": (None, [_vp]),
    "og_db_mutate_ex": (_int, [_P(Receipt), _vp, _cp, _sz, _cp, _cp, _P(MutateOpts)]),
    "og_db_load": (_int, [_P(Receipt), _vp, _cp, _P(LoadOpts)]),
    "og_db_load_csv": (_int, [_P(Receipt), _vp, _P(CsvFile), _sz, ctypes.c_char, _P(LoadOpts)]),
    "og_db_branch_create": (_int, [_vp, _cp, _cp, _cp, _vp]),  # head_out: char[32]
    "og_db_branch_create_ex": (_int, [_vp, _vp, _cp, _vp]),  # head_out, db, name, opts
    "og_db_branch_list": (_int, [_P(_vp), _vp]),
    "og_db_branch_merge": (_int, [_P(_vp), _vp, _P(MergeOpts)]),
    "og_db_commit_list": (_int, [_P(_vp), _vp, _cp, _sz]),
    "og_db_commit_show": (_int, [_P(_vp), _vp, _cp]),
    "og_db_commit_feed": (_int, [_P(_vp), _vp, _cp, _P(PollOpts)]),
    "og_db_snapshot": (_int, [_P(_vp), _vp, _P(ReadOpts)]),
}
# Declared when the library has them (an older build may not).
_OPTIONAL = {
    "og_rows_to_arrow": (_int, [_vp, _P(ArrowSchema), _P(ArrowArray)]),
}


def _candidates():
    env = os.environ.get("OMNIGRAPH_LIBRARY")
    if env:
        # set means "this one": a wrong value is an error, not a silent fallback
        return [os.path.join(env, "libomnigraph.so") if os.path.isdir(env) else env], True
    here = os.path.dirname(os.path.abspath(__file__))
    # by bare name, dlopen searches $LD_LIBRARY_PATH and the ldconfig cache (without starting
    # a process, as ctypes.util.find_library would): the SONAME first, then the dev link
    return [os.path.join(here, "libomnigraph.so"),
            os.path.normpath(os.path.join(here, "..", "..", "..", "libomnigraph.so")),
            "libomnigraph.so." + SOVERSION, "libomnigraph.so"], False


_lib = None
_lock = threading.Lock()


def load():
    """The loaded library with its calls declared (loaded once per process)."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        paths, explicit = _candidates()
        errors = []
        for p in paths:
            if os.sep in p and not os.path.exists(p):
                continue
            try:
                lib = ctypes.CDLL(p)
            except OSError as e:
                errors.append(f"{p}: {e}")
                if explicit:
                    break
                continue
            for name, (res, args) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = res, args
            for name, (res, args) in _OPTIONAL.items():
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype, fn.argtypes = res, args
            lib.path = p
            _lib = lib
            return lib
        where = "; ".join(errors) if errors else (
            f"$OMNIGRAPH_LIBRARY={paths[0]} does not exist" if explicit else "not found beside the package, "
            "in the install prefix or on the loader's path")
        raise make_error("not_found", "cannot load libomnigraph.so (" + where + "): run `make build` and "
                             "`pip install ./python`, or set $OMNIGRAPH_LIBRARY to build/release")


def check(lib, st):
    """Raises the OmniGraphError subclass of og_status `st` with the thread's message."""
    if st:
        code = lib.og_status_name(st).decode()
        raise make_error(code, (lib.og_error_message() or b"").decode("utf-8", "replace"))


def take_text(lib, ptr):
    """The NUL-terminated text the library returned at `ptr` (a c_void_p), freed with og_free."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        lib.og_free(ptr)

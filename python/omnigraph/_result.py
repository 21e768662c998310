"""Results of reads (Result) and writes (Receipt).

Why a Result may hold typed rows beside the JSON ones: an embedded read keeps the library's
result (og_rows) so Arrow consumers get typed columns without the JSON text step
(`__arrow_c_array__`, the Arrow PyCapsule interface; `to_pandas` through pyarrow when it is
installed).  Everything else reads the JSON rows, typed as docs/query-language.md "Values in
JSON" says, which both transports give alike.
"""
import ctypes


class Result:
    """A read's rows: `.columns` (names, in order), `.rows` (one dict per row), `.commit`."""

    def __init__(self, doc, arrow=None):
        self._arrow = arrow  # an embedded read's typed rows (_embedded._ArrowSource), else None
        self.query_name = doc.get("query_name")
        self.columns = list(doc.get("columns") or [])
        # the JSON rows leave a null cell's key out; a row dict here has every column (None)
        self.rows = [{c: row.get(c) for c in self.columns} for row in doc.get("rows") or []]
        self.commit = doc.get("graph_commit_id")
        target = doc.get("target")
        self.target = target.get("branch") or target.get("snapshot") if isinstance(target, dict) else target

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self):
        return f"<omnigraph.Result {self.query_name!r}: {len(self.rows)} rows x {len(self.columns)} columns>"

    def to_pandas(self):
        """The rows as a pandas DataFrame (columns in order); needs pandas installed.  An
        embedded read with pyarrow installed goes through Arrow (typed columns: dates as
        dates, 64-bit integers as integers); otherwise the JSON rows are the frame."""
        if self._arrow is not None:
            try:
                import pyarrow
            except ImportError:
                pyarrow = None
            if pyarrow is not None:
                return self.to_arrow().to_pandas()
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("Result.to_pandas needs pandas (Debian: python3-pandas)") from e
        return pandas.DataFrame.from_records(self.rows, columns=self.columns)

    def to_arrow(self):
        """The rows as a pyarrow.RecordBatch (an embedded read; needs pyarrow)."""
        import pyarrow
        if self._arrow is None:
            raise TypeError("to_arrow needs an embedded read (a served graph answers Arrow over HTTP: "
                            "docs/server.md \"Arrow results\")")
        from ._clib import ArrowArray, ArrowSchema
        schema, array = ArrowSchema(), ArrowArray()
        self._arrow.export(ctypes.addressof(schema), ctypes.addressof(array))
        try:  # pyarrow moves both structs out (their release becomes NULL)
            return pyarrow.RecordBatch._import_from_c(ctypes.addressof(array), ctypes.addressof(schema))
        finally:
            _release(schema)
            _release(array)

    def __arrow_c_array__(self, requested_schema=None):
        """The Arrow PyCapsule interface (arrow.apache.org/docs/format/CDataInterface/
        PyCapsuleInterface.html): ("arrow_schema", "arrow_array") capsules of a struct array
        with one child per column, for pyarrow.record_batch(r), polars, duckdb.  Embedded reads
        only; `requested_schema` is not honoured (the columns' own types are given)."""
        if self._arrow is None:
            raise TypeError("Arrow export needs an embedded read")
        from ._clib import ArrowArray, ArrowSchema
        schema = _capsule_struct(ArrowSchema, _SCHEMA_NAME)
        array = _capsule_struct(ArrowArray, _ARRAY_NAME)
        self._arrow.export(_capsule_pointer(schema, _SCHEMA_NAME), _capsule_pointer(array, _ARRAY_NAME))
        return schema, array


class Receipt:
    """A write's outcome: `.commit` (None when nothing changed), affected counts, the raw doc."""

    def __init__(self, doc):
        self.doc = doc
        commit = doc.get("commit")
        if isinstance(commit, dict):  # the command line's receipt: the commit object
            commit = commit.get("graph_commit_id")
        self.commit = commit
        # a mutation counts affected rows; a load lists entities loaded per type
        self.affected_nodes = doc.get("affected_nodes", sum(t.get("entities_loaded", 0) for t in doc.get("nodes") or []))
        self.affected_edges = doc.get("affected_edges", sum(t.get("entities_loaded", 0) for t in doc.get("edges") or []))
        # a mutation's affected rows by what happened to them (None for a load)
        self.inserted, self.updated, self.deleted = (doc.get(k) for k in ("inserted", "updated", "deleted"))
        self.branch = doc.get("branch")

    def __repr__(self):
        return (f"<omnigraph.Receipt commit={self.commit!r} nodes={self.affected_nodes} "
                f"edges={self.affected_edges}>")


# ---- the Arrow structs' lifetimes ------------------------------------------------------------

def _release(struct):
    """Calls an Arrow struct's release callback unless a consumer took it (release NULL)."""
    if struct.release:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(struct.release)(ctypes.addressof(struct))


_SCHEMA_NAME, _ARRAY_NAME = b"arrow_schema", b"arrow_array"
_libc = ctypes.CDLL(None)
_libc.calloc.restype, _libc.calloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_size_t]
_libc.free.restype, _libc.free.argtypes = None, [ctypes.c_void_p]
# A capsule's destructor runs while the capsule is being deallocated: it must see the object as
# a bare address (a py_object would take a new reference to a dying object), hence the "raw"
# prototype; live capsules go through py_object.
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _DESTRUCTOR)(
    ("PyCapsule_New", ctypes.pythonapi))


def _destructor(cls, name):
    def destroy(capsule):
        # the consumer moved the struct out (release NULL) or never took it: release, then free
        ptr = _get_pointer_raw(capsule, name)
        if ptr:
            _release(cls.from_address(ptr))
            _libc.free(ptr)
    return _DESTRUCTOR(destroy)


_DESTRUCTORS = {}  # name -> the ctypes callback, kept alive for the process


def _capsule_struct(cls, name):
    """A PyCapsule owning a zeroed, malloc'd Arrow struct (released if still owned, and freed,
    when the capsule dies: the interface's rule)."""
    if name not in _DESTRUCTORS:
        _DESTRUCTORS[name] = _destructor(cls, name)
    ptr = _libc.calloc(1, ctypes.sizeof(cls))
    if not ptr:
        raise MemoryError
    return _capsule_new(ptr, name, _DESTRUCTORS[name])


def _capsule_pointer(capsule, name):
    return _get_pointer(capsule, name)

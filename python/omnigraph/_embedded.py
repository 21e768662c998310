"""The embedded transport: a graph opened in this process through libomnigraph.so (ctypes).

Why it shapes documents like the server: `Graph` is one interface over two transports, so
a call must return the same document whether the graph is a directory or served.  Reads and
writes are the library's (og_db_query, og_db_mutate_ex, og_db_load, ...); this file turns
their structs and JSON into the shapes omnigraph-server answers with (docs/server.md):
receipts with the commit as a CommitOutput, commits with graph_commit_id, changes as one
block of the change feed.  Nothing here starts a process.
"""
import calendar
import ctypes
import json
import os
import re
import tempfile
import weakref

from . import _clib
from ._errors import make_error
from ._result import Result


_QUERY_NAME = re.compile(r"(?<![A-Za-z0-9_])query\s+([A-Za-z0-9_]{0,127})", re.ASCII)


def _b(s):
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else s.encode("utf-8")


def _iso_us(s):
    """"2026-12-03T14:18:45.012Z" -> epoch microseconds (0 when unreadable), as the server counts."""
    try:
        date, _, rest = s.partition("T")
        hms, _, frac = rest.rstrip("Z").partition(".")
        y, mo, d = (int(x) for x in date.split("-"))
        h, mi, sec = (int(x) for x in hms.split(":"))
        ms = int(frac[:3].ljust(3, "0")) if frac else 0
        return calendar.timegm((y, mo, d, h, mi, sec, 0, 0, 0)) * 1000000 + ms * 1000
    except (AttributeError, ValueError):
        return 0


def _commit_output(c, branch):
    """An API commit document -> the server's CommitOutput."""
    parents = c.get("parents") or []
    return {
        "graph_commit_id": c.get("id"),
        "graph_manifest_version": c.get("depth") or 0,
        "created_at": _iso_us(c.get("created_at")),
        "graph_branch": branch,
        "parent_commit_id": parents[0] if parents else None,
        "merged_parent_commit_id": parents[1] if len(parents) > 1 else None,
        "actor_id": c.get("actor") or None,
        "actor_via": c.get("actor_via") or None,
    }


def _json_params(params):
    if params is None:
        return None
    return (params if isinstance(params, str) else json.dumps(params)).encode("utf-8")


def _count_ndjson(path):
    """Per type, the records of an NDJSON file: ([{"name","entities_loaded"}] nodes, edges),
    sorted by name, as the server and the command line list them."""
    counts = {}
    with open(path, "rb") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            t, e = rec.get("type"), rec.get("edge")
            if isinstance(t, str) or isinstance(e, str):
                key = ("n", t) if isinstance(t, str) else ("e", e)
                counts[key] = counts.get(key, 0) + 1
    nodes = [{"name": k[1], "entities_loaded": v} for k, v in sorted(counts.items()) if k[0] == "n"]
    edges = [{"name": k[1], "entities_loaded": v} for k, v in sorted(counts.items()) if k[0] == "e"]
    return nodes, edges


class _Embedded:
    def __init__(self, root, actor=None, _schema=None):
        self.lib = _clib.load()
        self.root = root
        self._opts = _clib.OpenOpts(actor=_b(actor))
        db = ctypes.c_void_p()
        if _schema is None:
            st = self.lib.og_db_open(ctypes.byref(db), _b(root), ctypes.byref(self._opts))
        else:
            name, text = _schema[0], _schema[1].encode("utf-8")
            st = self.lib.og_db_init(ctypes.byref(db), _b(root), _b(name), text, len(text), ctypes.byref(self._opts))
        _clib.check(self.lib, st)
        self.db = db
        self.actor = actor
        # closed when the Graph is collected, or by close(); never twice
        self._close = weakref.finalize(self, self.lib.og_db_close, db)

    @classmethod
    def create(cls, root, schema_name, schema, actor=None):
        """og_db_init: a new graph at `root` from `.pg` text, opened."""
        return cls(root, actor, (schema_name, schema))

    def close(self):
        self._close()

    def _handle(self):
        if not self._close.alive:
            raise make_error("invalid", f"the graph {self.root} is closed")
        return self.db

    def _text(self, fn, *args):
        """Calls an og_db_* function whose first argument is a char ** out; returns its JSON."""
        out = ctypes.c_void_p()
        st = fn(ctypes.byref(out), self._handle(), *args)
        text = _clib.take_text(self.lib, out)
        _clib.check(self.lib, st)
        return json.loads(text) if text else {}

    def _commit(self, commit, branch):
        try:
            return _commit_output(self._text(self.lib.og_db_commit_show, _b(commit)), branch)
        except Exception:  # the write is published; a commit we cannot re-read still has its id
            return {"graph_commit_id": commit, "graph_manifest_version": 0, "created_at": 0, "graph_branch": branch}

    # ---- reads ---------------------------------------------------------------------------

    def query(self, source, params, branch, at, name):
        src = source.encode("utf-8")
        opts = _clib.ReadOpts(branch=_b(branch), commit=_b(at))
        rows = ctypes.c_void_p()
        lib = self.lib
        _clib.check(lib, lib.og_db_query(ctypes.byref(rows), self._handle(), src, len(src), _b(name),
                                         _json_params(params), ctypes.byref(opts)))
        try:
            out, n = ctypes.c_void_p(), ctypes.c_size_t()
            st = lib.og_rows_render(ctypes.byref(out), ctypes.byref(n), rows, _clib.FORMAT_JSON,
                                    _b(at or branch or "main"))
            _clib.check(lib, st)
            try:
                doc = json.loads(ctypes.string_at(out.value, n.value).decode("utf-8"))
            finally:
                lib.og_free(out)
        except BaseException:
            lib.og_rows_free(rows)
            raise
        # the typed rows stay for Arrow (Result.to_pandas with pyarrow, __arrow_c_array__)
        # until the Result is collected
        if getattr(lib, "og_rows_to_arrow", None) is None:
            lib.og_rows_free(rows)
            return Result(doc)
        return Result(doc, _ArrowSource(lib, rows))

    def branches(self):
        return [b["name"] for b in self._text(self.lib.og_db_branch_list).get("branches", [])]

    def commits(self, branch):
        branch = branch or "main"
        doc = self._text(self.lib.og_db_commit_list, _b(branch), 0)
        return [_commit_output(c, branch) for c in doc.get("commits", [])]

    def changes(self, commit):
        opts = _clib.PollOpts(branch=b"main")
        doc = self._text(self.lib.og_db_commit_feed, _b(commit), ctypes.byref(opts))
        return {"cause": doc.get("cause"), "changes": doc.get("changes", []), "next_page_token": None}

    # ---- writes --------------------------------------------------------------------------

    def mutate(self, source, params, branch, name):
        src = source.encode("utf-8")
        rc = _clib.Receipt()
        opts = _clib.MutateOpts(branch=_b(branch))
        _clib.check(self.lib, self.lib.og_db_mutate_ex(ctypes.byref(rc), self._handle(), src, len(src), _b(name),
                                                       _json_params(params), ctypes.byref(opts)))
        branch = branch or "main"
        if name is None:  # the source's only query, named as the server names it
            m = _QUERY_NAME.search(source)
            name = m.group(1) if m else ""
        return {"query_name": name, "branch": branch, "affected_nodes": rc.affected_nodes,
                "affected_edges": rc.affected_edges, "inserted": rc.inserted, "updated": rc.updated,
                "deleted": rc.deleted, "actor_id": self.actor,
                "commit": self._commit(rc.commit.decode(), branch) if rc.published else None}

    def _load_doc(self, rc, mode, branch, nodes, edges):
        return {"branch": branch, "base_branch": None, "branch_created": False, "mode": mode, "nodes": nodes,
                "edges": edges, "total_entities": rc.records,
                "embedding_generation": "unsupported" if rc.embed_touched else None, "actor_id": self.actor,
                "commit": self._commit(rc.commit.decode(), branch) if rc.published else None}

    def _load_opts(self, mode, branch):
        if mode not in _clib.LOAD_MODES:
            raise make_error("invalid", f"unknown load mode '{mode}' (expected overwrite, append or merge)")
        return _clib.LoadOpts(mode=_clib.LOAD_MODES[mode], branch=_b(branch))

    def load(self, data, mode, branch):
        opts = self._load_opts(mode, branch)
        # the library loads a file: a path is read where it is, records and text are spooled
        if isinstance(data, (str, os.PathLike)):
            path, tmp = os.fspath(data), None
        else:
            fd, tmp = tempfile.mkstemp(prefix="omnigraph-load-", suffix=".jsonl")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            path = tmp
        try:
            rc = _clib.Receipt()
            _clib.check(self.lib, self.lib.og_db_load(ctypes.byref(rc), self._handle(), _b(path), ctypes.byref(opts)))
            nodes, edges = _count_ndjson(path)
        finally:
            if tmp:
                os.unlink(tmp)
        return self._load_doc(rc, mode, branch or "main", nodes, edges)

    def load_csv(self, path, type_, delimiter, mode, branch):
        opts = self._load_opts(mode, branch)
        if delimiter is not None and len(delimiter.encode("utf-8")) != 1:
            raise make_error("invalid", f"a CSV delimiter is one byte, not '{delimiter}'")
        files = (_clib.CsvFile * 1)(_clib.CsvFile(type=_b(type_), path=_b(path)))
        rc = _clib.Receipt()
        _clib.check(self.lib, self.lib.og_db_load_csv(ctypes.byref(rc), self._handle(), files, 1,
                                                      (delimiter or "\0").encode("utf-8"), ctypes.byref(opts)))
        branch = branch or "main"
        nodes, edges = [], []
        if type_:  # a file of one named type lists its rows under that type's kind
            snap = self._text(self.lib.og_db_snapshot, ctypes.byref(_clib.ReadOpts(branch=_b(branch))))
            for t in snap.get("tables", []):
                if t.get("type") == type_:
                    entry = [{"name": type_, "entities_loaded": rc.records}]
                    if t.get("kind") == "edge":
                        edges = entry
                    else:
                        nodes = entry
                    break
        return self._load_doc(rc, mode, branch, nodes, edges)

    def branch_create(self, name, from_, message=None):
        head = ctypes.create_string_buffer(32)
        opts = _clib.BranchCreateOpts(version=1, from_branch=_b(from_), message=_b(message))
        _clib.check(self.lib, self.lib.og_db_branch_create_ex(head, self._handle(), _b(name), ctypes.byref(opts)))
        return {"uri": self.root, "from": from_, "name": name, "actor_id": self.actor, "message": message or None}

    def branch_merge(self, source, into):
        opts = _clib.MergeOpts(source=_b(source), target=_b(into))
        out = ctypes.c_void_p()
        st = self.lib.og_db_branch_merge(ctypes.byref(out), self._handle(), ctypes.byref(opts))
        text = _clib.take_text(self.lib, out)
        doc = json.loads(text) if text else {}
        try:
            _clib.check(self.lib, st)
        except Exception as e:
            e.details = doc.get("conflicts")  # the row conflicts of a ConflictError
            raise
        # the server's answer: its own keys first, then the library's merge document (base,
        # commit, inserted/updated/deleted, stats, ...) as it passes it on (docs/server.md)
        out = {"source": source, "target": into, "outcome": doc.get("outcome"),
               "actor_id": self.actor or doc.get("actor_id")}
        out.update((k, v) for k, v in doc.items() if k not in out and k != "branch_deleted")
        return out


class _ArrowSource:
    """The og_rows of one Result, kept for the Arrow C Data Interface; freed with the Result."""

    def __init__(self, lib, rows):
        self.lib = lib
        self.rows = rows
        self._free = weakref.finalize(self, lib.og_rows_free, rows)

    def export(self, schema, array):
        """Fills ArrowSchema / ArrowArray structs at the given addresses (og_rows_to_arrow)."""
        st = self.lib.og_rows_to_arrow(self.rows, ctypes.cast(schema, ctypes.POINTER(_clib.ArrowSchema)),
                                       ctypes.cast(array, ctypes.POINTER(_clib.ArrowArray)))
        _clib.check(self.lib, st)

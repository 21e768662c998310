"""The omnigraph package against a real graph, embedded and served (docs/python.md).

Each test runs on both transports: the same calls must give the same answers, so a notebook
can move from a local directory to a server unchanged.  The embedded graph runs in this
process over libomnigraph.so (found as the installed package finds it); the served half
needs $OMNIGRAPH_SERVER (omnigraph-server of the same build).
"""
import ctypes
import os
import re
import subprocess

import pytest

import omnigraph
from omnigraph import _clib

SERVER = os.environ.get("OMNIGRAPH_SERVER")

SCHEMA = """
node Person {
    name: String @key
    age: I32?
    big: I64?
    born: Date?
    tags: [String]?
}
node City {
    slug: String @key
}
edge LivesIn: Person -> City
"""
SEED = [
    {"type": "Person", "data": {"name": "ada", "age": 36, "big": 9007199254740993, "born": "1815-12-10", "tags": ["math"]}},
    {"type": "Person", "data": {"name": "bob", "age": None}},
    {"type": "City", "data": {"slug": "london"}},
    {"edge": "LivesIn", "from": "ada", "to": "london"},
]
PEOPLE = "query people() { match { $p: Person } return { $p.name, $p.age, $p.big, $p.born, $p.tags } order { $p.name } }"
POLICY = ("version: 1\ngroups:\n  everyone: [default]\nrules:\n"
          "  - id: rw\n    allow:\n      actors: { group: everyone }\n"
          "      actions: [read, export, change]\n      branch_scope: any\n"
          "  - id: branches\n    allow:\n      actors: { group: everyone }\n"
          "      actions: [branch_create, branch_delete, branch_merge]\n      target_branch_scope: any\n")


def _init(tmp_path):
    root = tmp_path / "g"
    omnigraph.init(root, SCHEMA).close()
    return root


def _served(root, tmp_path):
    """Starts omnigraph-server on the graph at `root`: (process, connected Graph)."""
    if not SERVER or not os.access(SERVER, os.X_OK):
        pytest.fail("set OMNIGRAPH_SERVER to omnigraph-server")
    policy = tmp_path / "policy.yaml"  # the token's actor may do everything the tests do
    policy.write_text(POLICY)
    p = subprocess.Popen([SERVER, "--graph", f"g={root}", "--bind", "127.0.0.1:0", "--policy", str(policy)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, "OMNIGRAPH_SERVER_BEARER_TOKEN": "s3cret"})
    addr = None
    for line in p.stdout:
        m = re.search(r"OMNIGRAPH_LISTEN_ADDR=(\S+)", line)
        if m:
            addr = m.group(1)
            break
    if not addr:
        p.terminate()
        p.wait(10)
        pytest.fail("the server did not start")
    return p, omnigraph.connect(f"http://{addr}", graph="g", token="s3cret")


@pytest.fixture(params=["embedded", "served"])
def graph(request, tmp_path):
    root = _init(tmp_path)
    if request.param == "embedded":
        with omnigraph.connect(str(root)) as g:
            g.load(SEED, mode="overwrite")
            yield g
        return
    p, g = _served(root, tmp_path)
    try:
        g.load(SEED, mode="overwrite")
        yield g
    finally:
        p.terminate()
        p.wait(10)


def test_query_rows_typed_as_json(graph):
    r = graph.query(PEOPLE)
    assert r.columns == ["p.name", "p.age", "p.big", "p.born", "p.tags"]
    assert r.rows == [
        {"p.name": "ada", "p.age": 36, "p.big": 9007199254740993, "p.born": "1815-12-10", "p.tags": ["math"]},
        {"p.name": "bob", "p.age": None, "p.big": None, "p.born": None, "p.tags": None},
    ]
    assert len(r) == 2 and re.fullmatch(r"[0-9A-Z]{26}", r.commit)


def test_params_and_named_query(graph):
    src = PEOPLE + "\nquery one($n: String) { match { $p: Person { name: $n } } return { $p.age } }"
    assert graph.query(src, params={"n": "ada"}, name="one").rows == [{"p.age": 36}]
    assert graph.query(src, params='{"n": "zed"}', name="one").rows == []


def test_mutate_receipt_branch_merge_and_time_travel(graph):
    before = graph.commits()[0]
    assert graph.branch_create("dev", message="age fix")["message"] == "age fix"
    rc = graph.mutate('query m() { update Person set { age: 37 } where name = "ada" }', branch="dev")
    assert rc.affected_nodes == 1 and rc.affected_edges == 0 and re.fullmatch(r"[0-9A-Z]{26}", rc.commit)
    assert (rc.inserted, rc.updated, rc.deleted) == (0, 1, 0)
    q = 'query a() { match { $p: Person { name: "ada" } } return { $p.age } }'
    assert graph.query(q).rows == [{"p.age": 36}]
    assert graph.query(q, branch="dev").rows == [{"p.age": 37}]
    graph.branch_merge("dev", into="main")
    assert graph.query(q).rows == [{"p.age": 37}]
    assert graph.commits()[0]["id"] != before["id"]
    assert graph.query(q, at=before["id"]).rows == [{"p.age": 36}]
    assert "dev" in graph.branches()


def test_load_appends_and_reports(graph):
    rc = graph.load('{"type": "Person", "data": {"name": "cy", "age": 5}}\n', mode="merge")
    assert rc.commit and rc.affected_nodes == 1 and rc.affected_edges == 0
    assert [r["p.name"] for r in graph.query(PEOPLE).rows] == ["ada", "bob", "cy"]


def test_load_csv(graph, tmp_path):
    people = tmp_path / "people.csv"
    people.write_text('name|age\n"dee, d"|41\nemi|\n')
    rc = graph.load_csv(people, type="Person", delimiter="|")
    assert rc.commit and rc.affected_nodes == 2
    lives = tmp_path / "lives.csv"
    lives.write_text("from,to\nemi,london\n")
    assert graph.load_csv(lives, type="LivesIn").affected_edges == 1
    q = 'query q() { match { $p: Person  $p livesIn $c } return { $p.name, $p.age } order { $p.name } }'
    assert graph.query(q).rows == [{"p.name": "ada", "p.age": 36}, {"p.name": "emi", "p.age": None}]
    assert graph.query(PEOPLE).rows[2]["p.name"] == "dee, d"
    bad = tmp_path / "bad.csv"
    bad.write_text("name,age\nfay,old\n")
    with pytest.raises(omnigraph.OmniGraphError) as e:
        graph.load_csv(bad, type="Person")
    assert "3" in e.value.message or "2" in e.value.message  # the line is named
    assert len(graph.query(PEOPLE).rows) == 4  # nothing of the bad file


def test_errors_raise_typed_exceptions(graph):
    with pytest.raises(omnigraph.OmniGraphError) as e:
        graph.query("query q( { }")
    assert e.value.code in ("parse", "bad_request") and "expected" in e.value.message
    with pytest.raises(omnigraph.NotFoundError):
        graph.query(PEOPLE, branch="nope")
    with pytest.raises(omnigraph.OmniGraphError) as e:
        graph.mutate('query m() { insert Person { age: 1 } }')
    assert isinstance(e.value, (omnigraph.TypeCheckError, omnigraph.InvalidError))
    # nothing was written by the failed mutation
    assert len(graph.query(PEOPLE).rows) == 2


def test_merge_conflict_names_the_rows(graph):
    graph.branch_create("a")
    graph.branch_create("b")
    graph.mutate('query m() { update Person set { age: 1 } where name = "ada" }', branch="a")
    graph.mutate('query m() { update Person set { age: 2 } where name = "ada" }', branch="b")
    graph.branch_merge("a", into="main")
    with pytest.raises(omnigraph.ConflictError) as e:
        graph.branch_merge("b", into="main")
    assert [c["entity_id"] for c in e.value.details] == ["ada"]
    assert graph.query('query a() { match { $p: Person { name: "ada" } } return { $p.age } }').rows == [{"p.age": 1}]


def test_to_pandas(graph):
    pandas = pytest.importorskip("pandas")
    df = graph.query(PEOPLE).to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df.columns) == ["p.name", "p.age", "p.big", "p.born", "p.tags"]
    assert df["p.name"].tolist() == ["ada", "bob"]
    assert df.loc[0, "p.age"] == 36


def test_connect_refuses_what_is_not_a_graph(tmp_path):
    with pytest.raises(omnigraph.NotFoundError):
        omnigraph.connect(str(tmp_path / "missing"))
    with pytest.raises(omnigraph.InvalidError):
        omnigraph.connect("http://127.0.0.1:9")  # no graph=


def test_init_refuses_a_bad_schema_and_an_existing_graph(tmp_path):
    with pytest.raises(omnigraph.ParseError) as e:
        omnigraph.init(tmp_path / "bad", "node Person { name: String @key ")
    assert e.value.code == "parse" and re.search(r":\d+:\d+", e.value.message)
    assert not (tmp_path / "bad" / "_graph").exists()  # nothing left behind
    _init(tmp_path)
    with pytest.raises(omnigraph.AlreadyExistsError):
        omnigraph.init(tmp_path / "g", SCHEMA)


# ---- embedded: in this process, over the C library ------------------------------------------

def _forbid_processes(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the embedded transport started a process")
    for mod, names in ((subprocess, ("Popen", "run", "call", "check_call", "check_output")),
                       (os, ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen", "execv",
                             "execve", "execvp", "execvpe", "spawnv", "spawnve"))):
        for n in names:
            if hasattr(mod, n):
                monkeypatch.setattr(mod, n, refuse)


def test_embedded_starts_no_process(tmp_path, monkeypatch):
    _forbid_processes(monkeypatch)
    # the library is loaded under the ban too, not only before it
    monkeypatch.setattr(_clib, "_lib", None)
    g = omnigraph.init(tmp_path / "g", SCHEMA)
    g.load(SEED, mode="overwrite")
    assert [r["p.name"] for r in g.query(PEOPLE)] == ["ada", "bob"]
    g.branch_create("dev")
    assert g.mutate('query m() { update Person set { age: 40 } where name = "bob" }', branch="dev").affected_nodes == 1
    g.branch_merge("dev")
    csv = tmp_path / "p.csv"
    csv.write_text("name,age\ncy,3\n")
    assert g.load_csv(csv, type="Person").affected_nodes == 1
    head = g.commits()[0]["id"]
    assert g.changes(head)["changes"][0]["id"] == "cy"
    assert g.branches() == ["dev", "main"]
    g.close()
    with pytest.raises(omnigraph.InvalidError):
        g.query(PEOPLE)  # a closed handle is refused, not used


def test_library_is_the_installed_one():
    if os.environ.get("OMNIGRAPH_LIBRARY"):
        pytest.skip("$OMNIGRAPH_LIBRARY chooses the library")
    lib = _clib.load()
    pkg = os.path.dirname(omnigraph.__file__)
    # `pip install ./python` after `make build` put the build's library inside the package
    assert os.path.dirname(os.path.abspath(lib.path)) == pkg
    assert lib.og_status_name(2) == b"not_found"


def test_a_wrong_library_setting_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(_clib, "_lib", None)
    monkeypatch.setenv("OMNIGRAPH_LIBRARY", str(tmp_path / "nope.so"))
    with pytest.raises(omnigraph.NotFoundError) as e:
        omnigraph.connect(str(_init_dir(tmp_path)))  # found no library: the graph is not looked at
    assert "OMNIGRAPH_LIBRARY" in e.value.message
    (tmp_path / "junk.so").write_bytes(b"not a library")
    monkeypatch.setenv("OMNIGRAPH_LIBRARY", str(tmp_path / "junk.so"))
    with pytest.raises(omnigraph.NotFoundError) as e:
        omnigraph.connect(str(tmp_path))
    assert "junk.so" in e.value.message


def _init_dir(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_embedded_errors_carry_the_library_status(tmp_path):
    with omnigraph.connect(str(_init(tmp_path))) as g:
        with pytest.raises(omnigraph.ParseError) as e:
            g.query("query q( { }")
        assert e.value.code == "parse" and "expected" in e.value.message
        with pytest.raises(omnigraph.NotFoundError) as e:
            g.query(PEOPLE, at="01ZZZZZZZZZZZZZZZZZZZZZZZZ")
        assert e.value.code == "not_found"
        with pytest.raises(omnigraph.InvalidError):
            g.load("[]\n", mode="sideways")
        g.load(SEED, mode="overwrite")
        with pytest.raises(omnigraph.ConstraintError) as e:  # the library's class, no server to fold it
            g.load('{"edge": "LivesIn", "from": "ada", "to": "paris"}\n', mode="append")
        assert e.value.code == "constraint" and "paris" in e.value.message


def test_arrow_capsules_hold_typed_columns(tmp_path):
    with omnigraph.connect(str(_init(tmp_path))) as g:
        g.load(SEED, mode="overwrite")
        r = g.query(PEOPLE)
        schema_cap, array_cap = r.__arrow_c_array__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        schema = _clib.ArrowSchema.from_address(get(schema_cap, b"arrow_schema"))
        array = _clib.ArrowArray.from_address(get(array_cap, b"arrow_array"))
        assert schema.format == b"+s" and schema.n_children == 5 and schema.release
        kids = [schema.children[i].contents for i in range(5)]
        assert [(k.name, k.format) for k in kids] == [
            (b"p.name", b"u"), (b"p.age", b"i"), (b"p.big", b"l"), (b"p.born", b"tdD"), (b"p.tags", b"+l")]
        assert array.length == 2 and array.n_children == 5
        name_col = array.children[0].contents  # Utf8: validity, int32 offsets, bytes
        offs = ctypes.cast(name_col.buffers[1], ctypes.POINTER(ctypes.c_int32))
        data = ctypes.string_at(name_col.buffers[2], offs[2])
        assert data[offs[0]:offs[1]] == b"ada" and data[offs[1]:offs[2]] == b"bob"
        big = ctypes.cast(array.children[2].contents.buffers[1], ctypes.POINTER(ctypes.c_int64))
        assert big[0] == 9007199254740993  # the 64-bit value itself, not the JSON string
        del schema, array, kids, name_col, offs, big
        del schema_cap, array_cap  # released and freed by the capsules
        del r
    # a served graph has no typed rows in the process
    p, served = _served(_init(tmp_path / "s"), tmp_path)
    try:
        served.load(SEED, mode="overwrite")
        with pytest.raises(TypeError):
            served.query(PEOPLE).__arrow_c_array__()
    finally:
        p.terminate()
        p.wait(10)


def test_to_pandas_goes_through_arrow_when_pyarrow_is_there(tmp_path, monkeypatch):
    """Debian packages no pyarrow: a stand-in with pyarrow's import call checks the wiring —
    to_pandas hands over the exported structs, which the consumer then owns and releases."""
    pandas = pytest.importorskip("pandas")
    import sys
    import types
    taken = []

    class Batch:
        def __init__(self, schema, array):
            self.schema, self.array = schema, array

        @staticmethod
        def _import_from_c(array_addr, schema_addr):
            schema = _clib.ArrowSchema.from_address(schema_addr)
            array = _clib.ArrowArray.from_address(array_addr)
            # a move, as the C Data Interface defines it: copy the struct, mark the source released
            mine = Batch(_clib.ArrowSchema.from_buffer_copy(schema), _clib.ArrowArray.from_buffer_copy(array))
            schema.release = array.release = None
            taken.append(mine)
            return mine

        def to_pandas(self):
            names = [self.schema.children[i].contents.name.decode() for i in range(self.schema.n_children)]
            big = ctypes.cast(self.array.children[2].contents.buffers[1], ctypes.POINTER(ctypes.c_int64))
            df = pandas.DataFrame({names[2]: [big[i] for i in range(self.array.length)]})
            for st in (self.array, self.schema):  # the consumer's release, once each
                ctypes.CFUNCTYPE(None, ctypes.c_void_p)(st.release)(ctypes.addressof(st))
            return df

    monkeypatch.setitem(sys.modules, "pyarrow", types.SimpleNamespace(RecordBatch=Batch))
    with omnigraph.connect(str(_init(tmp_path))) as g:
        g.load(SEED, mode="overwrite")
        df = g.query(PEOPLE).to_pandas()
    assert len(taken) == 1
    assert df["p.big"].tolist()[0] == 9007199254740993  # an integer, not the JSON path's string


# ---- one scenario on both transports: the same documents -----------------------------------

_ID = re.compile(r"^[0-9A-Z]{26}$")


def _normalise(doc, ids):
    """Commit ids renamed in order of appearance; times, actors and the graph's address
    (which differ by design between an embedded handle and a server) blanked."""
    if isinstance(doc, dict):
        return {k: (None if k in ("created_at", "authored_at", "actor_id", "actor_via", "uri") else _normalise(v, ids))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [_normalise(v, ids) for v in doc]
    if isinstance(doc, str) and _ID.match(doc):
        return ids.setdefault(doc, f"commit-{len(ids)}")
    return doc


def _scenario(g, tmp_path):
    out = []
    csv = tmp_path / "people.csv"
    csv.write_text("name|age\ndee|41\n")
    out.append(g.load(SEED, mode="overwrite").doc)
    r = g.query(PEOPLE)
    out.append({"columns": r.columns, "rows": r.rows, "commit": r.commit, "target": r.target,
                "query_name": r.query_name})
    out.append(g.branch_create("dev", message="try a new age"))
    out.append(g.mutate('query m() { update Person set { age: 37 } where name = "ada" }', branch="dev").doc)
    out.append(g.mutate('query m() { delete Person where name = "nobody" }').doc)  # nothing published
    out.append(g.load_csv(csv, type="Person", delimiter="|", branch="dev").doc)
    out.append(g.branch_merge("dev", into="main"))
    out.append(g.query(PEOPLE, branch="dev").rows)
    out.append(g.branches())
    commits = g.commits()
    out.append(commits)
    out.append(g.changes(commits[0]["id"]))
    out.append(g.query(PEOPLE, at=commits[-1]["id"]).rows)
    for bad in (lambda: g.query(PEOPLE, branch="nope"), lambda: g.branch_create("dev"),
                lambda: g.mutate("query m() { insert Person { age: 1 } }")):
        with pytest.raises(omnigraph.OmniGraphError) as e:
            bad()
        out.append(type(e.value).__name__)
    return out


def test_embedded_and_served_answer_alike(tmp_path):
    with omnigraph.connect(str(_init(tmp_path / "e"))) as g:
        embedded = _normalise(_scenario(g, tmp_path), {})
    p, served_g = _served(_init(tmp_path / "s"), tmp_path)
    try:
        served = _normalise(_scenario(served_g, tmp_path), {})
    finally:
        p.terminate()
        p.wait(10)
    for i, (a, b) in enumerate(zip(embedded, served)):
        assert a == b, f"step {i} differs"
    assert len(embedded) == len(served)

"""The omnigraph package against a real graph, embedded and served (docs/python.md).

Each test runs on both transports: the same calls must give the same answers, so a notebook
can move from a local directory to a server unchanged.  Needs $OMNIGRAPH_BIN (the omnigraph
program) and, for the served half, omnigraph-server beside it.
"""
import json
import os
import re
import subprocess

import pytest

import omnigraph

BIN = os.environ.get("OMNIGRAPH_BIN")
SERVER = os.path.join(os.path.dirname(BIN), "omnigraph-server") if BIN else None

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


def _init(tmp_path):
    (tmp_path / "schema.pg").write_text(SCHEMA)
    root = tmp_path / "g"
    subprocess.run([BIN, "init", "--schema", str(tmp_path / "schema.pg"), str(root)], check=True, capture_output=True)
    return root


@pytest.fixture(params=["embedded", "served"])
def graph(request, tmp_path):
    if not BIN:
        pytest.fail("set OMNIGRAPH_BIN to the omnigraph program")
    root = _init(tmp_path)
    if request.param == "embedded":
        g = omnigraph.connect(str(root))
        g.load(SEED, mode="overwrite")
        yield g
        return
    if not os.access(SERVER, os.X_OK):
        pytest.skip("omnigraph-server not built")
    policy = tmp_path / "policy.yaml"  # the token's actor may do everything the tests do
    policy.write_text("version: 1\ngroups:\n  everyone: [default]\nrules:\n"
                      "  - id: rw\n    allow:\n      actors: { group: everyone }\n"
                      "      actions: [read, export, change]\n      branch_scope: any\n"
                      "  - id: branches\n    allow:\n      actors: { group: everyone }\n"
                      "      actions: [branch_create, branch_delete, branch_merge]\n      target_branch_scope: any\n")
    p = subprocess.Popen([SERVER, "--graph", f"g={root}", "--bind", "127.0.0.1:0", "--policy", str(policy)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, "OMNIGRAPH_SERVER_BEARER_TOKEN": "s3cret"})
    try:
        addr = None
        for line in p.stdout:
            m = re.search(r"OMNIGRAPH_LISTEN_ADDR=(\S+)", line)
            if m:
                addr = m.group(1)
                break
        assert addr, "the server did not start"
        g = omnigraph.connect(f"http://{addr}", graph="g", token="s3cret")
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
    graph.branch_create("dev")
    rc = graph.mutate('query m() { update Person set { age: 37 } where name = "ada" }', branch="dev")
    assert rc.affected_nodes == 1 and rc.affected_edges == 0 and re.fullmatch(r"[0-9A-Z]{26}", rc.commit)
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

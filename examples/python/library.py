# A notebook-style tour of the omnigraph Python package on the example library graph.
# Run it cell by cell in Jupyter, or as a script: python3 examples/python/library.py
# (after `make build` and `pip install ./python`; docs/python.md).
import os
import tempfile

import omnigraph

# %% Create a graph from the example schema and load its seed data (one commit)
here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp()
root = os.path.join(work, "library")
g = omnigraph.init(root, os.path.join(here, "../library/schema.pg"))  # in this process, over libomnigraph.so
# later: omnigraph.connect(root), or a served graph: omnigraph.connect("http://127.0.0.1:8080", graph="library", token=...)
print(g.load(os.path.join(here, "../library/seed.jsonl"), mode="overwrite"))

# %% A read: columns, rows as dicts (values as the JSON output types them)
r = g.query("query books() { match { $b: Book } return { $b.name, $b.year, $b.genre } order { $b.year } }")
print(r.columns)
for row in r.rows[:3]:
    print(row)

# %% Parameters, and a DataFrame when pandas is installed
by = g.query("query by($a: String) { match { $a2: Author { slug: $a }  $a2 wrote $b } return { $b.name, $b.year } }",
             params={"a": "jane-austen"})
try:
    print(by.to_pandas())
except ImportError:
    print(by.rows)

# %% A write on a branch, then a merge: every write is one commit
g.branch_create("edits")
receipt = g.mutate('query m() { update Book set { year: 1814 } where isbn = "9780000000028" }', branch="edits")
print(receipt.commit, receipt.affected_nodes)
g.branch_merge("edits", into="main")
print([c["id"] for c in g.commits()][:3])

# %% Errors are typed
try:
    g.query("query broken( { }")
except omnigraph.ParseError as e:
    print("parse error:", e.code, e.message)

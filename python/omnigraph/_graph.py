"""Graph: the one interface, and its two transports.

Why two transports behind one class: a notebook starts on a local directory and later points
at a server; the code in between should not change.  `_Embedded` (_embedded.py) opens the
graph in this process through libomnigraph.so; `_Remote` speaks the HTTP API of
omnigraph-server (docs/server.md) with the standard library only.  Both answer in the
server's document shapes, so a Result or Receipt reads the same from either.
"""
import json
import os
import urllib.error
import urllib.parse
import urllib.request

from ._embedded import _Embedded
from ._errors import OmniGraphError, make_error
from ._result import Receipt, Result


class _Remote:
    def __init__(self, url, graph, token):
        if not graph:
            raise make_error("invalid", "a served graph needs graph=ID (GET /graphs lists them)")
        self.base = url.rstrip("/") + "/graphs/" + urllib.parse.quote(graph, safe="")
        self.token = token

    def call(self, method, path, body=None, ctype="application/json", query=None):
        url = self.base + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = ctype
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req) as resp:
                text = resp.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                doc = json.loads(text)
            except ValueError:
                doc = {}
            code = doc.get("code") or ("precondition_failed" if e.code == 412 else "internal")
            err = make_error(code, doc.get("error") or text or e.reason, e.code,
                             e.headers.get("Omnigraph-Error-Class"))
            if doc.get("merge_conflicts"):
                err.details = doc["merge_conflicts"]
            raise err from None
        except urllib.error.URLError as e:
            raise OmniGraphError("io", f"cannot reach {self.base}: {e.reason}") from None
        return json.loads(text) if text.strip() else {}

    def query(self, source, params, branch, at, name):
        body = {"query": source}
        if name:
            body["name"] = name
        if params is not None:
            body["params"] = json.loads(params) if isinstance(params, str) else params
        if branch and not at:
            body["branch"] = branch
        if at:
            body["snapshot"] = at
        return Result(self.call("POST", "/query", body))

    def mutate(self, source, params, branch, name):
        body = {"query": source}
        if name:
            body["name"] = name
        if params is not None:
            body["params"] = json.loads(params) if isinstance(params, str) else params
        if branch:
            body["branch"] = branch
        return self.call("POST", "/mutate", body)

    def load(self, data, mode, branch):
        q = {"mode": mode}
        if branch:
            q["branch"] = branch
        if not isinstance(data, bytes):  # a path: the body is the file
            with open(data, "rb") as f:
                data = f.read()
        return self.call("POST", "/load/ndjson", data, ctype="application/x-ndjson", query=q)

    def load_csv(self, path, type_, delimiter, mode, branch):
        q = {"mode": mode}
        if type_:
            q["type"] = type_
        if delimiter:
            q["delimiter"] = delimiter
        if branch:
            q["branch"] = branch
        with open(path, "rb") as f:
            return self.call("POST", "/load/csv", f.read(), ctype="text/csv", query=q)

    def branch_create(self, name, from_, message=None):
        body = {"name": name, "from": from_}
        if message:
            body["message"] = message
        return self.call("POST", "/branches", body)

    def branch_merge(self, source, into):
        return self.call("POST", "/branches/merge", {"source": source, "target": into})

    def branches(self):
        return list(self.call("GET", "/branches").get("branches", []))

    def commits(self, branch):
        return self.call("GET", "/commits", query={"branch": branch or "main"}).get("commits", [])

    def changes(self, commit):
        return self.call("GET", "/commits/" + urllib.parse.quote(commit, safe="") + "/changes")

    def close(self):
        pass


class Graph:
    """A graph, embedded or served: see omnigraph.connect."""

    def __init__(self, transport, where):
        self._t = transport
        self.where = where

    def __repr__(self):
        return f"<omnigraph.Graph {self.where}>"

    def close(self):
        """Closes an embedded graph's handle (also done when the Graph is collected); later
        calls raise InvalidError.  A served graph holds nothing to close."""
        self._t.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def query(self, source, params=None, branch=None, at=None, name=None):
        """Runs read query `source` (.gq text; `name` picks one of several) and returns a Result.
        `params`: a dict (or JSON text); `branch`: the branch head read (default main); `at`:
        a commit to read instead (time travel)."""
        return self._t.query(source, params, branch, at, name)

    def mutate(self, source, params=None, branch=None, name=None):
        """Runs a mutation as one commit on `branch` (default main) and returns a Receipt."""
        return Receipt(self._t.mutate(source, params, branch, name))

    def load(self, data, mode="merge", branch=None):
        """Loads NDJSON as one commit: `data` is a path, NDJSON text/bytes, or an iterable of
        records ({"type": T, "data": {...}}, or {"edge": E, "from": ..., "to": ...} for an edge)."""
        if isinstance(data, (str, os.PathLike)) and not (isinstance(data, str) and "\n" in data) \
                and os.path.exists(data):
            payload = os.fspath(data)  # read where it is
        elif isinstance(data, bytes):
            payload = data
        elif isinstance(data, str):
            payload = data.encode()
        else:
            payload = "".join(json.dumps(r) + "\n" for r in data).encode()
        return Receipt(self._t.load(payload, mode, branch))

    def load_csv(self, path, type=None, delimiter=None, mode="merge", branch=None):
        """Loads CSV file `path` of node or edge type `type` (docs/load.md "CSV": a header row,
        neo4j-admin / LSQB column conventions; without `type`, a :LABEL / :TYPE column) as one
        commit."""
        return Receipt(self._t.load_csv(os.fspath(path), type, delimiter, mode, branch))

    def branch_create(self, name, from_="main", message=None):
        """Creates branch `name` at the head of `from_`; `message` says what it is for."""
        return self._t.branch_create(name, from_, message)

    def branch_merge(self, source, into="main"):
        """Merges branch `source` into `into`; conflicts raise ConflictError."""
        return self._t.branch_merge(source, into)

    def branches(self):
        """The branch names."""
        return self._t.branches()

    def commits(self, branch=None):
        """The commits of `branch` (default main), newest first, as dicts; each has "id"."""
        out = []
        for c in self._t.commits(branch):
            c = dict(c)
            c.setdefault("id", c.get("graph_commit_id"))
            out.append(c)
        return out

    def changes(self, commit):
        """What commit `commit` changed against its parent (docs/versioning.md), as a dict."""
        return self._t.changes(commit)


def connect(where, graph=None, token=None, actor=None):
    """Opens a graph: a local directory or s3://bucket/prefix (embedded, in this process,
    through libomnigraph.so; `actor` names the writer its commits record, default
    "omnigraph"), or an http(s):// URL of omnigraph-server with `graph` (its graph id) and
    `token` (a bearer token, or $OMNIGRAPH_TOKEN)."""
    where = os.fspath(where)
    if where.startswith(("http://", "https://")):
        return Graph(_Remote(where, graph, token or os.environ.get("OMNIGRAPH_TOKEN")), where)
    if graph is not None:
        raise make_error("invalid", "graph= names a graph of a server; an embedded graph is its path")
    if "://" not in where and not os.path.isdir(where):
        raise make_error("not_found", f"no graph at {where} (create one with `omnigraph init`)")
    return Graph(_Embedded(where, actor), where)



def init(where, schema, actor=None):
    """Creates a graph at `where` (a directory that holds no graph, or s3://bucket/prefix) from
    `.pg` schema text, or the path of a `.pg` file, and returns it opened (embedded): one empty
    table per type, the genesis commit, branch main.  ParseError / TypeCheckError name the
    schema's line and column; AlreadyExistsError when a graph is there."""
    where = os.fspath(where)
    name = "schema.pg"
    if isinstance(schema, os.PathLike) or ("\n" not in schema and "{" not in schema and os.path.isfile(schema)):
        name = os.fspath(schema)
        with open(name, encoding="utf-8") as f:
            schema = f.read()
    return Graph(_Embedded.create(where, name, schema, actor), where)

"""Graph: the one interface, and its two transports.

Why two transports behind one class: a notebook starts on a local directory and later points
at a server; the code in between should not change.  `_Local` runs the `omnigraph` program
(found as $OMNIGRAPH_BIN, the binary `make build` made when the package was installed, or
`omnigraph` on PATH) and reads its JSON; `_Remote` speaks the HTTP API of omnigraph-server
(docs/server.md) with the standard library only.
"""
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from ._errors import OmniGraphError, make_error
from ._result import Receipt, Result

_ERROR_LINE = re.compile(r"^omnigraph [a-z][a-z ]*: ([a-z_]+): (.*)$")


def _find_binary():
    env = os.environ.get("OMNIGRAPH_BIN")
    if env:
        return env
    try:
        from ._binary import BUILT_BINARY
    except ImportError:  # pragma: no cover - an in-tree import without a build
        BUILT_BINARY = None
    if BUILT_BINARY and os.access(BUILT_BINARY, os.X_OK):
        return BUILT_BINARY
    found = shutil.which("omnigraph")
    if not found:
        raise OmniGraphError("not_found", "the omnigraph program is not installed: run `make build` "
                             "(or `make install`), or set $OMNIGRAPH_BIN")
    return found


def _json_arg(params):
    if params is None:
        return None
    if isinstance(params, str):
        return params
    return json.dumps(params)


class _Local:
    def __init__(self, root):
        self.root = root
        self.bin = _find_binary()

    def run(self, verb, args, stdin=None):
        cmd = [self.bin] + verb.split() + list(args) + ["--json", self.root]
        p = subprocess.run(cmd, input=stdin, capture_output=True)
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace")
            for line in err.splitlines():
                m = _ERROR_LINE.match(line)
                if m:
                    raise make_error(m.group(1), m.group(2))
            raise OmniGraphError("invalid" if p.returncode == 2 else "internal", err.strip() or f"exit {p.returncode}")
        out = p.stdout.decode("utf-8")
        return json.loads(out) if out.strip() else {}

    def query(self, source, params, branch, at, name):
        args = ["-e", source] + ([name] if name else [])
        if params is not None:
            args += ["--params", _json_arg(params)]
        if branch:
            args += ["--branch", branch]
        if at:
            args += ["--at", at]
        return self.run("query", args)

    def mutate(self, source, params, branch, name):
        args = ["-e", source] + ([name] if name else [])
        if params is not None:
            args += ["--params", _json_arg(params)]
        if branch:
            args += ["--branch", branch]
        return self.run("mutate", args)

    def load(self, data, mode, branch):
        args = ["--data", "-", "--mode", mode] + (["--branch", branch] if branch else [])
        return self.run("load", args, stdin=data)

    def load_csv(self, path, type_, delimiter, mode, branch):
        args = ["--csv", f"{type_}={path}" if type_ else path, "--mode", mode]
        if delimiter:
            args += ["--delimiter", delimiter]
        if branch:
            args += ["--branch", branch]
        return self.run("load", args)

    def branch_create(self, name, from_):
        return self.run("branch create", ["--from", from_, name])

    def branch_merge(self, source, into):
        return self.run("branch merge", [source, "--into", into])

    def branches(self):
        doc = self.run("branch list", [])
        return [b["name"] if isinstance(b, dict) else b for b in doc.get("branches", [])]

    def commits(self, branch):
        return self.run("commit list", ["--branch", branch or "main"]).get("commits", [])

    def changes(self, commit):
        return self.run("commit changes", [commit])


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
            raise make_error(code, doc.get("error") or text or e.reason, e.code) from None
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
        return self.call("POST", "/query", body)

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

    def branch_create(self, name, from_):
        return self.call("POST", "/branches", {"name": name, "from": from_})

    def branch_merge(self, source, into):
        return self.call("POST", "/branches/merge", {"source": source, "target": into})

    def branches(self):
        return list(self.call("GET", "/branches").get("branches", []))

    def commits(self, branch):
        return self.call("GET", "/commits", query={"branch": branch or "main"}).get("commits", [])

    def changes(self, commit):
        return self.call("GET", "/commits/" + urllib.parse.quote(commit, safe="") + "/changes")


class Graph:
    """A graph, embedded or served: see omnigraph.connect."""

    def __init__(self, transport, where):
        self._t = transport
        self.where = where

    def __repr__(self):
        return f"<omnigraph.Graph {self.where}>"

    def query(self, source, params=None, branch=None, at=None, name=None):
        """Runs read query `source` (.gq text; `name` picks one of several) and returns a Result.
        `params`: a dict (or JSON text); `branch`: the branch head read (default main); `at`:
        a commit to read instead (time travel)."""
        return Result(self._t.query(source, params, branch, at, name))

    def mutate(self, source, params=None, branch=None, name=None):
        """Runs a mutation as one commit on `branch` (default main) and returns a Receipt."""
        return Receipt(self._t.mutate(source, params, branch, name))

    def load(self, data, mode="merge", branch=None):
        """Loads NDJSON as one commit: `data` is a path, NDJSON text/bytes, or an iterable of
        records ({"type": T, "data": {...}}, or {"edge": E, "from": ..., "to": ...} for an edge)."""
        if isinstance(data, (str, os.PathLike)) and not (isinstance(data, str) and "\n" in data) \
                and os.path.exists(data):
            with open(data, "rb") as f:
                payload = f.read()
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

    def branch_create(self, name, from_="main"):
        """Creates branch `name` at the head of `from_`."""
        return self._t.branch_create(name, from_)

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


def connect(where, graph=None, token=None):
    """Opens a graph: a local directory or s3://bucket/prefix (embedded), or an http(s):// URL
    of omnigraph-server with `graph` (its graph id) and `token` (a bearer token, or
    $OMNIGRAPH_TOKEN)."""
    where = os.fspath(where)
    if where.startswith(("http://", "https://")):
        return Graph(_Remote(where, graph, token or os.environ.get("OMNIGRAPH_TOKEN")), where)
    if graph is not None:
        raise make_error("invalid", "graph= names a graph of a server; an embedded graph is its path")
    if "://" not in where and not os.path.isdir(where):
        raise make_error("not_found", f"no graph at {where} (create one with `omnigraph init`)")
    return Graph(_Local(where), where)


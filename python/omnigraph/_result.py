"""Results of reads (Result) and writes (Receipt)."""


class Result:
    """A read's rows: `.columns` (names, in order), `.rows` (one dict per row), `.commit`."""

    def __init__(self, doc):
        self.query_name = doc.get("query_name")
        self.columns = list(doc.get("columns") or [])
        self.rows = list(doc.get("rows") or [])
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
        """The rows as a pandas DataFrame (columns in order); needs pandas installed."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("Result.to_pandas needs pandas (Debian: python3-pandas)") from e
        return pandas.DataFrame.from_records(self.rows, columns=self.columns)


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
        self.branch = doc.get("branch")

    def __repr__(self):
        return (f"<omnigraph.Receipt commit={self.commit!r} nodes={self.affected_nodes} "
                f"edges={self.affected_edges}>")

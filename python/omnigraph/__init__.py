"""OmniGraph from Python: one interface over an embedded graph and a served one.

    import omnigraph
    g = omnigraph.connect("./graph")                      # a directory or s3://bucket/prefix
    g = omnigraph.init("./new", "node Person { name: String @key }")     # a new graph
    g = omnigraph.connect("http://127.0.0.1:8080", graph="g", token="...")   # omnigraph-server
    r = g.query('query q() { match { $p: Person } return { $p.name } }')
    r.columns, r.rows, r.to_pandas()

An embedded graph runs in this process over the C library, libomnigraph.so (ctypes: the
same library, the same answers as the command line); a served graph through the HTTP API.
Values are typed as the JSON output types them (docs/query-language.md "Values in JSON"): Date and DateTime are ISO
strings, integers are ints at any width (Python's json keeps them exact).  Errors raise OmniGraphError
subclasses carrying `.code` (docs/errors.md) and the message.  See docs/python.md.
"""
from ._errors import (OmniGraphError, InvalidError, NotFoundError, AlreadyExistsError, ConflictError,
                      PreconditionFailedError, ParseError, TypeCheckError, ConstraintError, UnsupportedError,
                      AuthError, LimitError, InternalError, UnavailableError)
from ._result import Result, Receipt
from ._graph import Graph, connect, init

__all__ = [
    "connect", "init", "Graph", "Result", "Receipt", "OmniGraphError", "InvalidError", "NotFoundError",
    "AlreadyExistsError", "ConflictError", "PreconditionFailedError", "ParseError", "TypeCheckError",
    "ConstraintError", "UnsupportedError", "AuthError", "LimitError", "InternalError",
    "UnavailableError",
]
__version__ = "0.1.0"

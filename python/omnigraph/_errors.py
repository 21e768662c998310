"""Errors: one class per error code of docs/errors.md, all under OmniGraphError.

Why subclasses: a caller retries a ConflictError and fixes a ParseError; `except` on the class
says which without parsing messages.  `.code` is the library's code ("parse", "not_found") for
an embedded graph and the server's ("bad_request", "conflict") for a served one.
"""


class OmniGraphError(Exception):
    """Any failure OmniGraph reports.  `.code` names the error class, `.message` says why."""

    def __init__(self, code, message, status=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status  # the HTTP status, for a served graph
        self.details = None   # a merge's row conflicts (ConflictError), when the graph gave them


class InvalidError(OmniGraphError): pass
class NotFoundError(OmniGraphError): pass
class AlreadyExistsError(OmniGraphError): pass
class ConflictError(OmniGraphError): pass
class PreconditionFailedError(OmniGraphError): pass
class ParseError(OmniGraphError): pass
class TypeCheckError(OmniGraphError): pass
class ConstraintError(OmniGraphError): pass
class UnsupportedError(OmniGraphError): pass
class AuthError(OmniGraphError): pass
class LimitError(OmniGraphError): pass
class InternalError(OmniGraphError): pass
class UnavailableError(OmniGraphError): pass


_BY_CODE = {
    "invalid": InvalidError, "bad_request": InvalidError, "not_found": NotFoundError,
    "already_exists": AlreadyExistsError, "conflict": ConflictError,
    "precondition_failed": PreconditionFailedError, "parse": ParseError, "type": TypeCheckError,
    "constraint": ConstraintError, "unsupported": UnsupportedError, "auth": AuthError,
    "unauthorized": AuthError, "forbidden": AuthError, "limit": LimitError, "throttled": LimitError,
    "too_many_requests": LimitError, "internal": InternalError, "io": InternalError, "corrupt": InternalError,
    "out_of_memory": InternalError, "unsupported_version": UnsupportedError,
    "unavailable": UnavailableError,
}


def make_error(code, message, status=None, error_class=None):
    """The exception of `code`; `error_class` (a served graph's Omnigraph-Error-Class header:
    the library's status name behind the server's wire code) picks the class when given, so
    both transports raise the same class for the same failure."""
    cls = _BY_CODE.get(error_class) or _BY_CODE.get(code, OmniGraphError)
    return cls(code, message, status)

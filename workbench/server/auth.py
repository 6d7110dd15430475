"""Bearer tokens: who is calling, and whether their role allows the request.

``Authorization: Bearer TOKEN`` on every endpoint but ``/healthz``. A missing, malformed,
unknown or revoked token is 401 (the answer does not say which of the last two, nor echo
the token); a known token whose role is too low is 403. Tokens are checked against the
store on every request (``store.tokens.authenticate``: constant-time), so a revocation
takes effect at the next request.
"""

from __future__ import annotations

from collections.abc import Mapping

from store.api import Store
from store.tokens import Caller, authenticate
from workbench.server.errors import ApiError

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="wb"'}
MAX_TOKEN_CHARS = 256


def caller_of(store: Store, headers: Mapping[str, str]) -> Caller:
    value = headers.get("authorization")
    if not value:
        raise ApiError(
            401,
            "this endpoint needs 'Authorization: Bearer TOKEN' (make one with 'wb token add NAME --role ROLE')",
            _CHALLENGE,
        )
    scheme, _, token = value.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
        raise ApiError(401, "the Authorization header is not 'Bearer TOKEN'", _CHALLENGE)
    caller = authenticate(store, token)
    if caller is None:
        raise ApiError(401, "unknown or revoked token", _CHALLENGE)
    return caller


def require(caller: Caller, role: str, what: str) -> None:
    if not caller.may(role):
        raise ApiError(403, f"token {caller.name!r} has role {caller.role!r}; {what} needs role {role!r} or above")

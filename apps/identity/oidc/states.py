"""Each sign-in's state bound to the provider that started it.

The library keeps a session's pending states (with their nonce and PKCE verifier) but not
which provider each was sent to; with several providers, a code and state from provider A
brought to provider B's callback (a mix-up) would be exchanged at B. The state is bound here
when the sign-in starts and checked at the callback, with the authorization response's `iss`
(RFC 9207) when the provider sends one.
"""

from __future__ import annotations

from django.http import HttpRequest

from apps.identity.oidc.providers import OidcProvider
from apps.identity.oidc.refusals import OidcRefusal, OidcRefused

_BOUND = "identity_oidc_state_providers"
_LIBRARY_STATES = "oidc_states"  # where mozilla-django-oidc keeps the pending states


def state_bind(*, request: HttpRequest, state: str, provider: OidcProvider) -> None:
    pending = request.session.get(_LIBRARY_STATES, {})
    bound = {s: key for s, key in request.session.get(_BOUND, {}).items() if s in pending}
    bound[state] = provider.key
    request.session[_BOUND] = bound


def state_check(*, request: HttpRequest, provider: OidcProvider) -> None:
    """Refuses a callback whose state this session did not start with `provider`."""
    state = request.GET.get("state", "")
    if state not in request.session.get(_LIBRARY_STATES, {}):
        raise OidcRefused(OidcRefusal.STATE, "state not in session")
    started_with = request.session.get(_BOUND, {}).get(state)
    issuer = request.GET.get("iss")
    if started_with != provider.key or (issuer is not None and issuer != provider.issuer):
        _state_drop(request=request, state=state)  # a mix-up attempt: this state is spent
        raise OidcRefused(
            OidcRefusal.WRONG_PROVIDER,
            f"state started with {started_with!r}, callback of {provider.key!r}, iss {issuer!r}",
        )


def _state_drop(*, request: HttpRequest, state: str) -> None:
    for name in (_LIBRARY_STATES, _BOUND):
        entries = dict(request.session.get(name, {}))
        entries.pop(state, None)
        request.session[name] = entries

"""`Authorization: Bearer <token>`, the header every OpenAI client sends, for the same API
tokens as the REST API (`manage.py api_token`), with the same failure throttle."""

from __future__ import annotations

from ragplatform.login_throttle import ThrottledTokenAuthentication


class BearerTokenAuthentication(ThrottledTokenAuthentication):
    keyword = "Bearer"

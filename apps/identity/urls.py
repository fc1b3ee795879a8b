from django.urls import path

from apps.identity.web.views import OidcCallbackView, OidcSignInView

urlpatterns = [
    # The single provider of RAG_OIDC_ISSUER keeps the paths it was registered with.
    path("oidc/authenticate/", OidcSignInView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", OidcCallbackView.as_view(), name="oidc_authentication_callback"),
    # Each provider of RAG_OIDC_PROVIDERS has its own (its redirect URI at that provider).
    path("oidc/<slug:provider>/authenticate/", OidcSignInView.as_view(), name="oidc_provider_init"),
    path(
        "oidc/<slug:provider>/callback/", OidcCallbackView.as_view(), name="oidc_provider_callback"
    ),
]

from django.urls import path

from apps.identity.web.views import OidcCallbackView, OidcSignInView

urlpatterns = [
    path("oidc/authenticate/", OidcSignInView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", OidcCallbackView.as_view(), name="oidc_authentication_callback"),
]

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.identity.signin.forms import SignInForm
from apps.identity.web.views import SignOutView

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=SignInForm),
        name="login",
    ),
    path("accounts/logout/", SignOutView.as_view(), name="logout"),
    path("accounts/", include("apps.identity.urls")),
    path("scim/v2/", include("apps.identity.api.urls")),  # SCIM 2.0 provisioning
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the interface switch
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("apps.answers.api.urls")),
    path("v1/", include("apps.reach.urls")),  # the OpenAI-compatible door
    path("widget/", include("apps.reach.widget.urls")),  # the embeddable answer widget
    path("", include("apps.corpus.urls")),
    path("", include("apps.answers.urls")),
]

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.corpus.views import document_source

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("apps.corpus.urls")),
    path("documents/<int:document_id>/source/", document_source, name="document-source"),
    path("", include("apps.answers.urls")),
]

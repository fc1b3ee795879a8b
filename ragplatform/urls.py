from django.contrib import admin
from django.urls import include, path

from apps.corpus.views import document_source

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("apps.corpus.urls")),
    path("documents/<int:document_id>/source/", document_source, name="document-source"),
    path("", include("apps.answers.urls")),
]

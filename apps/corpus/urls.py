from django.urls import path

from apps.corpus.api import DocumentDetailView, DocumentListCreateView

urlpatterns = [
    path("documents/", DocumentListCreateView.as_view(), name="api-document-list"),
    path("documents/<int:pk>/", DocumentDetailView.as_view(), name="api-document-detail"),
]

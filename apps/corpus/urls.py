from django.urls import path

from apps.corpus.api.views import DocumentDetailView, DocumentListCreateView
from apps.corpus.web.views import chunk_detail, document_read, document_source

urlpatterns = [
    path("api/documents/", DocumentListCreateView.as_view(), name="api-document-list"),
    path("api/documents/<int:pk>/", DocumentDetailView.as_view(), name="api-document-detail"),
    path("documents/<int:document_id>/source/", document_source, name="document-source"),
    path("documents/<int:document_id>/read/", document_read, name="document-read"),
    path("documents/<int:document_id>/chunks/<int:index>/", chunk_detail, name="document-chunk"),
]

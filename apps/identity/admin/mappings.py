"""Which directory group becomes which Django group, and the accounts' provider subjects."""

from __future__ import annotations

from django.contrib import admin

from apps.identity.models import ExternalIdentity, GroupMapping
from ragplatform.admin_base import ReadOnlyAdmin


@admin.register(GroupMapping)
class GroupMappingAdmin(admin.ModelAdmin[GroupMapping]):
    list_display = ["external_name", "source", "group"]
    list_filter = ["source"]
    list_select_related = ["group"]
    search_fields = ["external_name", "group__name"]


@admin.register(ExternalIdentity)
class ExternalIdentityAdmin(ReadOnlyAdmin):
    list_display = ["user", "source", "issuer", "subject", "created_at"]
    list_select_related = ["user"]
    search_fields = ["user__username", "subject"]

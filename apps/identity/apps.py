from django.apps import AppConfig


class IdentityConfig(AppConfig):
    """Single sign-on (OpenID Connect), the LDAP directory, and the identity audit trail."""

    name = "apps.identity"
    label = "identity"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        from apps.identity.audit.receivers import receivers_connect
        from apps.identity.audit.services import identity_events_purge
        from apps.identity.ldap.backend import directory_errors_connect
        from apps.identity.oidc.providers import oidc_providers
        from ragplatform.periodic import periodic_register

        oidc_providers()  # a bad RAG_OIDC_PROVIDERS stops start-up, not the first sign-in
        receivers_connect()
        directory_errors_connect()
        periodic_register(
            name="identity.identity_events_purge",
            every_s=lambda: 3600.0,
            run=lambda: identity_events_purge(days=settings.RAG_IDENTITY_AUDIT_DAYS),
        )

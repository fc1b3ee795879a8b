"""Identity: local passwords, OpenID Connect sign-in, the LDAP directory, the identity audit."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Choice, Float, Int, List, Secret, Text

ROWS = (
    Choice(
        "RAG_LOCAL_PASSWORDS",
        ("all", "break-glass"),
        "Who may sign in with a local password: everyone, or only the break-glass superusers.",
    ),
    List(
        "RAG_BREAK_GLASS_USERS",
        (),
        "Superusers who keep their local password when RAG_LOCAL_PASSWORDS=break-glass.",
    ),
    Bool(
        "RAG_IDENTITY_GROUPS_EXACT",
        True,
        "A directory group without a mapping row maps to the Django group of the same name.",
    ),
    Int(
        "RAG_IDENTITY_ACCESS_PAGE_USERS",
        200,
        "The most members the admin's collection access page lists.",
        minimum=1,
    ),
    Int("RAG_IDENTITY_AUDIT_DAYS", 365, "How long identity audit rows are kept.", minimum=1),
    Text("RAG_OIDC_ISSUER", "", "The OpenID provider's issuer URL; empty turns OIDC off."),
    Text("RAG_OIDC_CLIENT_ID", "", "The client id registered at the provider."),
    Secret("RAG_OIDC_CLIENT_SECRET", "The client secret registered at the provider."),
    Text("RAG_OIDC_PROVIDER_NAME", "single sign-on", "The name on the sign-in button."),
    Text("RAG_OIDC_SCOPES", "openid email profile", "The scopes asked for, space-separated."),
    Text("RAG_OIDC_USERNAME_CLAIM", "preferred_username", "The claim that becomes the user name."),
    Text("RAG_OIDC_GROUPS_CLAIM", "groups", "The claim holding the groups; empty: not read."),
    Bool("RAG_OIDC_GROUPS_REQUIRED", True, "Refuse a sign-in whose groups claim is missing."),
    Text(
        "RAG_OIDC_SIGN_ALGO",
        "RS256",
        "The ID token's signing algorithm: RS256, RS384, RS512, ES256 or ES384.",
        shown_allowed="an RS or ES algorithm",
    ),
    Secret(
        "RAG_OIDC_PROVIDERS",
        "Further OpenID providers, a JSON list (key, label, issuer, client_id, client_secret...).",
    ),
    Int("RAG_OIDC_CLOCK_SKEW_S", 60, "Leeway for the ID token's times.", minimum=0),
    Float("RAG_OIDC_TIMEOUT_S", 10.0, "Timeout of each call to the provider.", low=0.5, high=120),
    Int(
        "RAG_OIDC_DISCOVERY_CACHE_S",
        3600,
        "How long the provider's discovery document is kept.",
        minimum=0,
    ),
    Secret("RAG_SCIM_TOKEN", "The bearer token of SCIM provisioning; empty turns SCIM off."),
    Int("RAG_SCIM_MAX_RESULTS", 200, "The most resources one SCIM list returns.", minimum=1),
    Text("RAG_LDAP_URI", "", "The directory's ldap:// or ldaps:// URI; empty turns LDAP off."),
    Text("RAG_LDAP_BIND_DN", "", "The service account that searches the directory."),
    Secret("RAG_LDAP_BIND_PASSWORD", "The service account's password."),
    Bool("RAG_LDAP_START_TLS", False, "Upgrade an ldap:// connection with StartTLS."),
    Text("RAG_LDAP_CA_FILE", "", "A CA certificate file for LDAPS or StartTLS."),
    Text("RAG_LDAP_USER_BASE", "", "Where people are searched."),
    Text("RAG_LDAP_USER_FILTER", "(uid=%(user)s)", "The filter that finds one person."),
    Text("RAG_LDAP_GROUP_BASE", "", "Where groups are searched."),
    Text("RAG_LDAP_GROUP_FILTER", "(objectClass=groupOfNames)", "The filter for groups."),
    Choice(
        "RAG_LDAP_GROUP_TYPE",
        ("nested-group-of-names", "group-of-names", "nested-active-directory", "active-directory"),
        "How group membership is stored.",
    ),
    Text("RAG_LDAP_STAFF_GROUP", "", "The group DN whose members get is_staff."),
    Text("RAG_LDAP_SUPERUSER_GROUP", "", "The group DN whose members get is_superuser."),
    Float("RAG_LDAP_TIMEOUT_S", 5.0, "Timeout of each call to the directory.", low=0.5, high=120),
)

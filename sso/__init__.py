"""Sign-in from an organisation's directory (LDAP/AD) or identity provider (OpenID Connect), and sessions."""

"""The Bearer scheme in the OpenAPI schema (drf-spectacular cannot guess a custom authentication class)."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "apikeys.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API key (`dmk_…`) from POST /api/keys/, scoped to its knowledge bases and "
                               "to read or ask."}

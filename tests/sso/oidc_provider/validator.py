"""Claims the test provider puts in ID tokens and userinfo: names, mail and a `groups` claim."""
from oauth2_provider.oauth2_validators import OAuth2Validator


class GroupsClaimValidator(OAuth2Validator):
    oidc_claim_scope = None  # every claim below, whatever scopes were asked for

    def get_additional_claims(self, request):
        user = request.user
        return {"preferred_username": user.username, "email": user.email, "given_name": user.first_name,
                "family_name": user.last_name, "groups": sorted(user.groups.values_list("name", flat=True))}

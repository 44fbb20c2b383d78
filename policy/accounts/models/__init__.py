"""Who may do what (API tokens) and what they did (the policy change log, refused requests)."""

from policy.accounts.models.audit import AuthorizationFailure, PolicyChange
from policy.accounts.models.tokens import ApiToken

__all__ = ["ApiToken", "AuthorizationFailure", "PolicyChange"]

"""Users for the tests, one per role (personas as in healthchecks' BaseTestCase)."""

from __future__ import annotations

from django.contrib.auth.models import Group, User

PASSWORD = "correct-horse-battery-staple"


def create_user(username: str, role: str | None = None, **fields: object) -> User:
    """A user holding ``role``; its group is made if a flush removed it, so no persona depends
    on the tests that ran before."""
    user = User.objects.create_user(username=username, password=PASSWORD, **fields)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user

"""Roles are ordered groups; superusers hold them all."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User
from django.core.management import call_command

from policy.accounts.roles import can_edit_policy, can_push_policy, has_role, roles_of
from policy.core.choices import Role


def test_groups_exist_after_migrations(db: None) -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "editor", "operator"}


@pytest.mark.django_db(transaction=True)
def test_a_flush_or_a_deleted_group_does_not_lose_a_role() -> None:
    """Tests flush the database between transactional tests; an admin may delete a group."""
    Group.objects.filter(name="editor").delete()
    call_command("migrate", verbosity=0)
    assert Group.objects.filter(name="editor").exists()
    call_command("flush", interactive=False, verbosity=0)
    assert set(Group.objects.values_list("name", flat=True)) == {"viewer", "editor", "operator"}


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("viewer", ["viewer"]),
        ("editor", ["viewer", "editor"]),
        ("operator", ["viewer", "editor", "operator"]),
        ("superuser", ["viewer", "editor", "operator"]),
        ("nobody", []),
    ],
)
def test_roles_include_lower_ones(
    request: pytest.FixtureRequest, persona: str, expected: list[str]
) -> None:
    user: User = request.getfixturevalue(persona)
    assert roles_of(user) == expected


def test_capabilities(viewer: User, editor: User, operator: User, nobody: User) -> None:
    """Reading is the viewer role, as pages and the API check it (``has_role``)."""
    assert [has_role(viewer, Role.VIEWER), can_edit_policy(viewer), can_push_policy(viewer)] == [
        True,
        False,
        False,
    ]
    assert [has_role(editor, Role.VIEWER), can_edit_policy(editor), can_push_policy(editor)] == [
        True,
        True,
        False,
    ]
    assert can_push_policy(operator)
    assert not has_role(nobody, Role.VIEWER)


def test_inactive_and_anonymous_users_have_no_role(viewer: User) -> None:
    viewer.is_active = False
    assert roles_of(viewer) == []
    assert roles_of(AnonymousUser()) == []

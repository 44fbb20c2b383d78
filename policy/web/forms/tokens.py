"""The "New API token" form: a name, read-only or not, and an optional expiry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.utils import timezone

from policy.accounts.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'ci-deploy'; unique among yours."
    )
    write_enabled = forms.BooleanField(
        required=False,
        initial=True,
        label="Allow changes",
        help_text="Unticked: a read-only token (any POST, PUT, PATCH or DELETE answers 403).",
    )
    expires = forms.DateTimeField(
        required=False,
        help_text="YYYY-MM-DD HH:MM, server time; empty: never expires.",
    )

    def __init__(self, *args: Any, owner: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"]).strip()
        if ApiToken.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError(f"You already have a token named {name!r}.")
        return name

    def clean_expires(self) -> datetime | None:
        expires: datetime | None = self.cleaned_data.get("expires")
        if expires is not None and expires <= timezone.now():
            raise forms.ValidationError("Must be in the future.")
        return expires

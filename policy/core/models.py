"""What every editable policy object has: a version (its ETag) and a snapshot for its history."""

from __future__ import annotations

import datetime
import decimal
from typing import Any, ClassVar

from django.db import models


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


class VersionedModel(models.Model):
    """A policy object edited through the services.

    ``version`` starts at 1 and grows by one on every change (the API's ``ETag: W/"<version>"``);
    :meth:`snapshot` is the state a :class:`~policy.accounts.models.PolicyChange` records and a
    revert restores: the fields named in ``SNAPSHOT_FIELDS`` (foreign keys as ids), as JSON.
    """

    SNAPSHOT_FIELDS: ClassVar[tuple[str, ...]] = ()

    version = models.PositiveIntegerField(default=1, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    @property
    def etag(self) -> str:
        return f'W/"{self.version}"'

    def snapshot(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name in self.SNAPSHOT_FIELDS:
            field = self._meta.get_field(name)
            attname = getattr(field, "attname", name)
            data[name] = _json_value(getattr(self, attname))
        return data

    def cluster_id_for_history(self) -> int | None:
        """The cluster a change of this object is listed under."""
        return getattr(self, "cluster_id", None)

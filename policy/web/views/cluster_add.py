"""The "Add cluster" page: connect a cluster as ``manage.py add_cluster`` does."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from policy.accounts.changes import ChangeContext
from policy.accounts.roles import role_required
from policy.clusters.gateway.errors import GatewayError
from policy.core.choices import Role
from policy.policies.services import PolicyInvalid
from policy.sync.connect import add_cluster
from policy.web.forms.clusters import AddClusterForm


@role_required(Role.OPERATOR)
def cluster_add(request: HttpRequest) -> HttpResponse:
    """Reach the cluster, find its scheduler's ConfigMap, check permissions, store it; then
    its sync page, where the first refresh is one click away."""
    superuser = bool(getattr(request.user, "is_superuser", False))
    form = AddClusterForm(request.POST or None, superuser=superuser)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                connected = add_cluster(
                    data["name"],
                    kind=data["kind"],
                    ctx=ChangeContext.from_request(request, ui=True),
                    kubeconfig_path=data["kubeconfig_path"].strip(),
                    context=data["context"].strip(),
                    scheduler_configmap=data["scheduler_configmap"],
                )
            except GatewayError as exc:
                form.add_error(None, f"Cannot connect: {exc}")
            except PolicyInvalid as exc:
                for error in exc.errors:
                    field = error.field if error.field in form.fields else None
                    form.add_error(field, error.detail)
            else:
                for line in connected.report():
                    missing = line.startswith(("missing", "apply"))
                    (messages.warning if missing else messages.success)(request, line)
                return redirect(reverse("cluster-sync", args=[connected.cluster.pk]))
        status = 400
    return render(request, "policy/cluster_add.html", {"form": form}, status=status)

"""What the policy domain tells the layers above it, without importing them."""

from django.dispatch import Signal

# Sent after a change to a cluster's policies (or the cluster's own settings) was saved;
# ``cluster`` is the Cluster. The sync pushes clusters in automatic push mode.
policies_changed = Signal()

"""The clusters API: connecting clusters, their settings, and what their policies render to."""

"""The server-rendered pages: views (thin: pick inputs, call services, render), forms,
presenters (page logic: pure functions from snapshots and decisions to what pages show),
formatting and links in one place each, and the views the worker prepares ahead."""

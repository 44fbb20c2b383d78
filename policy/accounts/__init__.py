"""Who may do what, and who did what: API tokens, roles (viewer, editor, admin), the policy
change log every edit records (``changes``), and refused requests."""

"""The portal (/portal/): server-rendered pages for an organization's admins and analysts.

Every view is wrapped by `access.portal_view`, which resolves the viewer's organization and role; every
row it shows comes from a selector that takes that organization as a required keyword.

Adding a page: a view wrapped in `@portal_view()` (or `@portal_view(admin_only=True)`: analysts get a 403),
reading through a selector that takes `organization_id=viewer_of(request).organization_id`; its route in
`urls.py` (tests/portal/test_isolation.py fails for a route not wrapped in `portal_view`); a `NavItem` in
`navigation.py`; a template extending `portal/base.html`, with rows in `templates/portal/_partials/`.
"""

"""The portal (/portal/): server-rendered pages for an organization's admins and analysts.

Every view is wrapped by `access.portal_view`, which resolves the viewer's organization and role; every
row it shows comes from a selector that takes that organization as a required keyword.
"""

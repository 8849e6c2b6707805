"""The pipeline that ties routing, providers, billing and observability for one request."""

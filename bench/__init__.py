"""Gateway overhead benchmark: `make bench-gateway` (and `make bench-peer` with LiteLLM). See docs/benchmarks.md."""

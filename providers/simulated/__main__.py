"""Serve the simulated upstream: `python -m providers.simulated --port 9100 --time-scale 0`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

from .app import build_app
from .profiles import load_profiles

DEFAULT_CATALOG = Path(__file__).resolve().parents[2] / "routing" / "data" / "catalog.json"


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and serve until interrupted; exit 2 when an explicit catalog cannot be read."""
    parser = argparse.ArgumentParser(prog="python -m providers.simulated", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiply every delay (0 = instant)")
    parser.add_argument("--record-requests", type=int, default=0, metavar="N",
                        help="keep the last N request bodies, served at GET /debug/requests (for tests)")
    parser.add_argument(
        "--catalog", type=Path, default=None, help=f"catalog JSON (default {DEFAULT_CATALOG})"
    )
    args = parser.parse_args(argv)
    if args.time_scale < 0:
        parser.error("--time-scale must be >= 0")
    catalog = args.catalog or DEFAULT_CATALOG
    try:
        profiles = load_profiles(catalog)
    except (OSError, ValueError) as exc:
        if args.catalog is not None:
            parser.exit(2, f"cannot read catalog {catalog}: {exc}\n")
        # Without a catalog every model gets the default profile; the upstream still answers.
        print(f"simulated upstream: no catalog at {catalog} ({exc}); using default profiles", file=sys.stderr)
        profiles = {}
    app = build_app(profiles=profiles, time_scale=args.time_scale, record_requests=args.record_requests)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()

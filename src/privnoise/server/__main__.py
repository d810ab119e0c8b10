"""``python -m privnoise.server --config owner.toml [--host H] [--port P]``: run the query server (uvicorn)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m privnoise.server", description=__doc__)
    parser.add_argument("--config", required=True)
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    import uvicorn

    from .app import create_app
    from .config import load_config

    config = load_config(args.config)
    app = create_app(config)
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

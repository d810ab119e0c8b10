"""``python -m privnoise.server --config owner.toml [--host H] [--port P]``: run the query server (uvicorn).

``python -m privnoise.server hash-key`` reads an API key on standard input and prints its stored form for
``admin_key_hash`` in owner.toml.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hash-key"]:
        from .keys import admin_key_entry

        try:
            print(admin_key_entry(sys.stdin.readline().strip()))
        except ValueError as exc:
            print(f"hash-key: {exc}", file=sys.stderr)
            return 2
        return 0
    parser = argparse.ArgumentParser(prog="python -m privnoise.server", description=__doc__)
    parser.add_argument("--config", required=True)
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    from .config import load_config
    from .run import serve

    serve(load_config(args.config), host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())

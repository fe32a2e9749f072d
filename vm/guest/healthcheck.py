"""Container health check: exit 0 when the local guest answers /health with our token, 1 otherwise.

Example: python -m vm.guest.healthcheck --port 8765
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token-file", default=None)
    a = p.parse_args(argv)
    import httpx

    from cua.env.base import EnvError
    from cua.env.remote import find_token

    try:
        token = find_token(None, a.token_file)
        r = httpx.get(f"http://127.0.0.1:{a.port}/health", headers={"Authorization": f"Bearer {token}"},
                      timeout=4.0, trust_env=False)
    except (EnvError, httpx.HTTPError) as e:
        print(f"unhealthy: {e}", file=sys.stderr)
        return 1
    ok = r.status_code == 200 and r.json().get("ok") is True
    print("healthy" if ok else f"unhealthy: HTTP {r.status_code}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

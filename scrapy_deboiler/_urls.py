"""Which site a URL belongs to."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["site_of_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def site_of_url(url: str) -> str:
    """The URL's host, lower-cased, with its port when not the scheme's
    default (two servers on one host are two sites); "" when there is none."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return ""
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host

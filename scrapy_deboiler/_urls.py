"""Which site a URL belongs to: the one place a site's key is made (the
pipeline, the command line, Redis pools and signature file names use it)."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["legacy_site_keys", "site_of_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _ascii_host(host: str) -> str:
    """A host name in its ASCII (IDNA, punycode) form, lower-case, as
    Scrapy's requests carry it (w3lib encodes with Python's IDNA codec): a
    host's Unicode and punycode forms are one site. A name the codec refuses
    (a label over 63 characters, an empty one) stays as it is."""
    if host.isascii():
        return host.lower()
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return host.lower()


def site_of_url(url: str) -> str:
    """The URL's host, lower-case and IDNA-encoded, with its port when not
    the scheme's default (two servers on one host are two sites); an IPv6
    host keeps its brackets (``[2001:db8::1]:8080``); "" when there is none."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return ""
    if ":" in host:  # IPv6 (urlsplit took the brackets off)
        host = f"[{host}]"
    elif host:
        host = _ascii_host(host).rstrip(".")
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host


def legacy_site_keys(site: str) -> list[str]:
    """The keys releases before IDNA normalisation gave the site ``site``
    (its signature files are still found under them): the Unicode form of a
    punycode host. IPv6 hosts are not looked up under their old keys: those
    lost the brackets, so ``[2001:db8::1]:8080`` and ``[2001:db8::1:8080]``
    shared one, and the file may hold either site's pages."""
    if "xn--" not in site or site.startswith("["):
        return []
    host, colon, port = site.rpartition(":") if site.rpartition(":")[2].isdigit() else (site, "", "")
    try:
        unicode = host.encode("ascii").decode("idna")
    except UnicodeError:
        return []
    return [unicode + colon + port] if unicode != host else []

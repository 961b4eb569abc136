"""Where players on other machines reach this server: said once at start-up, so that whoever
runs it knows what to give friends (README, "Race friends on other machines").

The public URL when one is set; else each address the server listens on (every address of
the machine's interfaces when it is bound to all of them), loopback last, since a loopback
address serves this machine only.
"""

from __future__ import annotations

import ipaddress

import ifaddr

ALL_V4, ALL_V6 = "0.0.0.0", "::"


def _http(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def interface_addresses(v6: bool) -> list[str]:
    """Every usable address of the machine's interfaces (IPv4, and IPv6 if `v6`); link-local
    IPv6 addresses need an interface name to be dialled, so they are left out."""
    out: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str):
                out.append(ip.ip)
            elif v6:
                address = ipaddress.IPv6Address(ip.ip[0])
                if not address.is_link_local:
                    out.append(str(address))
    return sorted(set(out), key=lambda a: (ipaddress.ip_address(a).is_loopback, ":" in a, a))


def friend_urls(public_url: str | None, host: str, port: int) -> list[str]:
    """The addresses to give players, best first."""
    if public_url is not None:
        return [public_url]
    if host in ("", ALL_V4, ALL_V6):
        return [_http(a, port) for a in interface_addresses(v6=host != ALL_V4)]
    return [_http(host, port)]


def reach_lines(public_url: str | None, host: str, port: int) -> list[str]:
    """What the start-up log says about it."""
    urls = friend_urls(public_url, host, port)
    lines = [f"players connect at {url} (race links {url}/r/CODE)" for url in urls]
    if public_url is None and all(_loopback(u) for u in urls):
        lines.append(
            "only this machine can connect: to race friends on other machines, listen on "
            "their network (--host 0.0.0.0) and say where they reach it (--public-url)"
        )
    elif public_url is None:
        lines.append("players' race links name the address they connected to; --public-url "
                     "sets the one to share")  # fmt: skip
    return lines


def _loopback(url: str) -> bool:
    host = url.split("://", 1)[1].rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"

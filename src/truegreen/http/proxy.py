"""Which proxy a request goes through, decided as kubectl decides it.

A kubeconfig cluster's `proxy-url` is used for every request to that cluster, validated as
client-go's `tools/clientcmd/helpers.go` (`parseProxyURL`) validates it. Without one, kubectl
uses Go's `http.ProxyFromEnvironment`, whose rules are golang.org/x/net `http/httpproxy/proxy.go`:
`HTTPS_PROXY` for https servers, `HTTP_PROXY` for http ones (upper case first, then lower case),
`NO_PROXY` exempting hosts by name, domain suffix, IP, CIDR and port, and `localhost` and
loopback addresses never proxied. This module only decides; `proxy_dial` connects.
"""

import base64
import ipaddress
from collections.abc import Mapping
from urllib.parse import SplitResult, unquote, urlsplit

from msgspec import Struct

from truegreen.http.gourl import url_fault
from truegreen.patterns import LazyPattern

PROXY_SCHEMES = ("http", "https", "socks5")
"""The proxy kinds kubectl accepts in `proxy-url` (client-go `parseProxyURL`)."""
_DEFAULT_PORTS = {"http": 80, "https": 443, "socks5": 1080}
"""A proxy URL without a port uses its scheme's (httpproxy `portMap`)."""

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class ProxyUrlError(ValueError):
    """A proxy address that cannot be used; the message never quotes its credentials."""


class Proxy(Struct, frozen=True):
    """One proxy: how to reach it, and the login it asks for. `repr` never shows the password."""

    scheme: str
    """`http`, `https` (TLS to the proxy itself) or `socks5`."""
    host: str
    port: int
    username: str | None = None
    """The URL's user, percent-decoded; None when the URL has no userinfo at all."""
    password: str = ""

    def __repr__(self) -> str:
        # Records print every field; this one leaves the login's secret out.
        return (
            f"Proxy(scheme={self.scheme!r}, host={self.host!r}, port={self.port!r}, "
            f"username={self.username!r})"
        )

    @property
    def address(self) -> str:
        """`host:port`, IPv6 hosts bracketed, for messages and the CONNECT line."""
        return join_host_port(self.host, self.port)

    def basic_authorization(self) -> str | None:
        """The Proxy-Authorization value Go sends whenever the URL has userinfo, else None."""
        if self.username is None:
            return None
        login = f"{self.username}:{self.password}".encode()
        return "Basic " + base64.b64encode(login).decode("ascii")


def join_host_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 host in brackets (Go's `net.JoinHostPort`)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_proxy_url(text: str) -> Proxy:
    """A kubeconfig `proxy-url`, accepted only where client-go accepts it: Go's url.Parse
    first (kubectl: "could not parse"), then the scheme (tools/clientcmd/helpers.go
    parseProxyURL, which clientcmd/validation.go validateClusterInfo runs as the file is read).

    Raises ProxyUrlError with a message fit for the operator (never the URL's credentials).
    """
    fault = url_fault(text)
    if fault and _SCHEME_PREFIX.match(text):
        raise ProxyUrlError(_could_not_parse(text, fault))
    parts = _split(text)
    if parts.scheme not in PROXY_SCHEMES:
        # urlsplit keeps a scheme only when it is made of [a-z0-9+.-]: safe to quote.
        raise ProxyUrlError(
            f'unsupported scheme "{parts.scheme}", must be http, https, or socks5'
            if parts.scheme
            else "it has no scheme; it must start with http://, https:// or socks5://"
        )
    return _proxy(parts)


_SCHEME_PREFIX = LazyPattern(r"[A-Za-z][A-Za-z0-9+.\-]*:")
"""A scheme (net/url `getScheme`); without one, the line says that instead of Go's fault."""
_AUTHORITY = LazyPattern(r"[A-Za-z][A-Za-z0-9+.\-]*://([^/?#]*)")
"""The authority Go reads: after `scheme://`, up to the first `/`, `?` or `#`."""


def _could_not_parse(text: str, fault: str) -> str:
    """kubectl's reason, with Go's own fault where it quotes nothing of the user part: a `/`,
    `?` or `#` in a password ends the authority before its `@`, and Go then reads what follows
    a `:` as the port (`http://u:p/w@host`: port "p"), so a fault is shown only where the
    authority Go read holds every `@` written."""
    authority = _AUTHORITY.match(text)
    held = 0 if authority is None else authority.group(1).count("@")
    return f"could not parse ({fault})" if held == text.count("@") else "could not parse"


def _proxy(parts: SplitResult) -> Proxy:
    try:
        port = parts.port
    except ValueError:
        raise ProxyUrlError("its port is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise ProxyUrlError("it names no host")
    # `urlsplit` keeps userinfo percent-encoded; Go's `User.Username()` decodes it.
    username = None if parts.username is None else unquote(parts.username)
    password = unquote(parts.password or "")
    return Proxy(
        parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme], username, password
    )


def _environment_proxy(value: str) -> Proxy | None:
    """An `HTTP(S)_PROXY` value as httpproxy's `parseProxy` reads it; None when unusable.

    A value Go's url.Parse refuses, or one that leaves no scheme or no host
    (`proxy.corp:3128`), is read again as `http://` + value, and that reading is kept where
    Go's parser accepts it; a value that parses neither way is ignored, as Go ignores it. Go
    keeps an unknown scheme (`foo://`) and then fails every request through it:
    ProxyUrlError says so before any is sent.
    """
    if not value:
        return None
    parts = _go_split(value)
    if parts is None or not parts.scheme or not parts.netloc.rpartition("@")[2]:
        again = _go_split("http://" + value)
        parts = parts if again is None else again
    if parts is None:
        return None
    if parts.scheme not in PROXY_SCHEMES:
        raise ProxyUrlError(f'unsupported scheme "{parts.scheme}", must be http, https, or socks5')
    try:
        return _proxy(parts)
    except ProxyUrlError:
        return None


def _go_split(text: str) -> SplitResult | None:
    """`text` split, where Go's url.Parse accepts it and urlsplit can split it; else None."""
    if url_fault(text):
        return None
    try:
        return urlsplit(text)
    except ValueError:
        return None


def _split(text: str) -> SplitResult:
    try:
        return urlsplit(text)
    except ValueError:  # a `]` without `[`, or brackets around no IPv6 address
        raise ProxyUrlError("it is not a URL") from None


def _getenv_any(environ: Mapping[str, str], *names: str) -> str:
    """The first of `names` set to a non-empty value (httpproxy `getEnvAny`)."""
    return next((environ[name] for name in names if environ.get(name)), "")


class _Exempt(Struct, frozen=True):
    """One `NO_PROXY` entry: all hosts, a network, one IP, or a domain (with optional port)."""

    everything: bool = False
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    ip: IpAddress | None = None
    domain: str = ""
    """With its leading dot: `.corp.example` matches every name under it."""
    exact_too: bool = False
    """The domain was written without a leading dot, so it also matches itself."""
    port: str = ""
    """Empty: any port."""

    def matches(self, host: str, port: str, ip: IpAddress | None) -> bool:
        if self.everything:
            return True
        if self.network is not None:
            return ip is not None and ip in self.network
        if self.port and self.port != port:
            return False
        if self.ip is not None:
            return ip is not None and ip == self.ip
        return host.endswith(self.domain) or (self.exact_too and host == self.domain[1:])


def _exemptions(no_proxy: str) -> list[_Exempt]:
    """`NO_PROXY` parsed as httpproxy's `config.init` parses it; malformed entries are skipped."""
    rules: list[_Exempt] = []
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return [_Exempt(everything=True)]
        if "/" in entry:
            try:
                rules.append(_Exempt(network=ipaddress.ip_network(entry, strict=False)))
            except ValueError:
                pass  # Go's ParseCIDR fails too; the entry then falls through as a name
            else:
                continue
        split = split_host_port(entry)
        host, port = split if split is not None else (entry, "")
        if not host:
            continue
        ip = _ip(host)
        if ip is not None:
            rules.append(_Exempt(ip=ip, port=port))
            continue
        if host.startswith("*."):
            host = host[1:]
        exact_too = not host.startswith(".")
        name = host if exact_too else host[1:]
        rules.append(_Exempt(domain="." + ascii_host(name), exact_too=exact_too, port=port))
    return rules


def split_host_port(text: str) -> tuple[str, str] | None:
    """`host:port` split as Go's `net.SplitHostPort` splits it; None where Go errs."""
    colon = text.rfind(":")
    if colon < 0:
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or end + 1 != colon:
            return None
        host = text[1:end]
    else:
        host = text[:colon]
        if ":" in host:
            return None
    if "[" in host or "]" in host or "[" in text[colon:] or "]" in text[colon:]:
        return None
    return host, text[colon + 1 :]


def _ip(host: str) -> IpAddress | None:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    # Go's ParseIP turns an IPv4-mapped IPv6 address into the IPv4 address it carries.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def ascii_host(host: str) -> str:
    """An internationalised name in its ASCII (punycode) form, as Go compares names."""
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def proxy_from_environment(
    environ: Mapping[str, str], scheme: str, host: str, port: int
) -> Proxy | None:
    """The proxy Go's `ProxyFromEnvironment` picks for a `scheme://host:port` server, or None.

    `host` is the URL's host without brackets. Loopback addresses and `localhost` are never
    proxied; `NO_PROXY` exempts hosts by name, domain suffix, IP, CIDR (with an optional port).
    Raises ProxyUrlError for a variable naming a proxy of an unknown kind.
    """
    names = {"https": ("HTTPS_PROXY", "https_proxy"), "http": ("HTTP_PROXY", "http_proxy")}
    if scheme not in names:
        return None
    proxy = _environment_proxy(_getenv_any(environ, *names[scheme]))
    if proxy is not None and scheme == "http" and environ.get("REQUEST_METHOD"):
        # In a CGI program a client sets HTTP_PROXY through its Proxy header ("httpoxy"); Go
        # refuses before NO_PROXY is even read.
        raise ProxyUrlError("it is not trusted in a CGI environment (REQUEST_METHOD is set)")
    if proxy is None or not _use_proxy(environ, ascii_host(host), str(port)):
        return None
    return proxy


def _use_proxy(environ: Mapping[str, str], host: str, port: str) -> bool:
    """httpproxy's `useProxy`: False for localhost, loopback and every NO_PROXY match."""
    if host == "localhost":
        return False
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return False
    host = host.strip().lower()
    exemptions = _exemptions(_getenv_any(environ, "NO_PROXY", "no_proxy"))
    return not any(rule.matches(host, port, ip) for rule in exemptions)

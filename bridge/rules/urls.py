"""URLs as rules compare them: every reading of a URL, and an allow or deny rule's URL against one."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

from bridge.record import Frozen
from bridge.rules.bounds import MAX_URL_CANDIDATES

# A URL is read two ways, as a browser or Node reads it (WHATWG, with `ada_url`: a backslash is a
# slash in http(s), tabs and newlines are dropped, `%61` in a host is `a`, `0x7f.1` is 127.0.0.1)
# and as Python's `urllib.parse` does. Each reading is normalized (scheme and host lowercased,
# the host's trailing dot, a default port and any userinfo dropped) to (scheme, host, port, path).
# A deny rule matches when any reading of any URL names its host or a subdomain of it, whatever the
# scheme or port, with its path prefix (compared percent-decoded and case-folded) — a rule on this
# machine (`localhost`, 127.0.0.1, `::1`) any spelling of it, `0.0.0.0` included; an allow rule
# only when the URL has exactly one reading and nothing odd (see `UrlView.doubt`).

UrlReading = tuple[str, str, str, str]  # scheme, host, port ("" when default), path
DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_URL_START = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}")
# a command word that names a host: `evil.example`, `evil.example/x`, `user@evil.example:dir`
_HOSTISH = re.compile(r"(?:[^@/:\s]+@)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\.?(?:[:/].*)?$")
_URL_END = re.compile(r"[\s'\"<>`|;&()]")  # where a URL in a shell command's text ends
_URL_ODD = re.compile(r"[\x00-\x20\x7f\\]")
_ENCODED_SEP = re.compile(r"%(?:2f|5c|2e)", re.IGNORECASE)
_WHITESPACE_TABS = str.maketrans("", "", "\t\n\r")


class UrlView(Frozen):
    """One URL value of a request: its `readings` (empty when nothing in it reads as a URL with a
    host), and `doubt`, why an allow rule cannot vouch for it (None when its one reading is
    plain)."""

    __slots__ = _fields = ("text", "readings", "doubt")

    def __init__(self, text: str, readings: frozenset[UrlReading], doubt: str | None) -> None:
        self.text = text
        self.readings = readings
        self.doubt = doubt


def _normal_host(host: str) -> str:
    host = host.lower().strip("[]").rstrip(".")
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    if ":" in host:  # an IPv6 address, one spelling of it: `::ffff:7f00:1` is 127.0.0.1
        import ipaddress

        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            return host
        return str(address.ipv4_mapped or address.compressed)
    return host


def _loopback(host: str) -> bool:
    """A host that is this machine: `localhost` (and its subdomains), 127.0.0.0/8, `::1`, and the
    unspecified address (`0.0.0.0`, `::`), which a client's connect reaches this machine at."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    if not (host[:1].isdigit() or ":" in host):
        return False
    import ipaddress

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _whatwg_reading(text: str) -> tuple[UrlReading, bool] | None:
    """The WHATWG reading of `text` and whether it has userinfo; None when it is no URL with a
    host."""
    from ada_url import parse_url  # ~10 ms to import: only when a URL is read

    try:
        url = parse_url(text, ("username", "password", "protocol", "port", "hostname", "pathname"))
    except ValueError:
        return None
    scheme = str(url["protocol"]).rstrip(":").lower()
    host = _normal_host(str(url["hostname"]))
    if not host:
        return None
    port = str(url["port"])
    if DEFAULT_PORTS.get(scheme) == port:
        port = ""
    return (scheme, host, port, str(url["pathname"]) or "/"), bool(
        url["username"] or url["password"]
    )


def _python_reading(text: str) -> tuple[UrlReading, bool] | None:
    """What `urllib.parse.urlsplit` makes of `text` (normalized the same way), and whether it has
    userinfo."""
    try:
        parts = urlsplit(text.strip())
        host = _normal_host(parts.hostname or "")
        port = str(parts.port) if parts.port is not None else ""
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not host:
        return None
    if DEFAULT_PORTS.get(scheme) == port:
        port = ""
    path = posixpath.normpath("/" + parts.path.lstrip("/")) if parts.path else "/"
    if parts.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return (scheme, host, port, path.replace("//", "/")), "@" in parts.netloc


def read_url(text: str, *, scheme_optional: bool = False) -> UrlView:
    """Every way `text` may be read as a URL: as a whole, with tabs and newlines dropped, each
    whitespace-separated piece, and from every `scheme://` in it (a second URL inside, say in a
    query). With `scheme_optional` (the value of a URL field) `host/path` and `//host/path` are
    read as https too, as a fetch tool would."""
    candidates = [text, text.translate(_WHITESPACE_TABS), *text.split()]
    stripped = candidates[1]
    candidates.extend(text[m.start() :] for m in _URL_START.finditer(text))
    candidates.extend(stripped[m.start() :] for m in _URL_START.finditer(stripped))
    if scheme_optional:
        for piece in text.split():
            if piece.startswith(("//", "\\\\")):
                candidates.append("https:" + piece)
            elif not _URL_START.match(piece):
                candidates.append("https://" + piece)
    readings: set[UrlReading] = set()
    whatwg: set[UrlReading] = set()
    python: set[UrlReading] = set()
    userinfo = False
    for candidate in dict.fromkeys(c.strip() for c in candidates[:MAX_URL_CANDIDATES] if c.strip()):
        for reader, into in ((_whatwg_reading, whatwg), (_python_reading, python)):
            got = reader(candidate)
            if got is not None:
                into.add(got[0])
                userinfo = userinfo or got[1]
    readings = whatwg | python
    doubt: str | None = None
    if not readings:
        doubt = "not a URL with a host"
    elif not _URL_START.match(text):
        doubt = "not an absolute URL (scheme://host/…)"
    elif _URL_ODD.search(text):
        doubt = "whitespace, a control character or a backslash in the URL"
    elif len(_URL_START.findall(text)) > 1:
        doubt = "a second URL inside the URL"
    elif userinfo:
        doubt = "a user name or password in the URL"
    elif len(readings) > 1 or whatwg != python:
        doubt = "browsers and Python read the URL differently"
    elif _ENCODED_SEP.search(next(iter(readings))[3]):
        doubt = "an encoded `/`, `\\` or `.` in the URL's path"
    return UrlView(text, frozenset(readings), doubt)


def split_url(url: str) -> tuple[str, str, str] | None:
    """(scheme, host[:port], normalized path) of a plain URL — None for what is not a URL with a
    host, or one browsers and Python read differently."""
    view = read_url(url.strip())
    if view.doubt is not None and view.doubt != "a user name or password in the URL":
        return None
    scheme, host, port, path = next(iter(view.readings))
    return scheme, f"{host}:{port}" if port else host, path


def _host_glob(host: str) -> tuple[str, bool]:
    """A rule's host and whether it stands for its subdomains too (`*.example.com`)."""
    if host.startswith("*."):
        return host[2:], True
    return host, False


def url_allows(rule: UrlReading, view: UrlView) -> bool:
    """An allow rule's URL against one URL of a request: the URL's one plain reading has the rule's
    scheme, host (a `*.` host: any subdomain), port and path prefix."""
    if view.doubt is not None or len(view.readings) != 1:
        return False
    scheme, host, port, path = next(iter(view.readings))
    r_scheme, r_host, r_port, r_path = rule
    base, subdomains = _host_glob(r_host)
    if scheme != r_scheme or port != r_port:
        return False
    if not (host == r_host or (subdomains and host.endswith("." + base))):
        return False
    return _path_under(path, r_path)


def url_denies(rule: UrlReading, view: UrlView) -> bool:
    """A deny (or ask) rule's URL against one URL of a request: any reading names the rule's host
    or a subdomain of it — whatever the scheme and port — with a path under the rule's (compared
    percent-decoded and case-folded as well)."""
    base = _host_glob(rule[1])[0]
    here = _loopback(base)  # a rule on this machine names it however it is spelled
    for _scheme, host, _port, path in view.readings:
        if host != base and not host.endswith("." + base) and not (here and _loopback(host)):
            continue
        if _path_under(path, rule[3]) or _path_under(_fold_path(path), _fold_path(rule[3])):
            return True
    return False


def _fold_path(path: str) -> str:
    return posixpath.normpath("/" + unquote(path).replace("\\", "/").lower()) + (
        "/" if path.endswith("/") else ""
    )


def _path_under(path: str, prefix: str) -> bool:
    if prefix in ("", "/"):
        return True
    if prefix.endswith("/"):
        return path.startswith(prefix) or path == prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def url_prefix_matches(rule: tuple[str, str, str], url: tuple[str, str, str]) -> bool:
    """An allow rule's (scheme, host[:port], path) against a URL's (for proposals and tests)."""
    r_host, _, r_port = rule[1].partition(":")
    host, _, port = url[1].partition(":")
    return url_allows(
        (rule[0], r_host, r_port, rule[2]),
        UrlView("", frozenset({(url[0], host, port, url[2])}), None),
    )


# --- how programs that fetch spell a URL in a command -----------------------------------------------

# `http:/host/x`, `https:host`: curl (and others) read these as `http://host/x`
_LOOSE_SCHEME = re.compile(r"(?i)((?:https?|ftps?|wss?|gopher|dict|telnet|tftp|scp|sftp):)/?(?!/)")
# Options naming a host the program connects to instead of (or through) the URL's own
_HOST_OPTIONS = frozenset(
    {"--connect-to", "-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5",
     "--socks5-hostname", "--doh-url"}
)  # fmt: skip
_DEV_NET = re.compile(r"/dev/(?:tcp|udp)/([^/]+)/")
_WORD_PIECES = re.compile(r"[\s\"'=<>,;()]+")
_HOST_PIECE = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\.?(?::\d+)?(?:/\S*)?$")
_GLOB_SETS = re.compile(r"\{([^{}]*)\}|\[([^\[\]]*)\]")
_MAX_GLOB = 64  # URLs a globbed word stands for, at most, that are read


def command_url_spellings(words: list[str]) -> list[str]:
    """More readings of a command's words as URLs, the way programs that fetch read them: a
    scheme with one slash or none (`http:/evil.example/`), curl's `{a,b}` and `[a-z]` globs
    expanded (`http://ev[i-i]l.example/`: at most `_MAX_GLOB` each), and the hosts options
    connect to (`--connect-to ::evil.example:`, `-x proxy.example`)."""
    out: list[str] = []
    for k, word in enumerate(words):
        net = _DEV_NET.match(word)  # bash's `< /dev/tcp/HOST/PORT`
        if net is not None:
            out.append(f"https://{net.group(1)}/")
        if "://" in word:  # a URL that is a word (decoded: `$'https://evil\x2eexample/'`)
            out.append(word)
        if "%" in word:  # `curl evil%2eexample`: curl decodes a host
            decoded = unquote(word)
            out.append(decoded if "://" in decoded else "https://" + decoded.lstrip("/"))
        # a host inside a word: `url = "evil.example"` (a curl config), `url=evil.example`
        out.extend(
            f"https://{token}/"
            for token in _WORD_PIECES.split(word)[1:]
            if _HOST_PIECE.match(token)
        )
        if (k and words[k - 1] in _HOST_OPTIONS) or word.startswith(("--connect-to=", "--proxy=")):
            value = word.partition("=")[2] if word.startswith("--") and "=" in word else word
            out.extend(f"https://{h}/" for h in re.split(r"[:,\s]+", value) if "." in h)
        loose = _LOOSE_SCHEME.match(word)
        if loose:
            out.append(loose.group(1) + "//" + word[loose.end() :].lstrip("/"))
        if "{" in word or "[" in word:
            out.extend(_expand_globs(word))
    return out


def _expand_globs(word: str) -> list[str]:
    """The words a curl URL glob stands for (`{a,b}`, `[a-z]`, `[1-3]`), the first `_MAX_GLOB`,
    group by group (a word of thousands of groups costs as many steps, no deeper)."""
    outs = [""]
    at = 0
    for found in _GLOB_SETS.finditer(word):
        literal = word[at : found.start()]
        outs = [out + literal + choice for out in outs for choice in _glob_choices(found)]
        del outs[_MAX_GLOB:]
        at = found.end()
    return [out + word[at:] for out in outs]


def _glob_choices(found: re.Match[str]) -> list[str]:
    """What one glob group stands for: `{a,b}`'s words, `[a-z]`'s or `[1-3]`'s range (its first
    `_MAX_GLOB`); a group that is not one of those stands for itself."""
    if found.group(1) is not None:
        return found.group(1).split(",")
    span = found.group(2).partition(":")[0]  # `[1-9:2]`: a step
    lo, dash, hi = span.partition("-")
    if not dash or len(lo) != len(hi) or not lo:
        return [found.group(0)]
    if lo.isdigit() and hi.isdigit():
        return [str(n).zfill(len(lo)) for n in range(int(lo), int(hi) + 1)][:_MAX_GLOB]
    if len(lo) == 1 and lo.isalpha():
        return [chr(c) for c in range(ord(lo), ord(hi) + 1)][:_MAX_GLOB]
    return [found.group(0)]

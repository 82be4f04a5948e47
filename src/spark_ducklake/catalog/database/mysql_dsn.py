"""MySQL catalog strings as DuckDB's `mysql` extension reads them, turned into PyMySQL connection arguments.

`ducklake:mysql:db=lake host=127.0.0.1 user=root port=3306` holds space-separated `key=value` pairs; a value may
be double-quoted, with `\\"` and `\\\\` escapes inside. Keys (case-insensitive, each at most once): host, user,
passwd/password, db/database, port, socket/unix_socket, compress/compression, ssl_mode, ssl_ca, ssl_capath,
ssl_cert, ssl_cipher, ssl_crl, ssl_crlpath, ssl_key. Unset ones come from the same environment variables the
extension reads (MYSQL_HOST, MYSQL_PWD, MYSQL_USER, MYSQL_DATABASE, MYSQL_UNIX_PORT, MYSQL_TCP_PORT).
"""

from __future__ import annotations

import os
import re
import ssl
from typing import Any

from ...errors import CatalogError

_ALIASES = {"passwd": "password", "db": "database", "unix_socket": "socket", "compression": "compress"}
_KEYS = {"host", "user", "password", "database", "port", "socket", "compress", "ssl_mode", "ssl_ca", "ssl_capath",
         "ssl_cert", "ssl_cipher", "ssl_crl", "ssl_crlpath", "ssl_key"}
_ENV = {"host": "MYSQL_HOST", "password": "MYSQL_PWD", "user": "MYSQL_USER", "database": "MYSQL_DATABASE",
        "socket": "MYSQL_UNIX_PORT", "port": "MYSQL_TCP_PORT"}
_SSL_MODES = {"disabled", "preferred", "required", "verify_ca", "verify_identity"}


def _value(text: str, pos: int) -> tuple[str, int]:
    """One key or value from `pos` on (spaces skipped): quoted with backslash escapes, or up to a space or '='."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        return "", pos
    if text[pos] != '"':
        match = re.compile(r"[^\s=]*").match(text, pos)
        return match.group(), match.end()  # type: ignore[union-attr]  # [^\s=]* matches, if only ""
    out: list[str]
    out, pos = [], pos + 1
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\\":
            if pos + 1 >= len(text) or text[pos + 1] not in '\\"':
                raise CatalogError('in a MySQL catalog string a backslash can only escape \\ or "')
            char, pos = text[pos + 1], pos + 1
        out.append(char)
        pos += 1
    raise CatalogError("unterminated quote in the MySQL catalog string")


def parse_dsn(dsn: str) -> dict[str, str]:
    """The `key=value` pairs of a MySQL catalog string (aliases resolved), without environment defaults."""
    settings: dict[str, str] = {}
    pos = 0
    while True:
        key, pos = _value(dsn, pos)
        if not key:
            if dsn[pos:].strip():  # the text is not echoed: it may be part of a password
                raise CatalogError(f"MySQL catalog string: expected key=value pairs separated by spaces, after "
                                   f"{len(settings)} pair(s)")
            return settings
        if pos >= len(dsn) or dsn[pos] != "=":
            raise CatalogError("MySQL catalog string: expected key=value pairs separated by spaces")
        value, pos = _value(dsn, pos + 1)
        name = _ALIASES.get(key.lower(), key.lower())
        if name not in _KEYS:  # not named: after an unquoted space in a password, the "key" is password text
            raise CatalogError(f"unknown MySQL connection parameter (pair {len(settings) + 1}); known: host, user, "
                               "passwd, db, port, socket, compress, ssl_mode, ssl_ca, ssl_capath, ssl_cert, "
                               "ssl_cipher, ssl_crl, ssl_crlpath, ssl_key")
        if name in settings:
            raise CatalogError(f"duplicate {key!r} parameter in the MySQL catalog string")
        settings[name] = value


def printable(settings: dict[str, str]) -> str:
    """Parsed `key=value` pairs as a catalog string with any password masked."""
    def quoted(value: str) -> str:
        if value and not any(c.isspace() or c in '"\\=' for c in value):
            return value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    return " ".join(f"{k}={'***' if k == 'password' else quoted(v)}" for k, v in settings.items())


def connect_args(dsn: str) -> dict[Any, Any]:
    """PyMySQL `connect()` keyword arguments for the catalog string, environment variables filling gaps."""
    settings = parse_dsn(dsn)
    for name, env in _ENV.items():
        if name not in settings and os.environ.get(env):
            settings[name] = os.environ[env]
    args: dict[Any, Any] = {"host": settings.get("host") or "localhost", "charset": "utf8mb4"}
    if settings.get("user"):
        args["user"] = settings["user"]
    args["password"] = settings.get("password", "")
    if not settings.get("database"):
        raise CatalogError("a MySQL catalog string needs the database: mysql:db=<name> host=...")
    args["database"] = settings["database"]
    if settings.get("port"):
        try:
            port = int(settings["port"])
        except ValueError:
            raise CatalogError(f"MySQL port must be a number, got {settings['port']!r}") from None
        if port:  # 0 means the default, as in libmysqlclient
            args["port"] = port
    if settings.get("socket"):
        args["unix_socket"] = settings["socket"]
    if settings.get("compress", "").lower() in ("1", "true", "required"):
        raise CatalogError("compressed MySQL connections are not supported by the PyMySQL driver")
    args.update(_ssl_args(settings))
    return args


def _ssl_args(settings: dict[str, str]) -> dict[Any, Any]:
    mode = settings.get("ssl_mode", "preferred").lower()
    if mode not in _SSL_MODES:
        raise CatalogError(f"ssl_mode must be one of {', '.join(sorted(_SSL_MODES))}, got {mode!r}")
    if mode == "disabled":
        return {"ssl_disabled": True}
    files = {k: settings[k] for k in ("ssl_ca", "ssl_capath", "ssl_cert", "ssl_key", "ssl_crl", "ssl_crlpath",
                                      "ssl_cipher") if settings.get(k)}
    if mode == "preferred" and not files:
        return {}  # PyMySQL's default: TLS when the server offers it
    verify = mode in ("verify_ca", "verify_identity")
    context = ssl.create_default_context(cafile=files.get("ssl_ca"), capath=files.get("ssl_capath"))
    context.check_hostname = mode == "verify_identity"
    if not verify:  # REQUIRED (and PREFERRED with files) encrypts without checking the server, like libmysqlclient
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if "ssl_cert" in files:
        context.load_cert_chain(files["ssl_cert"], files.get("ssl_key"))
    for crl in (files.get("ssl_crl"), files.get("ssl_crlpath")):
        if crl:
            context.load_verify_locations(cafile=crl if os.path.isfile(crl) else None,
                                          capath=crl if os.path.isdir(crl) else None)
            context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if "ssl_cipher" in files:
        context.set_ciphers(files["ssl_cipher"])
    return {"ssl": context}

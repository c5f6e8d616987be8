"""Operator settings: defaults, then a TOML file, then `PBEM_*` environment variables, then command-line flags.

Everything has a default that works on one machine with no mail server: a
SQLite file and a local Maildir in the working directory. The file
(`pbem.toml`, found by `--config` or `PBEM_CONFIG`) is for a real
installation; an environment variable overrides the file, so a systemd unit
or a container can change one setting without editing it. Every setting is
described once, in `SETTINGS`, from which `pbem config check` and
`pbem config example` print what is in force and a documented file. A value
of the wrong kind is one clear `SettingsError`, never a traceback.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: The environment variable naming the configuration file.
CONFIG_ENV = "PBEM_CONFIG"


class SettingsError(ValueError):
    """A setting the server cannot use, said in one line (where it came from, what is wrong, what would do)."""


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///pbem.sqlite"
    domain: str = "pbem.localhost"
    local_part: str = "pbem"
    relay_url: str | None = None
    maildir: Path = Path("mail")
    listen_host: str = "127.0.0.1"
    listen_port: int = 8025
    protocol: str = "smtp"
    deadline_hours: int = 48
    #: Hours before a deadline when each player still asked gets one reminder (0: none).
    reminder_hours: int = 12
    #: Deadlines a player may miss before the moderator is asked to replace him (0: never asked).
    missed_limit: int = 2
    max_message_bytes: int = 1_000_000
    #: Seconds reading one message may take before it is answered as unreadable (and kept).
    reading_limit: int = 5
    #: Bounces of letters to one player before the moderator is told (each is recorded from the first).
    bounce_limit: int = 3
    #: Whether reports carry the board as a picture (bot games and benchmarks turn it off to save the time).
    board_pictures: bool = True
    #: Seconds a sender's hold on the letter it delivers lasts unless renewed (the outbox lease): a live sender
    #: renews it every third of it; a dead sender's letter goes to another sender this long after the death.
    outbox_lease: int = 15
    #: Messages from one sender within ``flood_window`` seconds past which its mail is set aside (0: never).
    flood_limit: int = 100
    flood_window: int = 600
    #: Minutes a letter that asks nothing (a report to a player asked nothing now, a trade prompt brought up to
    #: date by an offer) waits for what follows it to the same reader (0: every letter at once; pbem/service/waiting.py).
    gather_minutes: int = 15
    #: Seconds a bot's seat waits, once the game stood still, before the server answers for it (0: at once).
    bot_delay: int = 60
    #: HOST:PORT where `pbem serve` answers HTTP for the games' pages (None: no web; pbem/web).
    http_listen: str | None = None
    #: The public address of those pages as players reach them (behind a proxy); None: http://HOST:PORT.
    web_url: str | None = None

    @property
    def sender(self) -> str:
        return f"{self.local_part}@{self.domain}"

    @property
    def web_base(self) -> str | None:
        """Where letters' links point (no trailing slash): ``web_url``, else the address `--http` listens on,
        else None (no link in letters)."""
        if self.web_url:
            return self.web_url.rstrip("/")
        if self.http_listen:
            host, _, port = self.http_listen.rpartition(":")
            return f"http://{host or '127.0.0.1'}:{port}"
        return None

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, the file named by ``PBEM_CONFIG`` (if any), the environment, then ``overrides``."""
        return load_settings(None, os.environ, overrides)[0]


@dataclass(frozen=True)
class Setting:
    """One setting: its field, where it sits in the file, its variable, what it means."""

    field: str
    section: str
    key: str
    env: str
    kind: str  # "text", "int", "path", "url"
    doc: str
    secret: bool = False
    low: int = 0
    high: int = 10**9


SETTINGS: tuple[Setting, ...] = (
    Setting("db_url", "database", "url", "PBEM_DATABASE_URL", "url",
            "The database: sqlite:///path/pbem.sqlite (three slashes: relative; four: absolute) or "
            "postgresql://user:password@host/dbname. Created or upgraded on first use.", secret=True),
    Setting("domain", "mail", "domain", "PBEM_DOMAIN", "text",
            "The mail domain the server answers for: players write to pbem+GAME@<domain>."),
    Setting("local_part", "mail", "local_part", "PBEM_LOCAL_PART", "text",
            "The local part of the server's address (pbem@<domain>); reply addresses are <local_part>+..."),
    Setting("relay_url", "mail", "relay", "PBEM_SMTP_RELAY", "url",
            "Outgoing mail: smtp://host:25, smtp+starttls://user:password@host:587, smtps://user:password@host:465. "
            "Empty: letters go into the Maildir below.", secret=True),
    Setting("maildir", "mail", "maildir", "PBEM_MAILDIR", "path",
            "Without a relay, one Maildir per recipient is kept under this folder."),
    Setting("max_message_bytes", "mail", "max_message_bytes", "PBEM_MAX_MESSAGE_BYTES", "int",
            "The largest message taken (larger ones are refused at SMTP time and by `pbem ingest` and `pbem submit`).",
            low=1_000, high=100_000_000),
    Setting("reading_limit", "mail", "reading_limit", "PBEM_READING_LIMIT", "int",
            "Seconds reading one message may take (its text, quotes and order lines, before any lock is taken); "
            "past it the message is answered as unreadable and kept. A megabyte reads in well under a second.",
            low=1, high=600),
    Setting("board_pictures", "mail", "board_pictures", "PBEM_BOARD_PICTURES", "bool",
            "Whether each report (and the answer to MAP) carries the board as a picture: true or false."),
    Setting("outbox_lease", "mail", "outbox_lease", "PBEM_OUTBOX_LEASE", "int",
            "Seconds a sender's hold on the letter it is delivering lasts unless renewed. A live sender renews it "
            "every third of it for as long as the delivery takes; a sender killed mid-delivery leaves that one "
            "letter to the others (or to itself, started again) this long after. Shorter: a quicker recovery, "
            "one more small transaction every third of it while a delivery lasts.", low=1, high=86_400),
    Setting("flood_limit", "mail", "flood_limit", "PBEM_FLOOD_LIMIT", "int",
            "Messages from one sender within flood_window seconds past which `pbem serve` sets its mail aside: "
            "kept, not acted on, the sender told once (docs/mail.md, Floods). 0: never.", high=1_000_000),
    Setting("flood_window", "mail", "flood_window", "PBEM_FLOOD_WINDOW", "int",
            "The seconds over which flood_limit counts a sender's messages.", low=1, high=7 * 86_400),
    Setting("gather_minutes", "mail", "gather_minutes", "PBEM_GATHER_MINUTES", "int",
            "Minutes a letter that asks nothing waits in the outbox for what follows it to the same player: a "
            "report to a player asked nothing now (the next prompt or answer takes it along), and a trade "
            "prompt brought up to date by an offer (the offers of one round of trading arrive in one letter). "
            "0: every letter at once.", high=24 * 60),
    Setting("http_listen", "web", "listen", "PBEM_HTTP_LISTEN", "text",
            "HOST:PORT where `pbem serve` also serves each game's page to its readers (`pbem serve --http` says "
            "the same). Empty: no web pages, and letters carry no link (docs/web.md)."),
    Setting("web_url", "web", "url", "PBEM_WEB_URL", "url",
            "The pages' public address, as players reach them through the reverse proxy that holds TLS "
            "(https://civ.example.org). Empty: http://HOST:PORT of web.listen. Each letter links its reader there."),
    Setting("listen_host", "listen", "host", "PBEM_LISTEN_HOST", "text",
            "Where `pbem serve` listens for mail (127.0.0.1 behind a local Postfix)."),
    Setting("listen_port", "listen", "port", "PBEM_LISTEN_PORT", "int",
            "Its port (0: any free port).", low=0, high=65535),
    Setting("protocol", "listen", "protocol", "PBEM_PROTOCOL", "text",
            "smtp, or lmtp behind Postfix (`pbem serve --lmtp` says the same)."),
    Setting("deadline_hours", "games", "deadline_hours", "PBEM_DEADLINE_HOURS", "int",
            "Hours for a step's orders, for games that do not set deadline-hours.", low=1, high=24 * 62),
    Setting("reminder_hours", "games", "reminder_hours", "PBEM_REMINDER_HOURS", "int",
            "Hours before a deadline that a player still asked is reminded (0: never), for games that do not set "
            "reminder-hours.", high=24 * 62),
    Setting("missed_limit", "games", "missed_limit", "PBEM_MISSED_LIMIT", "int",
            "Missed deadlines after which the moderator is asked to replace a player (0: never).", high=1000),
    Setting("bot_delay", "games", "bot_delay", "PBEM_BOT_DELAY", "int",
            "Seconds the game must stand still before the server answers for a seat a bot plays (REPLACE ... WITH "
            "BOT), so people are not rushed by answers in the same second. 0: at once.", high=7 * 86_400),
    Setting("bounce_limit", "games", "bounce_limit", "PBEM_BOUNCE_LIMIT", "int",
            "Bounced letters to one player after which the moderator is told.", low=1, high=1000),
)
_BY_FIELD = {s.field: s for s in SETTINGS}
PROTOCOLS = ("smtp", "lmtp")
DB_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg", "postgres")
RELAY_SCHEMES = ("smtp", "smtp+starttls", "smtps", "maildir")


def _convert(setting: Setting, raw: Any, where: str) -> Any:
    """``raw`` as the setting's kind, or a SettingsError naming ``where`` it came from."""
    if setting.kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{where} must be true or false, not {raw!r}")
    if setting.kind == "int":
        if isinstance(raw, bool) or not (isinstance(raw, int) or (isinstance(raw, str) and raw.strip().lstrip("-").isdigit())):
            raise SettingsError(f"{where} must be a whole number, not {raw!r}")
        value = int(raw)
        if not setting.low <= value <= setting.high:
            raise SettingsError(f"{where} must be between {setting.low} and {setting.high}, not {value}")
        return value
    if not isinstance(raw, str):
        raise SettingsError(f"{where} must be text, not {raw!r}")
    text = raw.strip()
    if setting.kind == "path":
        if not text:
            raise SettingsError(f"{where} must name a folder")
        return Path(text).expanduser()
    if setting.field == "relay_url":
        if not text:
            return None
        scheme = urlsplit(text).scheme.lower()
        if scheme not in RELAY_SCHEMES:
            raise SettingsError(f"{where}: unsupported relay scheme {scheme or text!r}; use " + ", ".join(f"{s}://" for s in RELAY_SCHEMES))
        return text
    if setting.field in ("http_listen", "web_url") and not text:
        return None
    if setting.field == "http_listen":
        host, sep, port = text.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise SettingsError(f"{where} must be HOST:PORT with a port from 0 to 65535, not {text!r}")
        return f"{host.strip('[]') or '127.0.0.1'}:{int(port)}"
    if setting.field == "web_url":
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise SettingsError(f"{where} must be an http:// or https:// address without ?query or #fragment, "
                                f"not {text!r}")
        return text.rstrip("/")
    if setting.field == "db_url":
        scheme = urlsplit(text).scheme.lower()
        if scheme not in DB_SCHEMES:
            raise SettingsError(f"{where}: unsupported database URL {mask(text)!r}; use sqlite:///FILE or postgresql://USER@HOST/DB")
        return text
    if setting.field == "protocol" and text.lower() not in PROTOCOLS:
        raise SettingsError(f"{where} must be smtp or lmtp, not {text!r}")
    if not text:
        raise SettingsError(f"{where} must not be empty")
    return text.lower() if setting.field in ("protocol", "domain", "local_part") else text


def read_config(path: Path) -> dict[str, Any]:
    """The settings a TOML file gives, by field; unknown sections or keys are refused (a typo would be silent)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"configuration file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"configuration file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"configuration file {path} is not valid TOML: {exc}") from None
    known = {(s.section, s.key): s for s in SETTINGS}
    out: dict[str, Any] = {}
    for section, table in data.items():
        if not isinstance(table, dict) or not any(s == section for s, _ in known):
            sections = sorted({s for s, _ in known})
            raise SettingsError(f"{path}: unknown section [{section}]; the sections are " + ", ".join(f"[{s}]" for s in sections))
        for key, raw in table.items():
            setting = known.get((section, key))
            if setting is None:
                keys = sorted(k for s, k in known if s == section)
                raise SettingsError(f"{path}: unknown setting {section}.{key}; [{section}] holds " + ", ".join(keys))
            out[setting.field] = _convert(setting, raw, f"{path}: {section}.{key}")
    return out


def load_settings(
    config: str | Path | None, env: Mapping[str, str], overrides: Mapping[str, object] | None = None
) -> tuple[Settings, dict[str, str]]:
    """The settings in force and where each came from (default, the file, an environment variable, a flag)."""
    values: dict[str, Any] = {}
    sources = {f.name: "default" for f in fields(Settings)}
    path = config or env.get(CONFIG_ENV) or None
    if path:
        for name, value in read_config(Path(path)).items():
            values[name], sources[name] = value, str(path)
    for setting in SETTINGS:
        if setting.env in env and (env[setting.env] != "" or setting.field == "relay_url"):
            values[setting.field] = _convert(setting, env[setting.env], setting.env)
            sources[setting.field] = setting.env
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        setting = _BY_FIELD.get(name)
        if setting is not None and isinstance(value, str):
            value = _convert(setting, value, f"--{setting.key.replace('_', '-')}" if name != "db_url" else "--db")
        values[name], sources[name] = value, "command line"
    return replace(Settings(), **values), sources


def mask(value: object) -> str:
    """A URL with its password replaced by ***, for printing."""
    text = "" if value is None else str(value)
    parts = urlsplit(text)
    if parts.password:
        host = parts.hostname or ""
        netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    return text


def describe(settings: Settings, sources: Mapping[str, str]) -> list[str]:
    """`pbem config check`: each setting, its value (secrets masked) and where it came from."""
    lines = []
    for setting in SETTINGS:
        value = getattr(settings, setting.field)
        shown = mask(value) if setting.secret else ("" if value is None else str(value))
        lines.append(f"{setting.section}.{setting.key} = {shown or '(none)'}    [{sources.get(setting.field, 'default')}]")
    return lines


def example() -> str:
    """A pbem.toml with every setting, its default and what it means."""
    out = ["# pbem.toml: every setting with its default. Each may also be set by the", "# environment variable named beside it, which wins over this file.", ""]
    section = None
    for setting in SETTINGS:
        if setting.section != section:
            section = setting.section
            out += ["", f"[{section}]"] if len(out) > 3 else [f"[{section}]"]
        default = getattr(Settings(), setting.field)
        value = str(default).lower() if setting.kind == "bool" else default if setting.kind == "int" else f'"{"" if default is None else default}"'
        out.append(f"# {setting.doc} ({setting.env})")
        out.append(f"{setting.key} = {value}")
    return "\n".join(out) + "\n"

"""Decoding the bytes of mail text by the charset it declares, never failing.

Mail declares charsets loosely: ISO-8859-1 for what is Windows-1252, codec
names that are no charset of text at all, none when the text is UTF-8. Each
declaration is read as the text was most likely written; what could not be
decoded is replaced and said, for the acknowledgement.
"""

from __future__ import annotations

import codecs

__all__ = ["decode_bytes"]

# Declared charsets that are in practice written as their Windows supersets.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "iso-8859-9": "cp1254",
    "ks_c_5601-1987": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-unknown": "utf-8",
    "unknown-8bit": "utf-8",
}


# Codecs Python knows that are no character set of mail text: they fail on
# ordinary bytes or refuse errors="replace" (a message declaring one crashed
# the parser). Such a declaration is treated as unknown.
_NOT_MAIL_CHARSETS = frozenset({"punycode", "idna", "raw_unicode_escape", "unicode_escape", "undefined"})


def decode_bytes(data: bytes, charset: str | None) -> tuple[str, str | None]:
    """Decode, never failing.  Returns (text, problem or None)."""
    name = (charset or "").strip().strip('"').lower()
    name = _CHARSET_ALIASES.get(name, name)
    if name.replace("-", "_") in _NOT_MAIL_CHARSETS:
        name = "x-not-a-charset"
    if name in ("", "us-ascii", "ascii", "utf-8", "utf8"):
        # Undeclared or claimed ASCII: UTF-8 if it is valid, else Windows-1252.
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError:
            if name in ("utf-8", "utf8"):
                return (data.decode("utf-8", errors="replace"),
                        "Some characters could not be decoded and were replaced by \ufffd.")
            return data.decode("cp1252", errors="replace"), None
    try:
        if not codecs.lookup(name)._is_text_encoding:  # base64_codec, rot13 and the like
            raise LookupError(name)
    except LookupError:
        return (data.decode("utf-8", errors="replace"),
                f"The message declared an unknown character set ({charset}); it was read as UTF-8.")
    try:
        return data.decode(name), None
    except Exception:
        try:
            return (data.decode(name, errors="replace"),
                    "Some characters could not be decoded and were replaced by \ufffd.")
        except Exception:  # a codec that cannot replace: read as UTF-8
            return (data.decode("utf-8", errors="replace"),
                    "Some characters could not be decoded and were replaced by \ufffd.")

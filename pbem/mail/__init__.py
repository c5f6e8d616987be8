"""The mail layer: MIME in (parse, strip, authenticate by reply token) and MIME
out (render with jinja2, build, deliver), plus the inbound SMTP/LMTP server."""

from pbem.mail.inbound import InboundMail, MailRejected, parse_message
from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END
from pbem.mail.outbound import (
    DeliveryError,
    MaildirDelivery,
    MemoryTransport,
    SmtpRelay,
    Transport,
    transport_from_config,
)
from pbem.mail.render import RenderedMail, Renderer, build_message, make_message_id
from pbem.mail.server import InboundServer
from pbem.mail.tokens import (
    game_address,
    parse_game_address,
    parse_reply_address,
    reply_address,
)

__all__ = [
    "DeliveryError",
    "InboundMail",
    "InboundServer",
    "MailRejected",
    "MaildirDelivery",
    "MemoryTransport",
    "ORDERS_BEGIN",
    "ORDERS_END",
    "RenderedMail",
    "Renderer",
    "SmtpRelay",
    "Transport",
    "build_message",
    "game_address",
    "make_message_id",
    "parse_game_address",
    "parse_message",
    "parse_reply_address",
    "reply_address",
    "transport_from_config",
]

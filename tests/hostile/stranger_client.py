"""A stranger's messages, one after another over one SMTP connection (test_stranger.py).

Run as its own process, so that its work (a megabyte handed to the socket at
a time) does not share an interpreter lock with the clients whose times are
measured:

    python stranger_client.py PORT SENDER FOLDER

Sends every ``*.eml`` file of FOLDER in name order, each to the recipient
named by its first line (``X-To: <address>``, left out of what is sent), the
next once the previous is answered 250; a connection the server closes is
opened again. Prints one JSON line: for each message its file name, its
recipient, when its session began and when its 250 came (wall clock) and how long its transaction took;
and any failures.
"""

from __future__ import annotations

import json
import smtplib
import sys
import time
from pathlib import Path


def main(port: int, sender: str, folder: Path) -> None:
    sent: list[dict] = []
    failures: list[str] = []
    smtp: smtplib.SMTP | None = None
    for path in sorted(folder.glob("*.eml")):
        first, raw = path.read_bytes().split(b"\r\n", 1)
        to = first.decode().removeprefix("X-To: ")
        for attempt in range(3):
            try:
                if smtp is None:
                    smtp = smtplib.SMTP("127.0.0.1", port, timeout=300)
                began, began_at = time.monotonic(), time.time()
                smtp.sendmail(sender, [to], raw)
                sent.append({"name": path.name, "to": to, "began": began_at, "taken": time.time(),
                             "seconds": time.monotonic() - began,
                             "bytes": len(raw)})
                break
            except (OSError, smtplib.SMTPException) as exc:
                failures.append(f"{path.name} (try {attempt + 1}): {type(exc).__name__}: {exc}")
                smtp = None
    if smtp is not None:
        smtp.quit()
    print(json.dumps({"sent": sent, "failures": failures}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))

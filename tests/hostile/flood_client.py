"""A flood of press orders from one address, over several SMTP connections at once, each reused (test_flood.py).

Run as its own process, so that its work does not share an interpreter lock
with the clients whose times are measured:

    python flood_client.py PORT SENDER TO COUNT CONNECTIONS

Every message is rendered before the first is sent. When all are answered
250 it prints one JSON line: how many were taken, and the wall-clock times
of the first and the last 250.
"""

from __future__ import annotations

import itertools
import json
import smtplib
import sys
import threading
import time


def message(i: int, sender: str, to: str) -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: flood\r\nMessage-ID: <flood-{i}@players.example>\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\nPRESS TO ALL: flood {i}\r\n").encode()


def main(port: int, sender: str, to: str, count: int, connections: int) -> None:
    messages = [message(i, sender, to) for i in range(count)]
    numbers = itertools.count()
    taken: list[float] = []
    failures: list[str] = []

    def send() -> None:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=300) as smtp:
                while (i := next(numbers)) < count:
                    smtp.sendmail(sender, [to], messages[i])
                    taken.append(time.time())
        except Exception as exc:  # noqa: BLE001 (reported, and the suite fails on the count)
            failures.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=send) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"taken": len(taken), "first": min(taken, default=0), "last": max(taken, default=0),
                      "failures": failures}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))

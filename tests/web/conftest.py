"""The web tests use the service tests' world: a fresh database on each backend, mail into a Maildir."""

from service.conftest import world  # noqa: F401 - a fixture, found by name

"""What a TLS connection needs: whom to trust, which name to check, which certificate to show."""

from msgspec import Struct


class ClientCertificate(Struct, frozen=True):
    """A client certificate and its private key, PEM-encoded. `repr` never shows the key."""

    cert_pem: bytes
    key_pem: bytes

    def __repr__(self) -> str:
        return "ClientCertificate(<hidden>)"


class TlsSettings(Struct, frozen=True):
    """How to verify the server and authenticate to it over TLS."""

    ca_pem: bytes | None = None
    """Certificate authorities to trust (PEM); None: the system's trust store."""
    verify: bool = True
    """False only for `insecure-skip-tls-verify`: any certificate is accepted."""
    server_name: str | None = None
    """`tls-server-name`: the name sent in SNI and checked in the certificate, when it is not
    the host of the URL."""
    client_certificate: ClientCertificate | None = None

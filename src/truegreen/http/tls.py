"""What a TLS connection needs: whom to trust, which name to check, which certificate to show."""

from msgspec import Struct

ENCRYPTED_KEY_REASON = "tls: failed to parse private key"
"""What kubectl says of a client key behind a passphrase (Go's crypto/tls `X509KeyPair`)."""


class ClientCertificate(Struct, frozen=True):
    """A client certificate and its private key, PEM-encoded. `repr` never shows the key."""

    cert_pem: bytes
    key_pem: bytes

    def __repr__(self) -> str:
        return "ClientCertificate(<hidden>)"

    @property
    def key_is_encrypted(self) -> bool:
        """Whether the key is protected by a passphrase: a PKCS #8 `ENCRYPTED PRIVATE KEY`, or
        a legacy OpenSSL key with a `Proc-Type: 4,ENCRYPTED` header. Go's crypto/tls
        (`X509KeyPair`) reads neither and never asks for a passphrase."""
        return (
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in self.key_pem
            or b"Proc-Type: 4,ENCRYPTED" in self.key_pem
        )


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

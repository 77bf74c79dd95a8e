"""What a TLS connection needs: whom to trust, which name to check, which certificate to show."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from msgspec import Struct

if TYPE_CHECKING:
    from truegreen.http.pem import PemBlock

KEY_NOT_PARSED = "tls: failed to parse private key"
"""What kubectl says of a client key it cannot parse (Go's crypto/tls `X509KeyPair`,
parsePrivateKey)."""
ENCRYPTED_KEY_REASON = KEY_NOT_PARSED
"""What kubectl says of a client key behind a passphrase: Go parses no encrypted key."""
KEY_MISMATCH = "tls: private key does not match public key"
"""What kubectl says of a client key that is not the client certificate's (`X509KeyPair`)."""
MALFORMED_CERTIFICATE = "x509: malformed certificate"
"""What kubectl says of a CERTIFICATE block that holds no certificate (x509.ParseCertificate)."""


def _is_private_key(kind: str) -> bool:
    """The block types Go's `X509KeyPair` takes as the key (tls.go)."""
    return kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY")


class PairProblem(Struct, frozen=True):
    """Why kubectl cannot use a client certificate and key: which of the two (or the pair: a key
    that is not the certificate's), and Go's crypto/tls words for it (`X509KeyPair`), which
    never quote what the files hold."""

    part: Literal["certificate", "key", "pair"]
    reason: str


class ClientCertificate(Struct, frozen=True):
    """A client certificate and its private key, PEM-encoded. `repr` never shows the key."""

    cert_pem: bytes
    key_pem: bytes

    def __repr__(self) -> str:
        return "ClientCertificate(<hidden>)"

    def pem_problem(self) -> PairProblem | None:
        """Why Go's crypto/tls `X509KeyPair` (tls.go) finds no certificate or no key among the
        PEM blocks, in its words; None when it finds both. Its order: the certificate input
        must hold a CERTIFICATE block, the key input a block whose type is PRIVATE KEY or ends
        in " PRIVATE KEY" (Go names the other types it skipped; these words do not)."""
        # Imported on use: only a kubeconfig with a client certificate reads PEM blocks (doctor's
        # start-up on a small namespace, bench/imports.py).
        from truegreen.http.pem import pem_blocks

        certificates = [block.kind for block in pem_blocks(self.cert_pem)]
        if "CERTIFICATE" not in certificates:
            if not certificates:
                reason = "tls: failed to find any PEM data in certificate input"
            elif len(certificates) == 1 and certificates[0].endswith("PRIVATE KEY"):
                reason = (
                    "tls: failed to find certificate PEM data in certificate input, but did "
                    "find a private key; PEM inputs may have been switched"
                )
            else:
                reason = 'tls: failed to find "CERTIFICATE" PEM block in certificate input'
            return PairProblem("certificate", reason)
        skipped: list[str] = []
        for block in pem_blocks(self.key_pem):
            if _is_private_key(block.kind):
                return None
            skipped.append(block.kind)
        if not skipped:
            reason = "tls: failed to find any PEM data in key input"
        elif skipped == ["CERTIFICATE"]:
            reason = "tls: found a certificate rather than a key in the PEM for the private key"
        else:
            reason = 'tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input'
        return PairProblem("key", reason)

    @property
    def chain(self) -> list[PemBlock]:
        """The CERTIFICATE blocks of the certificate input in order, nothing else it holds:
        what `X509KeyPair` keeps, the first the client's own (the one it parses and matches
        to the key), all of them sent in the handshake (handshake_client.go)."""
        from truegreen.http.pem import pem_blocks

        return [block for block in pem_blocks(self.cert_pem) if block.kind == "CERTIFICATE"]

    @property
    def key(self) -> PemBlock | None:
        """The block `X509KeyPair` takes as the key: the key input's first whose type is
        PRIVATE KEY or ends in " PRIVATE KEY"."""
        from truegreen.http.pem import pem_blocks

        return next((b for b in pem_blocks(self.key_pem) if _is_private_key(b.kind)), None)

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

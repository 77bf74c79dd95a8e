"""What a TLS connection needs: whom to trust, which name to check, which certificate to show."""

import re
from typing import Literal

from msgspec import Struct

KEY_NOT_PARSED = "tls: failed to parse private key"
"""What kubectl says of a client key it cannot parse (Go's crypto/tls `X509KeyPair`,
parsePrivateKey)."""
ENCRYPTED_KEY_REASON = KEY_NOT_PARSED
"""What kubectl says of a client key behind a passphrase: Go parses no encrypted key."""
KEY_MISMATCH = "tls: private key does not match public key"
"""What kubectl says of a client key that is not the client certificate's (`X509KeyPair`)."""
MALFORMED_CERTIFICATE = "x509: malformed certificate"
"""What kubectl says of a CERTIFICATE block that holds no certificate (x509.ParseCertificate)."""

_PEM_BLOCK = rb"^-----BEGIN ([^\r\n]*?)-----\r?$(.*?)^-----END \1-----"
"""A PEM block, its type and its body, as encoding/pem `Decode` finds one (compiled by `re`'s
cache on first use: most runs have no client certificate)."""


def pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """Each PEM block in `data`, in order: its type and the whole block."""
    return [
        (found.group(1).decode("ascii", "replace"), found.group(0))
        for found in re.finditer(_PEM_BLOCK, data, re.M | re.S)
    ]


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
        certificates = [kind for kind, _ in pem_blocks(self.cert_pem)]
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
        for kind, _ in pem_blocks(self.key_pem):
            if kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY"):
                return None
            skipped.append(kind)
        if not skipped:
            reason = "tls: failed to find any PEM data in key input"
        elif skipped == ["CERTIFICATE"]:
            reason = "tls: found a certificate rather than a key in the PEM for the private key"
        else:
            reason = 'tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input'
        return PairProblem("key", reason)

    @property
    def certificates(self) -> bytes:
        """The CERTIFICATE blocks of the certificate input, and nothing else it holds."""
        return b"".join(block for kind, block in pem_blocks(self.cert_pem) if kind == "CERTIFICATE")

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

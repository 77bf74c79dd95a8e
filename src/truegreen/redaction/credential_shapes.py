"""Credentials known by their form alone, wherever they stand in a string.

Part of redaction rule 6 (docs/snapshot.md; cluster/redact.py applies it): a JSON Web Token, a
GitHub or Hugging Face token, and the signature of a signed URL (an Azure SAS, an S3 or GCS
presigned URL). None needs a name beside it that says "secret", and none is mistaken for a
plain word: each is replaced by `<redacted>`, and what else a signed URL holds (its host, path,
permissions, expiry) stays readable.
"""

import re

from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED

# RFC 7519 §7.1 and RFC 7515 §7.1: a JWT in compact serialization is base64url parts joined by
# `.`, the first a JSON object, so its text starts `eyJ` (`{"`); a JWE (RFC 7516 §7.1) has five
# parts, an unsecured JWT an empty signature. Possessive: a long run without a `.` is read once.
_JWT = LazyPattern(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*+\.[A-Za-z0-9_-]++(?:\.[A-Za-z0-9_-]*+)++")
# Tokens whose prefix names them (gitleaks config/gitleaks.toml, the rules github-pat,
# github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat,
# huggingface-access-token, huggingface-organization-api-token): GitHub's `ghp_`, `gho_`,
# `ghu_`, `ghs_`, `ghr_` and 36 letters or digits (github.blog changelog 2021-03-31,
# "Authentication token format updates"), its fine-grained `github_pat_` (22, `_`, 59), Hugging
# Face's `hf_` and `api_org_` and 34. Longer runs too: GitHub says its tokens may grow.
_PREFIXED_TOKEN = LazyPattern(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9]{22,}+_[A-Za-z0-9]{59,}+"
    r"|hf_[A-Za-z0-9]{34,}+|api_org_[A-Za-z0-9]{34,}+)"
)
# The query parameter of a signed URL that grants access: Azure's SAS `sig` (Microsoft Learn,
# "Create a service SAS": the signature, an HMAC over the other fields), S3's presigned
# `X-Amz-Signature` (Amazon S3 API reference, "Authenticating Requests: Using Query Parameters
# (AWS Signature Version 4)"), GCS's `X-Goog-Signature` (V4 signing) and `Signature` (V2, and
# CloudFront's and OSS's signed URLs). Names are matched in any case (gcloud writes
# `x-goog-signature`). The other credential parameters carry a secret word in their names and
# go by the named rule: `X-Amz-Security-Token`, `X-Amz-Credential`, `X-Goog-Credential`,
# `token`, `access_token`. A value ends where the parameter does (`&`, `#`), or at a blank or
# quote, where the URL does.
_URL_SIGNATURE = LazyPattern(
    r"(?i)(?<![^?&;\s\"'])(?P<name>sig|signature|x-amz-signature|x-goog-signature)="
    r"(?P<value>[^&#\s\"']++)"
)


def redact_credential_shapes(text: str) -> str:
    """`text` with every JWT, GitHub or Hugging Face token and URL signature replaced; each
    rule only where what it needs is there (`eyJ`; `_`; `=` after a name ending `g` or `e`)."""
    if "eyJ" in text:
        text = _JWT.sub(REDACTED, text)
    if "_" in text:
        text = _PREFIXED_TOKEN.sub(REDACTED, text)
    if "g=" in text or "e=" in text or "G=" in text or "E=" in text:
        text = _URL_SIGNATURE.sub(_signature_redacted, text)
    return text


def _signature_redacted(found: re.Match[str]) -> str:
    return f"{found['name']}={REDACTED}"

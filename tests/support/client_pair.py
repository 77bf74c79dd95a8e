"""A client certificate and its key, for the tests that only read a kubeconfig's client
certificate (never shown to a server): the kubeconfig's reader refuses a pair Go's crypto/tls
`X509KeyPair` would refuse, so such a test needs a real one. A self-signed EC P-256 certificate
made once with `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days
36500`, valid until 2126; its key protects nothing."""

CLIENT_CERT_PEM = b"""-----BEGIN CERTIFICATE-----
MIIBmDCCAT2gAwIBAgIUJ+sVqlRGyWJ4kCxo8r37Xf5DxA8wCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVdHJ1ZWdyZWVuLXRlc3QtY2xpZW50MCAXDTI2MTIwNzA0MjQx
NloYDzIxMjYxMTEzMDQyNDE2WjAgMR4wHAYDVQQDDBV0cnVlZ3JlZW4tdGVzdC1j
bGllbnQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQuUNZRHqsCg3ESXBTwn73s
M2Ey29fLniKhV/5xrtnnD1WFfrio+n1RATPR2nORsV9dR0CHpctDZ0N9x5pKLFRe
o1MwUTAdBgNVHQ4EFgQUhd3JoG1aHfnjHQ09iKDJb0zLC/gwHwYDVR0jBBgwFoAU
hd3JoG1aHfnjHQ09iKDJb0zLC/gwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
AgNJADBGAiEAlrRBd7q4mY2Ft7/1cXBT1X7s2pp3+1tDdUbDYR/Hj0YCIQCEmdL4
QRjkBks7HJOBttn3s6LNtcOPLwMKDP3gLAhShw==
-----END CERTIFICATE-----
"""
CLIENT_KEY_PEM = b"""-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgtR+Ruxin+JiHLVNT
h3iV0FeN7c5rZjoF8qCrm9evvVGhRANCAAQuUNZRHqsCg3ESXBTwn73sM2Ey29fL
niKhV/5xrtnnD1WFfrio+n1RATPR2nORsV9dR0CHpctDZ0N9x5pKLFRe
-----END PRIVATE KEY-----
"""

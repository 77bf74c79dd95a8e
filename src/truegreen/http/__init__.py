"""HTTP for truegreen: one bounded transport shared by the cluster client and the registry client.

Every request has one deadline covering connect, TLS, headers and body, and every answer a cap
on its size. Nothing above this package opens a socket.
"""

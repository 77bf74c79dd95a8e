"""The checks, one module each. Every check is a pure function of the gathered Environment."""

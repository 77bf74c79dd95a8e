"""What a run a signal stopped left in the cluster: said with the signal, never lost with it."""


class LeftBehind(BaseException):
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped a run that had started something in the cluster it
    could not all remove: `signal` is what the signal raised, `what` says what is left and
    `todo` what removes it (one line each). A BaseException, as the signal is, so that nothing
    on the way up takes it for an error; the command line ends the run as the signal would,
    saying both (cli/output.py `reporting_errors`)."""

    def __init__(self, raised: BaseException, what: str, todo: str) -> None:
        super().__init__(what)
        self.signal = raised
        self.what = what
        self.todo = todo

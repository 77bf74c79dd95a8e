"""What a trial's measurements can find, by name: the codes its findings carry.

Apart from truegreen.trial.readback, which reads the measurements, so that doctor's catalogue
can word every outcome without loading the reader: a run without `--trial` reads nothing back.
"""

from enum import StrEnum


class Level(StrEnum):
    """How a measurement reads for training."""

    OK = "ok"
    WARNING = "warning"
    FAIL = "fail"
    UNKNOWN = "unknown"


class Outcome(StrEnum):
    """What one measurement of the trial found."""

    IMAGE_PULLED = "image-pulled"
    IMAGE_PRESENT = "image-present"
    IMAGE_PULL_SLOW = "image-pull-slow"
    IMAGE_PULL_FAILED = "image-pull-failed"
    STILL_PULLING = "still-pulling"
    NOT_PLACED = "not-placed"
    WAITED_FOR_QUEUE = "waited-for-queue"
    HELD_BACK = "held-back"
    START_RETRIED = "start-retried"
    """A step of the start failed and went through on the kubelet's next try: a note, kept
    with its first words, never a failure."""
    NOT_STARTED = "container-not-started"
    CONTAINER_ENDED = "container-ended"
    READ_ONLY_FOR_TRIAL = "read-only-for-trial"
    NO_PROBE_LINE = "no-probe-line"
    NOT_MEASURED = "not-measured"
    NOT_TOGETHER = "not-together"
    GPUS_SEEN = "gpus-seen"
    NO_GPU_LIBRARY = "no-gpu-library"
    NO_GPU = "no-gpu"
    FEWER_GPUS = "fewer-gpus"
    DRIVER_TOO_OLD = "driver-too-old"
    GPU_LIBRARY_FAILED = "gpu-library-failed"
    SHM_ENOUGH = "shm-enough"
    SHM_TOO_SMALL = "shm-too-small"
    SHM_DEFAULT_SIZE = "shm-default-size"
    """At the container runtimes' 64 MiB default or less, where the job states no need."""
    SHM_MISSING = "shm-missing"
    SPACE_RAN_OUT = "space-ran-out"
    BUS_ERROR = "bus-error"
    DATA_READ = "data-read"
    DATA_SLOW = "data-slow"
    DATA_EMPTY = "data-empty"
    DATA_MISSING = "data-missing"
    DATA_UNREADABLE = "data-unreadable"
    WORKERS_REACHED = "workers-reached"
    RANK0_UNREACHABLE = "rank0-unreachable"
    WORKERS_MISSING = "workers-missing"
    COLLECTIVE_OK = "collective-ok"
    DUPLICATE_GPU = "duplicate-gpu"
    COLLECTIVE_TIMED_OUT = "collective-timed-out"
    COLLECTIVE_FAILED = "collective-failed"

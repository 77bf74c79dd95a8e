"""The image-pull check's reason codes and the plain words of each: headline and remedy templates,
filled in with names and plain amounts."""

from typing import Final

from truegreen.doctor.checks.base import Words
from truegreen.doctor.findings import CheckId
from truegreen.doctor.knowledge.image_presence import OwnLogin, Presence, PullSign
from truegreen.plain_words import Wording

OK: Final = "image-pull.ok"
LOGIN_MISSING: Final = "image-pull.login-missing"
LOGIN_WRONG_TYPE: Final = "image-pull.login-wrong-type"
LOGIN_MISSING_SKIPPED: Final = "image-pull.login-missing-skipped"
LOGIN_WRONG_TYPE_SKIPPED: Final = "image-pull.login-wrong-type-skipped"
LOGIN_DAMAGED: Final = "image-pull.login-damaged"
NO_LOGIN_FOR_REGISTRY: Final = "image-pull.no-login-for-registry"
NO_LOGIN_NOT_ASKED: Final = "image-pull.no-login-not-asked"
CANT_READ: Final = "image-pull.cant-read"
IMAGE_MISSING: Final = "image-pull.image-missing"
NO_BUILD_FOR_PLATFORM: Final = "image-pull.no-build-for-platform"
LOGIN_REFUSED: Final = "image-pull.login-refused"
REPOSITORY_NOT_ALLOWED: Final = "image-pull.repository-not-allowed"
LOGIN_NEEDED: Final = "image-pull.login-needed"
IMAGE_UNCHECKED: Final = "image-pull.image-unchecked"
INVALID_NAME: Final = "image-pull.invalid-name"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("Every training image has the registry login it needs.", ""),
    LOGIN_MISSING: Wording(
        "Training images can't be downloaded: the registry login '{name}' doesn't exist.",
        "Create it for {registries} with {command}, or stop referring to it.",
    ),
    LOGIN_WRONG_TYPE: Wording(
        "Training images can't be downloaded: '{name}' is not a registry login.",
        "Delete it with {delete} and create it again with {command}.",
    ),
    LOGIN_MISSING_SKIPPED: Wording(
        "The registry login '{name}' doesn't exist; the machines download the images without it.",
        "Create it for {registries} with {command}, or stop referring to it.",
    ),
    LOGIN_WRONG_TYPE_SKIPPED: Wording(
        "'{name}' is not a registry login; the machines download the images without it.",
        "Stop referring to it as a registry login; if it is meant to be one, delete it with "
        "{delete} and create it again with {command}.",
    ),
    LOGIN_DAMAGED: Wording(
        "Training images can't be downloaded: the registry login '{name}' is damaged.",
        "Delete it with {delete} and create it again with {command}.",
    ),
    NO_LOGIN_FOR_REGISTRY: Wording(
        "Training images from {registry} can't be downloaded: no registry login covers it.",
        "Add a login for {registry} to one of the registry logins in use ({names}), or create "
        "one with {command} and name it in the workload's settings.",
    ),
    NO_LOGIN_NOT_ASKED: Wording(
        "No registry login covers {registry}: the machines will download its training images "
        "without one, which works only if {registry} hands them out to anyone.",
        "Let doctor ask {registry} (it does unless told --no-registry); if it wants a login, "
        "add one for it to one of the registry logins in use ({names}), or create one with "
        "{command}.",
    ),
    CANT_READ: Wording(
        "Couldn't check whether training images can be downloaded: {why}.",
        "{remedy}",
    ),
    IMAGE_MISSING: Wording(
        "The image {image} of {owners} doesn't exist in its registry, so it can't be downloaded.",
        "Push {image} to {registry}, or correct its name or tag in the settings of {owners}.",
    ),
    NO_BUILD_FOR_PLATFORM: Wording(
        "The image {image} of {owners} has no build for the machines' platform {platform} "
        "(its builds: {offered}), so it can't be downloaded there.",
        "Build {image} for {platform} too and push it under the same name, or correct its "
        "name or tag in the settings of {owners}.",
    ),
    LOGIN_REFUSED: Wording(
        "The registry {registry} refuses the registry login {names}, so {image} can't be "
        "downloaded.",
        "Check the user name and password in {names} (they may have expired), then create the "
        "login again with {command}.",
    ),
    REPOSITORY_NOT_ALLOWED: Wording(
        "The registry {registry} accepts the registry login {names} but won't let it download "
        "{image}: the image doesn't exist there, or the login's account may not read it.",
        "Check that {image} exists in {registry} (its name and tag in the settings of "
        "{owners}), and give the account of {names} read access to it there.",
    ),
    LOGIN_NEEDED: Wording(
        "The registry {registry} won't hand out {image} without a login (it doesn't exist "
        "there, or needs a login), and {owners} has no registry login for it.",
        "If the image is private, create a registry login with {command} and name it in the "
        "settings of {owners}; if it should be public, check its name: a registry may answer "
        "this way for an image that doesn't exist.",
    ),
    INVALID_NAME: Wording(
        "The image name '{image}' of {owners} isn't valid, so its programs can't start.",
        "Correct the image name in the settings of {owners}: a registry, a path, then an "
        "optional :tag or @digest (registry.example.com/team/app:1).",
    ),
    IMAGE_UNCHECKED: Wording(
        "Couldn't check whether the image {image} is in its registry: {why}.",
        "{remedy}",
    ),
}
"""Every headline and remedy of the check, by code."""

_SKIP_LOOK_UP = "--no-registry skips this look-up"
REGISTRY_WHY: Final[dict[Presence | OwnLogin, str]] = {
    Presence.UNREACHABLE: "couldn't connect to {registry}",
    Presence.TIMEOUT: "{registry} did not answer in time",
    Presence.SERVER_ERROR: "{registry} answered with an error",
    Presence.RATE_LIMITED: "{registry} is limiting how often it may be asked",
    Presence.GARBLED: "{registry}'s answer could not be understood",
    Presence.TOO_LARGE: "{registry}'s answer was too large to read",
    Presence.INSECURE: "{registry} would have to be asked without encryption",
    Presence.LOGIN_UNUSABLE: "the registry login {names} holds no user name and password, so "
    "the machines download without one, and {registry} wants one",
    Presence.OWN_ADDRESS: "a registry on the machines' own address can't be asked from here",
    Presence.ADDRESS_REFUSED: "{registry} leads to an address doctor never connects to",
    Presence.PRIVATE_ADDRESS: "{registry} is on a private network, which doctor asks only "
    "when told to",
    Presence.NOT_ASKED: "doctor asks about at most {limit} images a run",
    Presence.OUT_OF_TIME: "doctor's time for asking registries ran out in this run",
    Presence.NOT_CAPTURED: "the snapshot doesn't include the registry's answer about it",
    OwnLogin.CLOUD: "the machines log in to {registry} on their own, and doctor can't use "
    "that login",
    OwnLogin.PULLED: "the machines may log in to {registry} on their own (they downloaded "
    "{pulled} from it for a program that sends no registry login), and doctor can't use that "
    "login",
}
"""Why the registry could not say whether an image is there, in plain words (a refusal is
a reason only at a registry whose machines may log in on their own)."""
REGISTRY_REMEDIES: Final[dict[Presence | OwnLogin, str]] = {
    Presence.UNREACHABLE: "Check that this computer reaches {registry} as the machines do, "
    f"then run again; {_SKIP_LOOK_UP}.",
    Presence.TIMEOUT: "Run again, or allow each answer more time with --request-timeout 30; "
    f"{_SKIP_LOOK_UP}.",
    Presence.SERVER_ERROR: f"Run again later; if it stays, check {{registry}}'s status; "
    f"{_SKIP_LOOK_UP}.",
    Presence.RATE_LIMITED: "Run again later; a registry login often raises the limit; "
    f"{_SKIP_LOOK_UP}.",
    Presence.GARBLED: "Check for a proxy between you and {registry} that changes its answers, "
    f"then run again; {_SKIP_LOOK_UP}.",
    Presence.TOO_LARGE: f"Check what {{registry}} serves for {{image}}; {_SKIP_LOOK_UP}.",
    Presence.INSECURE: "If {registry} is meant to be reached without encryption, check the "
    f"image from a machine of the cluster; {_SKIP_LOOK_UP}.",
    Presence.LOGIN_UNUSABLE: "Nothing to do if the image downloads on the machines; "
    f"{_SKIP_LOOK_UP}.",
    Presence.OWN_ADDRESS: "Check the image from a machine of the cluster; if {registry} on "
    "this computer is the one the machines use, name it with --registry-allow {registry}.",
    Presence.PRIVATE_ADDRESS: "If this computer reaches {registry} as the machines do, name "
    "it with --registry-allow {registry}; else check the image from a machine of the cluster.",
    Presence.ADDRESS_REFUSED: "Check the image's registry name in the settings of the "
    f"workload, then check the image from a machine of the cluster; {_SKIP_LOOK_UP}.",
    Presence.NOT_ASKED: "Check the image from a machine of the cluster, or check fewer "
    "images at once.",
    Presence.OUT_OF_TIME: "Run again for fewer namespaces, or allow each answer more time with "
    f"--request-timeout 30; {_SKIP_LOOK_UP}.",
    Presence.NOT_CAPTURED: "Take a new snapshot with {snapshot} and check that one.",
    OwnLogin.CLOUD: f"Nothing to do if the image downloads on the machines; {_SKIP_LOOK_UP}.",
    OwnLogin.PULLED: "Nothing to do if the image downloads on the machines; if it doesn't, "
    f"give the programs that use it a registry login for {{registry}}; {_SKIP_LOOK_UP}.",
}
"""What to do when the registry could not say, per reason."""
PULL_SIGNS: Final[dict[PullSign, str]] = {
    PullSign.EVENT: "the kubelet's Pulled event says it downloaded it",
    PullSign.ALWAYS: "its container pulls it on every start (imagePullPolicy Always) and runs",
}
"""What says the kubelet downloaded an image for a pod naming no login (details only)."""

SAY: Final = Words(CheckId.IMAGE_PULL, WORDS)
"""The check's findings, in these words."""

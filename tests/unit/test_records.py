"""Domain records are msgspec Structs: a `@dataclass` is built at import by compiling six
generated functions (about 2 ms a class on a slow machine: with doctor's ~80 records as
dataclasses, 40 % of its start-up); a Struct is built in C."""

import dataclasses
import importlib
import inspect
import pkgutil

import msgspec

import truegreen


def _classes_of_every_module() -> list[type]:
    found: list[type] = []
    for module_info in pkgutil.walk_packages(truegreen.__path__, "truegreen."):
        if module_info.name == "truegreen.__main__":  # importing it runs the command line
            continue
        module = importlib.import_module(module_info.name)
        found.extend(
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if value.__module__ == module.__name__
        )
    return found


def test_no_truegreen_record_is_a_dataclass() -> None:
    classes = _classes_of_every_module()
    records = [c for c in classes if issubclass(c, msgspec.Struct)]
    assert len(records) >= 100, f"precondition: the records were found ({len(records)})"
    assert [c.__qualname__ for c in classes if dataclasses.is_dataclass(c)] == []


def test_a_proxy_record_never_shows_its_password() -> None:
    from truegreen.http.proxy import parse_proxy_url

    proxy = parse_proxy_url("http://ops:s3cret@proxy.internal:3128")
    assert proxy.password == "s3cret", "precondition: the password was read"
    assert repr(proxy) == ("Proxy(scheme='http', host='proxy.internal', port=3128, username='ops')")

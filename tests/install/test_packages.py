"""The wheel ships every module and every data file, and setuptools has nothing to warn about.

pyproject.toml lists cardarena's packages by hand (the folders are mapped onto
``cardarena.*``). A package folder left off the list is silently missing from a wheel; a data
file in a sub-folder of a package makes setuptools print a page of warnings per folder on the
first install ("Package 'cardarena.clients.web' is absent from the `packages` configuration"),
which a newcomer reads as a broken install.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def folder(package: str) -> Path:
    """The source folder of ``package`` by pyproject's ``package-dir`` mapping."""
    mapping: dict[str, str] = SETUPTOOLS["package-dir"]
    for root in sorted(mapping, key=len, reverse=True):
        if package == root or package.startswith(root + "."):
            rest = package[len(root) :].lstrip(".")
            return ROOT / mapping[root] / Path(*rest.split(".")) if rest else ROOT / mapping[root]
    raise AssertionError(f"{package} is under no package-dir root")


def test_every_module_folder_is_a_listed_package() -> None:
    listed = set(SETUPTOOLS["packages"])
    mapping: dict[str, str] = SETUPTOOLS["package-dir"]
    missing = []
    for root, source in mapping.items():
        for init in (ROOT / source).rglob("__init__.py"):
            if "node_modules" in init.parts:
                continue
            rest = init.parent.relative_to(ROOT / source).parts
            name = ".".join((root, *rest))
            if name not in listed:
                missing.append(name)
    assert not missing, f"module folders a wheel would leave out: {sorted(missing)}"


def test_every_listed_package_exists() -> None:
    for package in SETUPTOOLS["packages"]:
        assert folder(package).is_dir(), f"{package}: no folder {folder(package)}"


def test_package_data_sits_in_its_own_package_and_exists() -> None:
    for package, patterns in SETUPTOOLS["package-data"].items():
        assert package in SETUPTOOLS["packages"], f"data for {package}, which is not listed"
        for pattern in patterns:
            assert "/" not in pattern, (
                f"{package}: {pattern!r} reaches into a sub-folder; list that folder as a"
                " package of its own and give it the pattern"
            )
            assert list(folder(package).glob(pattern)), f"{package}: nothing matches {pattern!r}"

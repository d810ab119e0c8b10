"""The packages whose names load on first use (privnoise.dp, privnoise.sql) export every name of ``__all__``, each
the object its defining module holds, whatever was imported before."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["privnoise.dp", "privnoise.sql"])
def test_every_exported_name_is_the_object_of_its_module(package: str) -> None:
    module = importlib.import_module(package)
    exports = module._EXPORTS
    assert set(module.__all__) <= set(exports) | set(vars(module))
    for name, where in exports.items():
        # "audits": a submodule; "..mechanisms.x": a module written as a relative import from the package
        defining = importlib.import_module(where if where.startswith(".") else f".{where}", package)
        assert getattr(module, name) is getattr(defining, name), name
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_no_submodule_shadows_an_exported_function() -> None:
    # importing a submodule binds its name in the package: no exported name may be a submodule's name
    code = ("import privnoise.dp.audits, privnoise.dp as dp, inspect; "
            "assert inspect.isfunction(dp.audit), type(dp.audit); "
            "import pkgutil; names = {m.name for m in pkgutil.iter_modules(dp.__path__)}; "
            "assert not names & set(dp._EXPORTS), names & set(dp._EXPORTS)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr

"""The type stubs (ember/_ember.pyi) name what the module binds, so editors complete it; the
package metadata (pyproject.toml) names the CMake project's version."""
import ast
import pathlib

import ember
from ember import _ember

STUB = pathlib.Path(ember.__file__).with_name("_ember.pyi")


def stub_names(node):
    names = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign):
            names.add(item.target.id)
    return names


def test_stub_lists_every_tensor_method_and_module_function():
    tree = ast.parse(STUB.read_text())
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    bound = {n for n in vars(_ember.Tensor) if not n.startswith("_") or
             (n.startswith("__") and n not in ("__init__", "__doc__", "__module__", "__hash__"))}
    bound -= {n for n in bound if n.startswith("__") and n in vars(object)
              and n not in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")}
    assert bound - stub_names(classes["Tensor"]) == set()
    public = {n for n in vars(_ember) if not n.startswith("_")} - {"Tensor", "dtype"}
    assert public - stub_names(tree) == set()


def test_pyproject_version_is_the_cmake_projects():
    import re
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    cmake = re.search(r"project\(ember [^)]*VERSION ([0-9.]+)", (root / "CMakeLists.txt").read_text())
    with open(root / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["version"] == cmake.group(1)

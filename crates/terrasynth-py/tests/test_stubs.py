"""The type stubs (__init__.pyi) describe the package as it is: same public names, same
parameters in the same order."""

import ast
import inspect
import os

import terrasynth


def stub_tree():
    path = os.path.join(os.path.dirname(terrasynth.__file__), "__init__.pyi")
    return ast.parse(open(path).read())


def params(fn: ast.FunctionDef):
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return [n for n in names if n != "self"]


def runtime_params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        out.append("**" + p.name if p.kind == p.VAR_KEYWORD else p.name)
    return out


def test_stub_names_and_signatures_match():
    tree = stub_tree()
    top = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    public = set(terrasynth.__all__) - {"__version__"}
    assert set(top) == public
    for name, node in top.items():
        obj = getattr(terrasynth, name)
        assert obj.__doc__, f"{name} has a docstring"
        if isinstance(node, ast.FunctionDef):
            assert params(node) == runtime_params(obj), name
            continue
        for member in node.body:
            if isinstance(member, ast.FunctionDef):
                attr = inspect.getattr_static(obj, member.name)
                if isinstance(attr, property):
                    continue
                fn = getattr(obj, member.name)
                assert params(member) == runtime_params(fn), f"{name}.{member.name}"

"""The C part of oltplab (the rest is declared in pyproject.toml)."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("oltplab._native", ["src/oltplab/_native.c"],
              extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wno-missing-braces"],
              libraries=["dl", "m"]),
])

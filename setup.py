"""The C part of oltplab (the rest is declared in pyproject.toml)."""

from glob import glob

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("oltplab._native", sorted(glob("src/oltplab/native/*/*.c")),
              depends=glob("src/oltplab/native/*/*.h"),
              include_dirs=["src/oltplab/native/loop"],
              extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wno-missing-braces"],
              libraries=["dl", "m"]),
])

"""The C part of oltplab (the rest is declared in pyproject.toml)."""

from glob import glob

from setuptools import Extension, setup

# native/loop: the shared loop; native/<workload>: each workload's part; native/workloads.c:
# the table of the compiled workloads
setup(ext_modules=[
    Extension("oltplab._native",
              sorted(glob("src/oltplab/native/*.c") + glob("src/oltplab/native/*/*.c")),
              depends=glob("src/oltplab/native/*/*.h"),
              include_dirs=sorted(glob("src/oltplab/native/*/")),
              extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wno-missing-braces"],
              libraries=["dl", "m"]),
])

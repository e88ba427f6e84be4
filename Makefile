# Two entry points: `make run` (quickstart on the embedded PostgreSQL) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEB_PACKAGES := fio chromium gcc mariadb-server-core mariadb-client-core mariadb-backup \
                mariadb-client zstd libmariadb-dev btrfs-progs xfsprogs duperemove bpftrace \
                openssh-server
STAMP  := $(VENV)/.installed
# the suite runs in this many pytest processes (each starts its own test servers), each test
# file whole in one of them (a file's tests may build on each other); 1 runs it in one. Four
# on 2 cores: the tests often wait (servers starting, runs of fixed length, file systems
# made), so a fourth process fills the cores' idle moments: the suite took 17:44-18:02 with
# four (1863 tests), 20:35 with three (1858). --no-loadscope-reorder keeps the order
# tests/conftest.py gives the files (the longest first) instead of xdist's (the most tests
# first)
TEST_WORKERS ?= 4

.PHONY: run test install deb-packages bench clean

run: install
	$(BIN)/oltplab quickstart

test: install
	$(BIN)/python -m pytest -q --durations=25 $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

install: deb-packages $(STAMP)

$(STAMP): pyproject.toml setup.py $(wildcard src/oltplab/native/*.c src/oltplab/native/*/*.c src/oltplab/native/*/*.h)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# Debian packages, installed only when missing (apt-get update runs once, first); the C part
# of the package needs a compiler and Python's headers. Their services are not started
# (policy-rc.d): the tests start their own servers, and sshd (openssh-server, for the cluster's
# ssh tests) is disabled again where systemd would start it at boot, so that nothing new
# listens on a public address.
deb-packages:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	$(PYTHON) -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
	  || missing="$$missing python3-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  norc=""; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' | $$SUDO tee /usr/sbin/policy-rc.d >/dev/null; \
	    $$SUDO chmod 755 /usr/sbin/policy-rc.d; norc=1; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	  rc=$$?; [ -z "$$norc" ] || $$SUDO rm -f /usr/sbin/policy-rc.d; \
	  case "$$missing" in *openssh-server*) if [ -d /run/systemd/system ]; then \
	    $$SUDO systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true; fi;; esac; \
	  exit $$rc; \
	fi

bench: install
	$(BIN)/python bench/driver_efficiency.py
	$(BIN)/python bench/build_speed.py

clean:
	rm -rf $(VENV) build src/*.egg-info src/oltplab/*.so

"""The command lines the cluster starts: ssh in batch mode with the host's key checked, and
workers without a nanny, with their host's resources, serving nothing beyond the loopback."""

from __future__ import annotations

from oltplab.cluster.hosts import HostSpec, SshSpec
from oltplab.cluster.launch import DASK_ENV, remote_dir, ssh_argv, worker_argv


def _after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_ssh_uses_keys_only_and_checks_the_host_key():
    argv = ssh_argv(SshSpec("10.0.0.2", "bench", "/k/id", 2222, "/k/known"), "true")
    options = [argv[i + 1] for i, a in enumerate(argv) if a == "-o"]
    assert {"BatchMode=yes", "StrictHostKeyChecking=yes", "IdentitiesOnly=yes",
            "UserKnownHostsFile=/k/known"} <= set(options)
    assert (_after(argv, "-i"), _after(argv, "-p"), _after(argv, "-l")) == ("/k/id", "2222",
                                                                            "bench")
    assert argv[-3:] == ["--", "10.0.0.2", "true"]


def test_a_worker_has_no_nanny_and_its_hosts_resources():
    host = HostSpec("h1", "127.0.0.2", ("fast",), ("sdb",), python="/py")
    argv = worker_argv(host, "tls://127.0.0.1:9", "ca.pem", "w.pem", "w-key.pem", "/d")
    assert argv[:4] == ["/py", "-m", "distributed.cli.dask_worker", "tls://127.0.0.1:9"]
    assert "--no-nanny" in argv and "--no-dashboard" in argv
    assert _after(argv, "--name") == "h1" and _after(argv, "--nthreads") == "2"
    assert _after(argv, "--resources") == "host-h1=1 datastore-fast=1 device-sdb=1"
    assert _after(argv, "--host") == "127.0.0.2"
    assert _after(argv, "--dashboard-address").startswith("127.0.0.1:")
    assert DASK_ENV["DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING"] == "False"
    assert DASK_ENV["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] == "0"


def test_a_hosts_folder_there():
    far = HostSpec("far", "10.0.0.2", ssh=SshSpec("10.0.0.2"))
    assert remote_dir(far, "abcd1234") == "oltplab-cluster/abcd1234-far"
    assert remote_dir(HostSpec("far", "10.0.0.2", dir="~/w", ssh=SshSpec("x")), "id") == "w"

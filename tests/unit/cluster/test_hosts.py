"""hosts.toml: what a host offers becomes its worker's resources; every mistake is one
UsageError line that names the file and the key."""

from __future__ import annotations

import pytest

from oltplab.cluster.hosts import HostSpec, load_hosts, parse_hosts
from oltplab.errors import UsageError

TWO_HOSTS = """
[[hosts]]
name = "h1"
address = "127.0.0.1"
datastores = ["fast", "slow"]
devices = ["nvme0n1"]

[[hosts]]
name = "h2"
address = "127.0.0.2"
"""


def _load(tmp_path, text: str):
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return load_hosts(path)


def test_a_host_offers_itself_its_datastores_and_its_devices(tmp_path):
    spec = _load(tmp_path, TWO_HOSTS)
    assert spec.scheduler_address == "127.0.0.1" and spec.scheduler_port == 0
    h1, h2 = spec.hosts
    assert h1.resources == {"host-h1": 1, "datastore-fast": 1, "datastore-slow": 1,
                            "device-nvme0n1": 1}
    assert h2.resources == {"host-h2": 1} and h2.ssh is None
    assert spec.host("h2") is h2


def test_a_host_over_ssh_keeps_its_paths_absolute(tmp_path):
    (tmp_path / "id").write_text("key")
    spec = _load(tmp_path, """
[[hosts]]
name = "far"
address = "127.0.0.3"
dir = "/tmp/far"
ssh = { address = "127.0.0.1", user = "bench", key = "id", port = 2222 }
""")
    far = spec.hosts[0]
    assert far.ssh.key == str(tmp_path / "id") and far.ssh.port == 2222
    assert far.ssh.target == "bench@127.0.0.1" and far.dir == "/tmp/far"


def test_a_host_spec_survives_the_state_file():
    host = HostSpec("h1", "127.0.0.1", ("fast",), ("sda",))
    assert HostSpec.from_dict(host.as_dict()) == host


@pytest.mark.parametrize("text, needle", [
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\ncolour = 'red'\n",
     "hosts[1].colour: unknown key"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\n[[hosts]]\nname = 'h1'\n"
     "address = '127.0.0.2'\n", "hosts[2].name: 'h1' names two hosts"),
    ("[[hosts]]\nname = 'h1'\naddress = '0.0.0.0'\n", "every interface"),
    ("[[hosts]]\nname = 'h1'\naddress = '300.1.1.1'\n", "not an IP address or a host name"),
    ("[[hosts]]\nname = 'h1'\naddress = 'bad host'\n", "not an IP address or a host name"),
    ("[[hosts]]\nname = 'h 1'\naddress = '127.0.0.1'\n", "hosts[1].name"),
    ("[[hosts]]\nname = 'h1'\n", "hosts.h1.address: missing"),
    ("[[hosts]]\nname = 'h1'\naddress = '192.0.2.7'\n", "not an address of this machine"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\ndatastores = 'fast'\n",
     "hosts.h1.datastores: give a list"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\ndatastores = ['a']\n"
     "[[hosts]]\nname = 'h2'\naddress = '127.0.0.2'\ndatastores = ['a']\n",
     "datastore 'a' is on h1 and h2"),
    ("[scheduler]\nport = 70000\n[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\n",
     "scheduler.port"),
    ("[scheduler]\nhost = 'x'\n[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\n",
     "scheduler.host: unknown key"),
    ("[[hosts]]\nname = 'h1'\naddress = '192.0.2.7'\nssh = { user = 'b' }\n",
     "the scheduler listens on 127.0.0.1 only"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\nssh = { key = 'nokey' }\n",
     "hosts.h1.ssh.key: nokey: no such file"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\nssh = { user = 'a b' }\n",
     "hosts.h1.ssh.user"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\nssh = { password = 'x' }\n",
     "hosts.h1.ssh.password: unknown key"),
    ("hosts = []\n", "name at least one host"),
    ("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\n[oops]\n", "oops: unknown key"),
])
def test_a_mistake_is_one_line_naming_the_file_and_the_key(tmp_path, text, needle):
    with pytest.raises(UsageError) as e:
        _load(tmp_path, text)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "hosts.toml") + ": ")
    assert needle in message


def test_a_missing_or_broken_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no such hosts file"):
        load_hosts(tmp_path / "none.toml")
    with pytest.raises(UsageError, match="not valid TOML"):
        _load(tmp_path, "[[hosts]\n")


def test_a_scheduler_on_another_address_lets_hosts_elsewhere_reach_it(tmp_path):
    spec = parse_hosts({"scheduler": {"address": "192.0.2.1", "port": 8786},
                        "hosts": [{"name": "far", "address": "192.0.2.7",
                                   "ssh": {"user": "bench"}}]}, tmp_path / "hosts.toml")
    assert spec.scheduler_port == 8786 and spec.hosts[0].ssh.address == "192.0.2.7"

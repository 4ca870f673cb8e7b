"""Two or three "hosts" inside one machine for the cross-host tests (issue 39): each host is a network namespace
with its own address on one private subnet, joined through a bridge in a namespace of its own, so traffic between
them crosses veth links and never leaves the namespaces the test made. Needs root (ip netns); `unavailable()` says
why not where it cannot work, for the test to skip with that reason.

Open MPI starts its daemons on the other hosts through `netns_agent.sh` (its rsh agent: `agent HOST COMMAND...`
runs COMMAND inside HOST's namespace); mpirun itself runs inside the first host.
"""
import os
import pathlib
import shutil
import subprocess

SUBNET = "10.213.0"
AGENT = pathlib.Path(__file__).resolve().parent / "netns_agent.sh"


def _ip(*args, check=True):
    return subprocess.run(["ip", *map(str, args)], capture_output=True, text=True, check=check)


def unavailable():
    """Why namespaces cannot be made here (None when they can)."""
    if not shutil.which("ip"):
        return "ip (iproute2) not installed: scripts/setup.sh installs it"
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN"
    probe = f"liteprobe{os.getpid()}"
    r = _ip("netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"ip netns add failed: {r.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


class Hosts:
    """`with Hosts(2) as hosts:` hosts.address(i), hosts.run(i, argv, ...), hosts.popen(i, argv, ...)."""

    def __init__(self, count):
        self.count = count
        tag = f"lite{os.getpid()}"
        self.bridge_ns = f"{tag}br"
        self.names = [f"{tag}h{i}" for i in range(count)]

    def address(self, i):
        return f"{SUBNET}.{i + 1}"

    def __enter__(self):
        try:
            _ip("netns", "add", self.bridge_ns)
            _ip("-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.bridge_ns, "link", "set", "br0", "up")
            for i, ns in enumerate(self.names):
                _ip("netns", "add", ns)
                _ip("-n", ns, "link", "set", "lo", "up")
                # eth0 inside the host, port<i> on the bridge
                _ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"port{i}", "netns", self.bridge_ns)
                _ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", self.bridge_ns, "link", "set", f"port{i}", "master", "br0")
                _ip("-n", self.bridge_ns, "link", "set", f"port{i}", "up")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for ns in [*self.names, self.bridge_ns]:
            _ip("netns", "del", ns, check=False)
            shutil.rmtree(f"/tmp/{ns}.ompi", ignore_errors=True)  # the agent's session folders

    def env(self, extra=None):
        """The environment for commands run in a host: the agent's map of addresses to namespaces."""
        env = dict(os.environ)
        env["LITE_NETNS_MAP"] = " ".join(f"{self.address(i)}={ns}" for i, ns in enumerate(self.names))
        env.update(extra or {})
        return env

    def argv(self, i, argv, private=None):
        """argv run in host i. With `private` (a folder), the host also gets a host name of its own (its
        namespace's) and sees an empty folder there: a path the other hosts have and this one lacks, as
        netns_agent.sh does for LITE_NETNS_PRIVATE. The command keeps its process id (exec all the way)."""
        argv = [str(a) for a in argv]
        if private is None:
            return ["ip", "netns", "exec", self.names[i], *argv]
        script = f'hostname {self.names[i]} && mount -t tmpfs lite-private "$0" && exec "$@"'
        return ["ip", "netns", "exec", self.names[i], "unshare", "--mount", "--uts", "sh", "-c", script,
                str(private), *argv]

    def run(self, i, argv, env=None, timeout=600, private=None, **kwargs):
        return subprocess.run(self.argv(i, argv, private), capture_output=True, text=True, env=self.env(env),
                              timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)

    def popen(self, i, argv, env=None, private=None, **kwargs):
        return subprocess.Popen(self.argv(i, argv, private), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env(env), stdin=subprocess.DEVNULL, **kwargs)

    def cut(self, i):
        """Host i's link goes down, as a host that lost power or its network: no packet in or out."""
        _ip("-n", self.names[i], "link", "set", "eth0", "down")

    def hostfile(self, path, slots=1):
        path.write_text("".join(f"{self.address(i)} slots={slots}\n" for i in range(self.count)))
        return path

    def mpirun(self, hostfile, ranks):
        """mpirun's argv for a job over these hosts, started from host 0: daemons through the agent, every byte
        between ranks over TCP on the hosts' subnet (no shared memory: the ranks are on different hosts). Not
        bound to cores: each host's daemon would bind its first rank to core 0, and these hosts share one
        machine's cores, so every host's rank would run on the same core."""
        subnet = f"{SUBNET}.0/24"
        return [shutil.which("mpirun"), "--allow-run-as-root", "--oversubscribe", "--hostfile", str(hostfile),
                "-n", str(ranks), "--bind-to", "none", "--mca", "plm_rsh_agent", str(AGENT), "--mca", "btl", "self,tcp",
                "--mca", "btl_tcp_if_include", subnet, "--mca", "oob_tcp_if_include", subnet]

#!/bin/sh
# Open MPI's rsh agent for the cross-host tests (netns_hosts.py): `netns_agent.sh HOST COMMAND...` runs COMMAND
# inside the network namespace of HOST, looked up in LITE_NETNS_MAP ("ADDRESS=NAMESPACE ..."), as ssh would run it
# on that host (one shell command line). A host named in LITE_NETNS_PRIVATE ("ADDRESS=FOLDER ...") also gets a
# file system view and a host name of its own: FOLDER is an empty tmpfs there (a path that exists on the other
# hosts only) and the host is called by its namespace's name.
host=$1
shift
for pair in $LITE_NETNS_MAP; do
  if [ "${pair%%=*}" = "$host" ]; then
    namespace=${pair#*=}
    for private in $LITE_NETNS_PRIVATE; do
      if [ "${private%%=*}" = "$host" ]; then
        exec ip netns exec "$namespace" unshare --mount --uts sh -c \
          "hostname $namespace && mount -t tmpfs lite-private '${private#*=}' && $*"
      fi
    done
    exec ip netns exec "$namespace" sh -c "$*"
  fi
done
echo "netns_agent.sh: no namespace for host $host in LITE_NETNS_MAP" >&2
exit 255

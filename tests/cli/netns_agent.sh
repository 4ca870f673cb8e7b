#!/bin/sh
# Open MPI's rsh agent for the cross-host tests (netns_hosts.py): `netns_agent.sh HOST COMMAND...` runs COMMAND
# inside the network namespace of HOST, looked up in LITE_NETNS_MAP ("ADDRESS=NAMESPACE ..."), as ssh would run it
# on that host (one shell command line).
host=$1
shift
for pair in $LITE_NETNS_MAP; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec ip netns exec "${pair#*=}" sh -c "$*"
  fi
done
echo "netns_agent.sh: no namespace for host $host in LITE_NETNS_MAP" >&2
exit 255

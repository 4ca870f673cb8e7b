#!/bin/sh
# Open MPI's rsh agent for the cross-host tests (netns_hosts.py): `netns_agent.sh HOST COMMAND...` runs COMMAND
# inside the network namespace of HOST, looked up in LITE_NETNS_MAP ("ADDRESS=NAMESPACE ..."), as ssh would run it
# on that host (one shell command line). A host named in LITE_NETNS_PRIVATE ("ADDRESS=FOLDER ...") also gets a
# file system view and a host name of its own: FOLDER is an empty tmpfs there (a path that exists on the other
# hosts only) and the host is called by its namespace's name.
# Every host's daemon keeps its Open MPI session directory in a folder of its own (/tmp/NAMESPACE.ompi, which
# Hosts removes), as separate machines would: hosts that share /tmp and a host name raced creating one ("File
# exists", session_dir.c), failing a job now and then.
host=$1
shift
for pair in $LITE_NETNS_MAP; do
  if [ "${pair%%=*}" = "$host" ]; then
    namespace=${pair#*=}
    OMPI_MCA_orte_tmpdir_base=/tmp/$namespace.ompi
    export OMPI_MCA_orte_tmpdir_base
    mkdir -p "$OMPI_MCA_orte_tmpdir_base"
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
